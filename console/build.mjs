// Builds console/dist/ from console/src/ (and the chatd-client sources it imports from
// ../clients/typescript/src). The output is committed and embedded in the chatd binary
// (src/http/console.rs); .ci/console-check rebuilds it and fails when it differs.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
mkdirSync(dist, { recursive: true });
await build({
  entryPoints: [join(here, 'src', 'main.ts')],
  outfile: join(dist, 'console.js'),
  bundle: true,
  format: 'iife',
  target: 'es2022',
  charset: 'utf8',
  legalComments: 'none',
  // Readable output: the committed file is reviewed in diffs.
  minify: false,
  sourcemap: false,
  logLevel: 'warning',
});
copyFileSync(join(here, 'src', 'index.html'), join(dist, 'index.html'));
copyFileSync(join(here, 'src', 'console.css'), join(dist, 'console.css'));
copyFileSync(join(here, 'src', 'favicon.svg'), join(dist, 'favicon.svg'));
