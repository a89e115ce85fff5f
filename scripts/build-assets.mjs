#!/usr/bin/env node
// Build step after tsc: the HTML report's Chart.js, copied from the devDependency into dist beside the
// module that inlines it into the page (src/bench/report/html.ts), so an installed sockbuf needs no
// chart.js package. The file keeps Chart.js's MIT notice (its first comment).
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const bundle = join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js');
copyFileSync(bundle, join(root, 'dist/bench/report/chart.umd.min.js'));
