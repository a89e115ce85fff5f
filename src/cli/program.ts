// The sockbuf command line: commander wiring only. Each command lives in its own file and registers
// itself here; no logic of its own.
import { type Command, CommanderError } from 'commander';
import { VERSION } from '../sys/package.js';
import { optionRefused } from './os-errors.js';
import { usageCommand } from './usage.js';

/**
 * Each command's module, loaded when it is needed: a process runs one command, and a bench end
 * (`sink tcp`, `blast udp` …, two processes a run) then loads its own modules, not the exporter's,
 * the lab's or the report's (about 150 ms of CPU a process on this machine). The order is help's.
 */
const COMMANDS: Record<string, () => Promise<{ register: (program: Command) => unknown }>> = {
  sink: () => import('./sink.js'),
  blast: () => import('./blast.js'),
  bench: () => import('./bench.js'),
  doctor: () => import('./doctor.js'),
  inspect: () => import('./inspect.js'),
  exporter: () => import('./exporter.js'),
  lab: () => import('./lab.js'),
  report: () => import('./report.js'),
  serve: () => import('./serve.js'),
  remote: () => import('./remote.js'),
};

/** The program with every command, or only `command` when it names one (what `run` parses). */
export async function buildProgram(command?: string): Promise<Command> {
  // usage errors are one line each (usage.ts); exitOverride: help and version return to run()
  const program = usageCommand('sockbuf')
    .description('Socket buffers done right on Linux, proven with measurements')
    .version(VERSION)
    .exitOverride();
  const names = command !== undefined && Object.hasOwn(COMMANDS, command) ? [command] : Object.keys(COMMANDS);
  for (const m of await Promise.all(names.map((n) => COMMANDS[n]()))) m.register(program);
  return program;
}

/**
 * Runs the CLI; resolves to the exit code a command set (0 ok, 1 a check failed), 0 for help and
 * version. Errors are thrown: main.ts prints them and maps them to exit codes.
 */
export async function run(argv: string[]): Promise<number> {
  const program = await buildProgram(argv[2]);

  let running: Command | undefined;
  program.hook('preAction', (_program, command) => {
    running = command;
  });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    // a value a system call refused (bind EINVAL, EISDIR) is said with its option
    const refused = running && optionRefused(running, err);
    if (refused) throw refused;
    const done = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
    if (err instanceof CommanderError && done.includes(err.code)) return 0;
    throw err;
  }
}
