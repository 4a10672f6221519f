#!/usr/bin/env node
// Writes .gz and .br copies of the dashboard's text assets next to them, so the server can send them
// precompressed (@fastify/static `preCompressed`) without compressing on every request.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const dir = path.resolve(process.env.DASHBOARD_OUT_DIR ?? 'dist/dashboard');
const TEXT = /\.(js|css|html|svg|json)$/;

function walk(folder) {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    return entry.isDirectory() ? walk(full) : TEXT.test(entry.name) ? [full] : [];
  });
}

let before = 0;
let after = 0;
for (const file of walk(dir)) {
  const data = fs.readFileSync(file);
  const gzip = zlib.gzipSync(data, { level: 9 });
  const brotli = zlib.brotliCompressSync(data, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  fs.writeFileSync(`${file}.gz`, gzip);
  fs.writeFileSync(`${file}.br`, brotli);
  before += data.length;
  after += brotli.length;
}
console.log(
  `dashboard: ${(before / 1024).toFixed(0)} KB of text assets, ${(after / 1024).toFixed(0)} KB with brotli`,
);
