#!/usr/bin/env node
import { run } from './program.js';

run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`sockbuf: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = typeof err?.exitCode === 'number' ? err.exitCode : 1;
  },
);
