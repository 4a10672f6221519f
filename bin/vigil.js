#!/usr/bin/env -S node --heap-growing-percent=20 --max-semi-space-size=2
// These V8 flags keep the heap near what the service really uses (idle RSS about 110 MB instead of
// about 180 MB) and do not cost throughput; `npm start` passes the same ones (see bench/README.md).
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
