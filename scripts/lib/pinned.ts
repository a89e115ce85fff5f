// What the benchmark scripts share: a process pinned to one CPU whose JSON lines are collected as they
// come, killed past a bound; the built CLI's path; and gcc for the C references. The process is the
// bench runner's: a Child of src/sys/process.ts (its own process group, killed with this process,
// stdout read as lines of at most 1 MiB, stderr's tail kept) pinned as the local placement pins an
// end (taskset, where there is one).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localPlacement } from '../../src/bench/placement.js';
import { Child } from '../../src/sys/process.js';

export type Line = Record<string, unknown>;

export interface Pinned {
  /** The Node process (the command itself: taskset and setpriv exec it). */
  child: Child['process'];
  /** The first JSON line (already seen or still to come) that matches; throws after `ms`. */
  line(match: (l: Line) => boolean, ms?: number): Promise<Line>;
  /** Its exit code (null when killed). */
  exited: Promise<number | null>;
}

/** The built CLI (the scripts measure what users run: `npm run build` first). */
export function builtCli(): string {
  const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  return cli;
}

/** Builds scripts/c/NAME.c (default udp) into `dir` with gcc; returns the program's path. */
export function buildC(dir: string, name = 'udp'): string {
  const out = join(dir, name);
  execFileSync('gcc', ['-O2', '-Wall', '-o', out, fileURLToPath(new URL(`../c/${name}.c`, import.meta.url))]);
  return out;
}

/** Starts `cmd args` on `cpu`; SIGKILL after `boundSeconds` whatever it does. */
export function runPinned(cpu: number, cmd: string, args: string[], boundSeconds: number): Pinned {
  const c = new Child(localPlacement([cpu, cpu]).command('receiver', { file: cmd, args }), { group: false });
  const lines: Line[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  c.onLine((l) => {
    if (!l.startsWith('{')) return;
    try {
      lines.push(JSON.parse(l) as Line);
    } catch {
      return; // not a JSON line after all
    }
    wake();
  });
  const timer = setTimeout(() => c.signal('SIGKILL'), boundSeconds * 1000);
  let done = false;
  const exited = c.exited.then(({ code }) => {
    clearTimeout(timer);
    done = true;
    wake();
    if (code !== 0 && c.stderrTail.length) process.stderr.write(`${c.stderrTail.join('\n')}\n`);
    return code;
  });
  return {
    child: c.process,
    exited,
    async line(match, ms = 30_000) {
      const end = Date.now() + ms;
      for (;;) {
        const l = lines.find(match);
        if (l) return l;
        if (done || Date.now() > end)
          throw new Error(`${cmd} ${args.join(' ')}: no such line${done ? ' (it exited)' : ` in ${ms} ms`}`);
        await Promise.race([
          new Promise<void>((r) => waiters.push(r)),
          new Promise((r) => setTimeout(r, 200)),
        ]);
      }
    },
  };
}

export const num = (l: Line, k: string): number => (typeof l[k] === 'number' ? (l[k] as number) : Number.NaN);
