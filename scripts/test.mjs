#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's test runner (TypeScript through tsx), or the files given.
// Fault-injection tests (test/faults/) stop databases and fill disks: they run alone, one file at a
// time, in a second pass after the others. The closing lines sum up both passes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function collect(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return collect(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const FAULTS = `test${path.sep}faults${path.sep}`;
const args = process.argv.slice(2);
const files = args.length > 0 ? args : collect('test').sort();
const isFault = (file) => path.normalize(file).includes(FAULTS);
const passes = [
  { files: files.filter((f) => !isFault(f)), concurrency: 2 },
  { files: files.filter(isFault), concurrency: 1 },
].filter((pass) => pass.files.length > 0);

/** Runs one pass, echoing its output; answers its exit code and the totals of its closing lines. */
function run({ files: chosen, concurrency }) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...chosen],
      { stdio: ['inherit', 'pipe', 'inherit'] },
    );
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString()).slice(-4_000);
    });
    child.on('close', (code) => {
      const totals = {};
      for (const match of tail.matchAll(/^ℹ (\w+) ([\d.]+)$/gm)) totals[match[1]] = Number(match[2]);
      resolve({ code: code ?? 1, totals });
    });
  });
}

const results = [];
for (const pass of passes) results.push(await run(pass));
if (results.length > 1) {
  // Both passes in the runner's own closing format.
  const sum = {};
  for (const { totals } of results)
    for (const [name, value] of Object.entries(totals)) sum[name] = (sum[name] ?? 0) + value;
  process.stdout.write(`\nAll ${files.length} test files, fault-injection tests last:\n`);
  for (const [name, value] of Object.entries(sum))
    process.stdout.write(`ℹ ${name} ${name === 'duration_ms' ? value.toFixed(3) : value}\n`);
}
process.exit(results.every((r) => r.code === 0) ? 0 : results.find((r) => r.code !== 0).code);
