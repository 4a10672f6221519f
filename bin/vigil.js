#!/usr/bin/env -S node --heap-growing-percent=20 --max-semi-space-size=2
// These V8 flags keep the heap near what the service really uses (idle RSS about 110 MB instead of
// about 180 MB) at no measurable cost to the API's throughput; a worker running 50 tests at once
// spends more CPU on collections with them (0.87 against 0.61 ms a run on the runner benchmark).
// `npm start` passes the same ones (see bench/README.md).
import { main } from '../dist/cli/index.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
