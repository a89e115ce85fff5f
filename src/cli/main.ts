#!/usr/bin/env node
// The CLI's entry: runs the command, prints an error and sets the exit status (exit-codes.ts maps
// errors to statuses). A library UsageError or ResolveError names the option as a program wrote it
// (`listen`); here it is the flag.
import { CommanderError } from 'commander';
import { ResolveError, UsageError } from '../errors.js';
import { OPTIONS, type OptionDecl } from '../policy/option-registry.js';
import { printable } from '../policy/printable.js';
import { exitCodeFor } from './exit-codes.js';
import { run } from './program.js';
import { installWarnings } from './warnings.js';

installWarnings();

/**
 * Library names whose flag is not their kebab form: for every command (runTcpBlast's `seconds` is
 * `--duration`) or for one (`inspect intervalSeconds`, watchSockets' interval, is `--watch`). A declared
 * option's flag comes from the registry (`maxConcurrent` is `--probe-max-concurrent`).
 */
const FLAGS: Record<string, string> = {
  seconds: '--duration',
  maxDurationSeconds: '--max-duration',
  idleSeconds: '--idle-timeout',
  'inspect intervalSeconds': '--watch',
  'exporter allow': '--probe-allow',
  'exporter duration': '--probe-duration',
  'exporter maxDuration': '--probe-max-duration',
  'exporter webConfigFile': '--web.config.file',
};
const command = process.argv[2];

/** `warmUp` → `--warm-up`, `lab rtt` → `--lab rtt`; a name already a flag, or `<scenario>`, stays. */
const flag = (option: string) =>
  option.replace(
    /^[a-z][a-zA-Z0-9]*/,
    (name) =>
      FLAGS[`${command} ${name}`] ??
      FLAGS[name] ??
      (OPTIONS as Record<string, OptionDecl>)[name]?.flag ??
      `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
  );

/**
 * The message to print: a UsageError names its options by their flags. No control character that came
 * from input reaches the terminal raw (line breaks of a multi-line message, such as an end's stderr, stay).
 */
function describe(err: unknown): string {
  // a usage error is one line: a line break in the value it quotes is shown escaped too
  if (err instanceof UsageError || err instanceof ResolveError) return printable(err.describe(flag));
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n').map(printable).join('\n');
}

run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    // commander has printed its own message
    if (!(err instanceof CommanderError)) process.stderr.write(`sockbuf: ${describe(err)}\n`);
    process.exitCode = exitCodeFor(err);
  },
);
