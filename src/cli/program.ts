// The sockbuf command line: commander wiring only. Each command lives in its own file and registers
// itself here; no logic of its own.
import { Command, CommanderError } from 'commander';
import { VERSION } from '../bench/document.js';
import { ResolveError } from '../policy/resolve.js';
import { UsageError } from '../policy/units.js';
import { register as registerBench } from './bench.js';
import { register as registerBlast } from './blast.js';
import { register as registerDoctor } from './doctor.js';
import { register as registerExporter } from './exporter.js';
import { register as registerInspect } from './inspect.js';
import { register as registerLab } from './lab.js';
import { register as registerRemote } from './remote.js';
import { register as registerReport } from './report.js';
import { register as registerServe } from './serve.js';
import { register as registerSink } from './sink.js';

export function buildProgram(): Command {
  const program = new Command('sockbuf')
    .description('Socket buffers done right on Linux, proven with measurements')
    .version(VERSION)
    .showHelpAfterError()
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

/** Runs the CLI; resolves to the exit code (0 ok, 1 a check failed, 2 bad usage, 3 environment refused). */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  let running: Command | undefined;
  program.hook('preAction', (_program, command) => {
    running = command;
  });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof ResolveError && running) {
      process.stderr.write(`sockbuf: ${resolveMessage(running, err)}\n`);
      return 3;
    }
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      if (err.code === 'commander.help') return 0;
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`sockbuf: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

/** A name that did not resolve, said with the option that carried it (`--to`, `--listen`, `--remote`). */
function resolveMessage(command: Command, err: ResolveError): string {
  const values = command.opts();
  const option = command.options.find((o) => String(values[o.attributeName()] ?? '').includes(err.host));
  if (!option?.long) return err.message;
  return `cannot resolve ${option.long} '${values[option.attributeName()]}': no such host '${err.host}' (${err.code})`;
}
