import fs from 'node:fs';
import path from 'node:path';

/** What package.json's `start` script runs: the environment it sets, and node's arguments. */
export interface NpmStart {
  /** Variables set before the command (`NAME=value node …`). */
  env: Record<string, string>;
  /** node's arguments: its flags, the script and the script's arguments. */
  args: string[];
  /** node's flags alone (those before the script). */
  flags: string[];
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

/**
 * Reads package.json's `start` script so a benchmark starts Vigil exactly as `npm start` does. The
 * script is `[NAME=value …] node [flags…] script [args…]`; anything else throws, since the
 * benchmark could not follow it.
 */
export function npmStart(root: string): NpmStart {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let at = 0;
  for (let match = ASSIGNMENT.exec(words[at] ?? ''); match; match = ASSIGNMENT.exec(words[++at] ?? ''))
    env[match[1]!] = match[2]!;
  if (words[at] !== 'node')
    throw new Error(`npm start runs "${words[at]}", not node; the benchmark cannot follow it`);
  const args = words.slice(at + 1);
  const script = args.findIndex((word) => !word.startsWith('-'));
  return { env, args, flags: script === -1 ? args : args.slice(0, script) };
}

/** The command as the start script writes it, for a benchmark's log and report. */
export function startCommand(start: Pick<NpmStart, 'env' | 'args'>): string {
  const assignments = Object.entries(start.env).map(([name, value]) => `${name}=${value}`);
  return [...assignments, 'node', ...start.args].join(' ');
}

/**
 * What the `vigil` command's `#!` line (`#!/usr/bin/env -S [NAME=value …] node [flags…]`) sets and
 * passes: `vigil worker`, `vigil run` and `vigil agent` run so.
 */
export function vigilCommand(root: string): { env: Record<string, string>; flags: string[] } {
  const shebang = fs.readFileSync(path.join(root, 'bin/vigil.js'), 'utf8').split('\n', 1)[0] ?? '';
  const words = shebang.split(/\s+/).filter(Boolean);
  const node = words.indexOf('node');
  if (!shebang.startsWith('#!') || node < 0)
    throw new Error('bin/vigil.js does not start node with a #! line');
  const env: Record<string, string> = {};
  for (const word of words.slice(0, node)) {
    const match = ASSIGNMENT.exec(word);
    if (match) env[match[1]!] = match[2]!;
  }
  return { env, flags: words.slice(node + 1) };
}
