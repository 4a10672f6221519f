/**
 * A test as a bash script: one curl command per request step, in order. `{{name}}` becomes the
 * shell variable `${name}` (characters a shell name cannot hold become `_`), given a default from
 * the default environment's initial variables unless it is already set in the environment.
 * Assertions, scripts and variables extracted from responses are not run. Pure.
 */
import { VARIABLE_NAME_PATTERN } from '../../domain/assertions.js';
import { isTemplateFunction } from '../../domain/templates.js';
import type { TestExport } from '../test-transfer.js';
import { defaultVariables, type ExportedRequest, formPairs, requestsOf } from './requests.js';

const NAME = new RegExp(VARIABLE_NAME_PATTERN);
const TEMPLATE = /\{\{\s*(.*?)\s*\}\}/g;

export function curlScript(test: TestExport): string {
  const { requests, leftOut } = requestsOf(test.steps);
  const defaults = defaultVariables(test);
  const used = new Set<string>();
  const commands = requests.map((request) => command(request, used));
  const extracted = new Set(requests.flatMap((r) => r.step.variables.map((v) => v.name)));
  const lines = [
    '#!/usr/bin/env bash',
    `# ${oneLine(test.name)}: exported from Vigil, one curl command per request step.`,
    "# Variables take their default from the test's default environment; set one in the",
    '# environment to override it (base_url=https://… ./script.sh). Assertions and scripts',
    '# are not run, and values extracted from responses must be given.',
    ...leftOut.map((note) => `# Not exported: ${oneLine(note)}`),
    'set -euo pipefail',
    '',
  ];
  for (const name of [...used].sort()) {
    const shell = shellName(name);
    const fallback = defaults[name];
    if (fallback !== undefined) lines.push(`[ -n "\${${shell}+set}" ] || ${shell}=${single(fallback)}`);
    else {
      const why = extracted.has(name) ? 'set by a step of the test from its response' : 'no default';
      lines.push(`[ -n "\${${shell}+set}" ] || ${shell}=''  # ${why}`);
    }
  }
  return `${[...lines, '', ...commands].join('\n')}\n`;
}

function command({ step, number, condition }: ExportedRequest, used: Set<string>): string {
  const text = (value: string) => double(value, used);
  const parts = [`curl -sS -X ${text(step.method)} ${text(step.url)}`];
  for (const [name, values] of Object.entries(step.headers)) {
    for (const value of values) parts.push(`-H ${text(`${name}: ${value}`)}`);
  }
  if (step.auth.auth_type === 'basic')
    parts.push(`-u ${text(`${step.auth.username}:${step.auth.password}`)}`);
  if (step.body !== '') parts.push(`--data-raw ${text(step.body)}`);
  else
    for (const [name, value] of formPairs(step.form))
      parts.push(`--data-urlencode ${text(`${name}=${value}`)}`);
  const comments = [
    `# ${number}. ${oneLine(step.note || `${step.method} ${step.url}`)}`,
    ...(condition ? [`# Runs in Vigil only when ${oneLine(condition)}.`] : []),
    ...(step.auth.auth_type === 'oauth_1' ? ['# OAuth 1.0a signing is not exported.'] : []),
  ];
  return `${comments.join('\n')}\n${parts.join(' \\\n  ')}\n`;
}

/** A double-quoted shell word: `{{name}}` as `${name}`, everything else literal. */
function double(value: string, used: Set<string>): string {
  let out = '';
  let last = 0;
  for (const match of value.matchAll(TEMPLATE)) {
    out += escapeDouble(value.slice(last, match.index));
    const name = match[1]!;
    if (NAME.test(name) && !isTemplateFunction(name)) {
      used.add(name);
      out += `\${${shellName(name)}}`;
    } else {
      // A template function ({{timestamp}}, {{uuid}}…) is left as written: the shell does not evaluate it.
      out += escapeDouble(match[0]);
    }
    last = match.index + match[0].length;
  }
  out += escapeDouble(value.slice(last));
  return `"${out}"`;
}

function escapeDouble(text: string): string {
  return text.replace(/[\\"$`]/g, (ch) => `\\${ch}`);
}

function single(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A shell variable name: letters, digits and `_`, not starting with a digit. */
export function shellName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(safe) ? `_${safe}` : safe;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
