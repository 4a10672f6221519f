#!/usr/bin/env -S node --heap-growing-percent=20 --max-semi-space-size=8
// These V8 flags keep the heap near what the service really uses (an idle server settles near
// 100 MB of RSS instead of about 180 MB). The young generation may grow to 8 MB a half: with 2 MB,
// batches of captured traffic in flight outlived it and were copied and promoted, which cost a
// third of the CPU of message ingest; at rest V8 gives the space back. `npm start` passes the same
// ones (see bench/README.md).
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
