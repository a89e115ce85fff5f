// The sockbuf command line: commander wiring only. Each command lives in its own file and registers
// itself here; no logic of its own.
import { Command, CommanderError } from 'commander';
import { ResolveError } from '../errors.js';
import { VERSION } from '../sys/package.js';
import { register as registerBench } from './bench.js';
import { register as registerBlast } from './blast.js';
import { register as registerDoctor } from './doctor.js';
import { register as registerExporter } from './exporter.js';
import { register as registerInspect } from './inspect.js';
import { register as registerLab } from './lab.js';
import { CLI_OUTPUT } from './lines.js';
import { resolveMessage } from './names.js';
import { register as registerRemote } from './remote.js';
import { register as registerReport } from './report.js';
import { register as registerServe } from './serve.js';
import { register as registerSink } from './sink.js';

export function buildProgram(): Command {
  const program = new Command('sockbuf')
    .description('Socket buffers done right on Linux, proven with measurements')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride()
    // before the commands are added: each copies it
    .configureOutput(CLI_OUTPUT);
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
    const done = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
    if (err instanceof CommanderError && done.includes(err.code)) return 0;
    throw err;
  }
}
