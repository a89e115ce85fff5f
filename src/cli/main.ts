#!/usr/bin/env node
// The CLI's entry, and the one place that maps error classes to exit codes: 2 bad usage (UsageError,
// commander's own), 3 the environment refused (EnvironmentError, LinuxOnlyError); an error carrying
// an end's or the far end's exit code passes it on (RunFailure, ServeRefused); anything else 1.
// A library UsageError names the option as a program wrote it (`listen`); here it is the flag.
import { CommanderError } from 'commander';
import { EnvironmentError, LinuxOnlyError, UsageError } from '../index.js';
import { run } from './program.js';
import { installWarnings } from './warnings.js';

installWarnings();

function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError || err instanceof CommanderError) return 2;
  if (err instanceof EnvironmentError || err instanceof LinuxOnlyError) return 3;
  const carried = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof carried === 'number' ? carried : 1;
}

/**
 * Library names whose flag is not their kebab form: for every command (runTcpBlast's `seconds` is
 * `--duration`) or for one (`inspect intervalSeconds`, watchSockets' interval, is `--watch`).
 */
const FLAGS: Record<string, string> = {
  seconds: '--duration',
  maxDurationSeconds: '--max-duration',
  idleSeconds: '--idle-timeout',
  'inspect intervalSeconds': '--watch',
};
const command = process.argv[2];

/** `warmUp` → `--warm-up`, `lab rtt` → `--lab rtt`; a name already a flag, or `<scenario>`, stays. */
const flag = (option: string) =>
  option.replace(
    /^[a-z][a-zA-Z0-9]*/,
    (name) =>
      FLAGS[`${command} ${name}`] ??
      FLAGS[name] ??
      `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
  );

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof UsageError && err.option)
    return err.message
      .replace(`for ${err.option}:`, `for ${flag(err.option)}:`)
      .replace(
        /^(\w+) and (\w+) cannot be combined/,
        (_, a, b) => `${flag(a)} and ${flag(b)} cannot be combined`,
      )
      .replace(/give (\w+) or (\w+), not both/, (_, a, b) => `give ${flag(a)} or ${flag(b)}, not both`);
  return err.message;
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
