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
 * Splits `[NAME=value …] node [args…]` (the words of a command line, from the first one that may
 * be an assignment): the variables set and node's arguments. `what` names the line in the error
 * thrown when it is not of that form, since a benchmark could not follow it.
 */
function nodeCommand(
  words: readonly string[],
  what: string,
): { env: Record<string, string>; args: string[] } {
  const env: Record<string, string> = {};
  let at = 0;
  for (let match = ASSIGNMENT.exec(words[at] ?? ''); match; match = ASSIGNMENT.exec(words[++at] ?? ''))
    env[match[1]!] = match[2]!;
  if (words[at] !== 'node')
    throw new Error(`${what} runs "${words[at]}", not node; the benchmark cannot follow it`);
  return { env, args: words.slice(at + 1) };
}

/**
 * Reads package.json's `start` script so a benchmark starts Vigil exactly as `npm start` does. The
 * script is `[NAME=value …] node [flags…] script [args…]`.
 */
export function npmStart(root: string): NpmStart {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const { env, args } = nodeCommand(pkg.scripts.start.trim().split(/\s+/), 'npm start');
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
  const [interpreter, option, ...words] = shebang.split(/\s+/).filter(Boolean);
  if (interpreter !== '#!/usr/bin/env' || option !== '-S')
    throw new Error('bin/vigil.js does not start with a #!/usr/bin/env -S line');
  const { env, args } = nodeCommand(words, 'the #! line of bin/vigil.js');
  return { env, flags: args };
}
