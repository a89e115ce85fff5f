// The sockbuf command line: commander wiring only. Each command lives in its own file and registers
// itself here; no logic of its own.
import { type Command, CommanderError } from 'commander';
import { ResolveError } from '../errors.js';
import { VERSION } from '../sys/package.js';
import { register as registerBench } from './bench.js';
import { register as registerBlast } from './blast.js';
import { register as registerDoctor } from './doctor.js';
import { register as registerExporter } from './exporter.js';
import { register as registerInspect } from './inspect.js';
import { register as registerLab } from './lab.js';
import { resolveMessage } from './names.js';
import { optionRefused } from './os-errors.js';
import { register as registerRemote } from './remote.js';
import { register as registerReport } from './report.js';
import { register as registerServe } from './serve.js';
import { register as registerSink } from './sink.js';
import { usageCommand } from './usage.js';

export function buildProgram(): Command {
  // usage errors are one line each (usage.ts); exitOverride: help and version return to run()
  const program = usageCommand('sockbuf')
    .description('Socket buffers done right on Linux, proven with measurements')
    .version(VERSION)
    .exitOverride();
  registerSink(program);
  registerBlast(program);
  registerBench(program);
  registerDoctor(program);
  registerInspect(program);
  registerExporter(program);
  registerLab(program);
  registerReport(program);
  registerServe(program);
  registerRemote(program);
  return program;
}

/**
 * Runs the CLI; resolves to the exit code a command set (0 ok, 1 a check failed), 0 for help and
 * version. Errors are thrown: main.ts prints them and maps them to exit codes.
 */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();

  let running: Command | undefined;
  program.hook('preAction', (_program, command) => {
    running = command;
  });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    // a name that did not resolve is said with the option that carried it; main.ts prints it (exit 3)
    if (err instanceof ResolveError && running) err.message = resolveMessage(running, err);
    // a value a system call refused (bind EINVAL, EISDIR) is said with its option
    const refused = running && optionRefused(running, err);
    if (refused) throw refused;
    const done = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
    if (err instanceof CommanderError && done.includes(err.code)) return 0;
    throw err;
  }
}
