// What the benchmark scripts share: a process pinned to one CPU (taskset) whose JSON lines are
// collected as they come, killed past a bound; the built CLI's path; and gcc for the C references.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export type Line = Record<string, unknown>;

export interface Pinned {
  child: ChildProcess;
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
  const child = spawn('taskset', ['-c', String(cpu), cmd, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: Line[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    if (!l.startsWith('{')) return;
    lines.push(JSON.parse(l) as Line);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), boundSeconds * 1000);
  void exited.then(() => clearTimeout(timer));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const w of waiters.splice(0)) w();
  });
  return {
    child,
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
