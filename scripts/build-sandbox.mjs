#!/usr/bin/env node
// Builds the script sandbox prelude: Chai (its assert interface) and src/runner/sandbox/prelude.ts
// bundled into one plain script that QuickJS evaluates once per warm context. Written to
// dist/sandbox/prelude.js, where both dist/ and the tsx-run sources in src/ look for it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outFile = path.join(root, 'dist', 'sandbox', 'prelude.js');

// Chai creates an EventTarget for plugin events; QuickJS has none, and nothing listens inside the
// sandbox, so a module-local stand-in is injected in place of the global.
const eventShim = `
export class Event { constructor(type) { this.type = String(type); } }
export class EventTarget { addEventListener() {} removeEventListener() {} dispatchEvent() { return true; } }
`;

const shared = {
  bundle: true,
  format: 'iife',
  platform: 'neutral',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
};

const chai = await esbuild.build({
  ...shared,
  stdin: {
    contents:
      "import { assert, AssertionError, Assertion, config } from 'chai';\n" +
      // Scripts get the assert interface only, whose chains are Chai's own: the Proxy that catches
      // misspelt chain words guards nothing a script writes and makes every assertion several
      // times slower in QuickJS.
      'config.useProxy = false;\n' +
      'globalThis.__vigilChai = { assert, AssertionError, Assertion };\n',
    resolveDir: root,
    sourcefile: 'chai-entry.js',
    loader: 'js',
  },
  inject: ['vigil:event-shim'],
  plugins: [
    {
      name: 'event-shim',
      setup(build) {
        build.onResolve({ filter: /^vigil:event-shim$/ }, () => ({ path: 'event-shim', namespace: 'vigil' }));
        build.onLoad({ filter: /.*/, namespace: 'vigil' }, () => ({ contents: eventShim, loader: 'js' }));
      },
    },
  ],
});

const prelude = await esbuild.build({
  ...shared,
  entryPoints: [path.join(root, 'src', 'runner', 'sandbox', 'prelude.ts')],
});

const text = `${chai.outputFiles[0].text}\n${prelude.outputFiles[0].text}`;
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, text);
console.log(`sandbox prelude: ${path.relative(root, outFile)} (${Math.round(text.length / 1024)} KiB)`);
