// `sockbuf lab`: run a command across an emulated round-trip time and rate cap (lab -- CMD), or
// bring a lab up, run commands in it and take it down by hand (up, exec, down, status).
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { downLabs, execInLab, holdLab, runUnderLab, upLab } from '../lab/hold.js';
import { describeLab, type LabMeasurement } from '../lab/measure.js';
import { type LabInfo, listLabs } from '../lab/registry.js';
import { LAB_DEFAULTS, type LabSpecInput, parseLabSpec } from '../lab/spec.js';
import { declared } from './declared.js';
import { printableText } from './lines.js';
import { stopSignals } from './signals.js';

interface LabFlags extends LabSpecInput {
  json?: boolean;
  measure?: boolean;
  id?: string;
  stale?: boolean;
}

function labOptions(cmd: Command): Command {
  return cmd
    .option('--rtt <duration>', 'round-trip time across the lab', LAB_DEFAULTS.rtt)
    .option('--bandwidth <rate>', 'rate cap each way (default: none)')
    .option('--loss <percent>', 'random loss each way', LAB_DEFAULTS.loss)
    .addOption(declared('mtu'))
    .addOption(declared('threads'))
    .option(
      '--congestion <name>',
      "TCP congestion control across the lab (host: the kernel's default)",
      LAB_DEFAULTS.congestion,
    )
    .option('--no-measure', 'skip the self-check (ping-pong RTT and a 1 s transfer)');
}

function summary(info: LabInfo, m?: LabMeasurement): object {
  return {
    id: info.id,
    pid: info.pid,
    rttUs: Math.round(info.rttMs * 1000),
    bitsPerSecond: info.bitsPerSecond,
    lossPct: info.loss * 100,
    mtu: info.mtu,
    mode: info.mode,
    congestion: info.congestion ?? null,
    hosts: info.hosts,
    measured: m ?? null,
  };
}

async function runUnder(cmdArgv: string[], flags: LabFlags): Promise<number> {
  if (!cmdArgv.length)
    throw new UsageError('sockbuf lab: give a command after --, e.g. sockbuf lab --rtt 2ms -- bench tcp');
  // a signal stops the command, then the lab is taken down (exit 130 or 143)
  const signals = stopSignals();
  try {
    return await runUnderLab(cmdArgv, parseLabSpec(flags), {
      measure: flags.measure !== false,
      onUp: (up) => process.stderr.write(`${printableText(describeLab(up.info, up.measured))}\n`),
      signal: signals.signal,
    });
  } finally {
    signals.dispose();
  }
}

export function register(program: Command): void {
  const lab = labOptions(
    program
      .command('lab')
      .description(
        'run a sockbuf command across an emulated round-trip time: sockbuf lab --rtt 2ms -- bench tcp',
      )
      .argument('[command...]', 'the sockbuf command to run (after --)')
      .option('--json', 'print the lab summary as JSON (up, status)'),
  ).action(async (cmdArgv: string[], flags: LabFlags) => {
    process.exitCode = await runUnder(cmdArgv, flags);
  });

  // The subcommands read the lab's options through optsWithGlobals (`lab up --rtt 5ms` and
  // `lab --rtt 5ms up` alike): commander hands options it sees anywhere to the parent first.
  lab
    .command('up')
    .description('bring a lab up and leave it running (the lab options above; take it down with lab down)')
    .action(async (_o: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals() as LabFlags;
      // interrupted before the lab is handed over: what the holder made is taken down (exit 130/143)
      const signals = stopSignals();
      let r: Awaited<ReturnType<typeof upLab>>;
      try {
        r = await upLab(parseLabSpec(flags), { measure: flags.measure !== false, signal: signals.signal });
      } finally {
        signals.dispose();
      }
      if (flags.json) process.stdout.write(`${JSON.stringify(summary(r.info, r.measured))}\n`);
      else process.stdout.write(`${printableText(describeLab(r.info, r.measured))}\n`);
    });

  // The process that owns a lab made by `lab up`: reports on stdout once, then holds until SIGTERM
  // (lab down) or SIGINT, takes the lab down and exits 143 or 130.
  lab.command('hold', { hidden: true }).action(async (_o: unknown, cmd: Command) => {
    const flags = cmd.optsWithGlobals() as LabFlags;
    const signals = stopSignals();
    try {
      await holdLab(parseLabSpec(flags), { measure: flags.measure !== false, signal: signals.signal });
    } finally {
      signals.dispose();
    }
  });

  lab
    .command('exec')
    .description('run a command in a host of the lab that is up: lab exec server -- sockbuf sink tcp …')
    .argument('<host>', 'client or server')
    .argument('<command...>', 'the command (after --)')
    .option('--id <id>', 'which lab, when several are up')
    .action(async (host: string, cmdArgv: string[], _o: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals() as LabFlags;
      if (host !== 'client' && host !== 'server') throw UsageError.invalid('host', host, 'client or server');
      // a signal is passed on to the command, which is waited for (5 s at most) so that its summary is printed
      const signals = stopSignals();
      try {
        process.exitCode = await execInLab(host, cmdArgv, { id: flags.id, signal: signals.signal });
      } finally {
        signals.dispose();
      }
    });

  lab
    .command('down')
    .description(
      'take down the lab made by lab up (several up: name one with --id, or --all; --stale: only what dead processes left behind)',
    )
    .option('--stale', "remove only dead processes' leftovers; never a live lab")
    .option('--id <id>', 'only this lab')
    .option('--all', "every lab made by lab up on this host, other users' too")
    .action(async (_o: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals() as LabFlags & { all?: boolean };
      const removed = await downLabs({ id: flags.id, all: flags.all, stale: flags.stale });
      process.stdout.write(removed.length ? `removed lab ${removed.join(', ')}\n` : 'nothing to remove\n');
    });

  lab
    .command('status')
    .description('show the labs on this host')
    .action((_o: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals() as LabFlags;
      const labs = listLabs();
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify(labs.map((l) => ({ id: l.id, pid: l.pid, alive: l.alive, netns: l.netns, lab: l.info ? summary(l.info) : null })))}\n`,
        );
        return;
      }
      if (!labs.length) {
        process.stdout.write('no labs\n');
        return;
      }
      for (const l of labs) {
        const state = l.alive ? 'up' : 'stale (owner gone; lab down --stale removes it)';
        // a lab's description is read from its state file: shown escaped
        const line = `${l.info ? describeLab(l.info) : `lab ${l.id}`} [${state}; netns ${l.netns.join(' ') || '-'}]`;
        process.stdout.write(`${printableText(line)}\n`);
      }
    });
}
