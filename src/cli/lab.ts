// `sockbuf lab`: run a command across an emulated round-trip time and rate cap (lab -- CMD), or
// bring a lab up, run commands in it and take it down by hand (up, exec, down, status).
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import {
  assertRoot,
  cleanStale,
  describeLab,
  type HostName,
  heldLabs,
  Lab,
  type LabInfo,
  type LabMeasurement,
  listLabs,
  nodeArgv,
  spawnIn,
} from '../lab/lab.js';
import { LAB_DEFAULTS, type LabSpecInput, parseLabSpec } from '../lab/spec.js';
import { parseBoundedJson } from '../policy/json.js';
import { EnvironmentError, UsageError } from '../policy/units.js';

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
    .option('--mtu <bytes>', 'MTU of the lab link', LAB_DEFAULTS.mtu)
    .option('--threads <n>', 'delay-line threads: 2 (one per direction) or 1')
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

/** The sockbuf CLI itself, as argv for a child process. */
function sockbufArgv(): string[] {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return nodeArgv(new URL(`./main${ext}`, import.meta.url));
}

function waitExit(child: ReturnType<typeof spawn>): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Where a sockbuf command runs under `lab -- CMD`: sink in the server host, blast in the client host. */
export function placementOf(argv: string[]): HostName | 'root' {
  if (argv[0] === 'sink') return 'server';
  if (argv[0] === 'blast') return 'client';
  return 'root';
}

function pickLab(id: string | undefined): LabInfo {
  const live = heldLabs();
  const chosen = id ? live.filter((l) => l.id === id) : live;
  if (!chosen.length)
    throw new EnvironmentError(id ? `no live lab with id ${id}` : 'no lab is up (sockbuf lab up)');
  if (chosen.length > 1) {
    throw new UsageError(`several labs are up (${chosen.map((l) => l.id).join(', ')}): choose one with --id`);
  }
  return chosen[0].info as LabInfo;
}

async function runUnderLab(cmdArgv: string[], flags: LabFlags): Promise<number> {
  if (!cmdArgv.length)
    throw new UsageError('sockbuf lab: give a command after --, e.g. sockbuf lab --rtt 2ms -- bench tcp');
  const opts = parseLabSpec(flags);
  assertRoot();
  const lab = await Lab.create(opts);
  try {
    const m = flags.measure === false ? undefined : await lab.measure();
    process.stderr.write(`${describeLab(lab.info, m)}\n`);
    const where = placementOf(cmdArgv);
    const argv = [...sockbufArgv(), ...cmdArgv];
    const child =
      where === 'root'
        ? spawn(argv[0], argv.slice(1), { stdio: 'inherit', env: lab.env() })
        : lab.spawn(where, argv, { stdio: 'inherit' });
    return await waitExit(child);
  } finally {
    await lab.close();
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
    process.exitCode = await runUnderLab(cmdArgv, flags);
  });

  // The subcommands read the lab's options through optsWithGlobals (`lab up --rtt 5ms` and
  // `lab --rtt 5ms up` alike): commander hands options it sees anywhere to the parent first.
  lab
    .command('up')
    .description('bring a lab up and leave it running (the lab options above; take it down with lab down)')
    .action(async (_o: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals() as LabFlags;
      parseLabSpec(flags);
      assertRoot();
      cleanStale();
      const args = [
        'lab',
        'hold',
        '--rtt',
        flags.rtt ?? LAB_DEFAULTS.rtt,
        '--loss',
        flags.loss ?? '0%',
        '--mtu',
        flags.mtu ?? '1500',
        '--congestion',
        flags.congestion ?? LAB_DEFAULTS.congestion,
      ];
      if (flags.bandwidth) args.push('--bandwidth', flags.bandwidth);
      if (flags.threads) args.push('--threads', flags.threads);
      if (flags.measure === false) args.push('--no-measure');
      const argv = [...sockbufArgv(), ...args];
      const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (d) => {
          out += d;
          if (out.includes('\n')) resolve(out.split('\n')[0]);
        });
        child.once('exit', (code) =>
          reject(new EnvironmentError(`lab up failed (the lab process exited with ${code})`)),
        );
      });
      child.stdout?.destroy();
      child.unref();
      const r = parseBoundedJson(line, { maxLength: 1 << 20 }) as {
        error?: string;
        exitCode?: number;
        info?: LabInfo;
        measured?: LabMeasurement;
      };
      if (r.error || !r.info) {
        process.stderr.write(`sockbuf: ${r.error}\n`);
        process.exitCode = r.exitCode ?? 3;
        return;
      }
      if (flags.json) process.stdout.write(`${JSON.stringify(summary(r.info, r.measured))}\n`);
      else process.stdout.write(`${describeLab(r.info, r.measured)}\n`);
    });

  // The process that owns a lab made by `lab up`: reports on stdout once, then holds until SIGTERM.
  lab.command('hold', { hidden: true }).action(async (_o: unknown, cmd: Command) => {
    const flags = cmd.optsWithGlobals() as LabFlags;
    try {
      const l = await Lab.create({ ...parseLabSpec(flags), held: true });
      const measured = flags.measure === false ? undefined : await l.measure();
      process.stdout.write(`${JSON.stringify({ info: l.info, measured })}\n`);
      await new Promise(() => {}); // signals end it; the lab's handlers clean up
    } catch (err) {
      const e = err as Error & { exitCode?: number };
      process.stdout.write(`${JSON.stringify({ error: e.message, exitCode: e.exitCode ?? 3 })}\n`);
      process.exitCode = e.exitCode ?? 3;
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
      if (host !== 'client' && host !== 'server')
        throw new UsageError(`invalid value for host: '${host}' (expected client or server)`);
      assertRoot();
      cleanStale();
      const info = pickLab(flags.id);
      process.exitCode = await waitExit(spawnIn(info, host, cmdArgv, { stdio: 'inherit' }));
    });

  lab
    .command('down')
    .description('take down the labs made by lab up (--stale: only what dead processes left behind)')
    .option('--stale', "remove only dead processes' leftovers; never a live lab")
    .option('--id <id>', 'only this lab')
    .action(async (_o: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals() as LabFlags;
      assertRoot();
      const removed = cleanStale();
      if (!flags.stale) {
        // only labs made by lab up: a lab another process made for itself (a test, lab -- CMD) is its own
        const holders = heldLabs().filter((l) => l.pid !== process.pid && (!flags.id || l.id === flags.id));
        for (const l of holders) process.kill(l.pid, 'SIGTERM');
        const until = Date.now() + 5000;
        while (Date.now() < until && listLabs().some((l) => holders.some((h) => h.pid === l.pid))) {
          await new Promise((r) => setTimeout(r, 50));
        }
        removed.push(...holders.map((h) => h.id));
      }
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
        process.stdout.write(
          `${l.info ? describeLab(l.info) : `lab ${l.id}`} [${state}; netns ${l.netns.join(' ') || '-'}]\n`,
        );
      }
    });
}
