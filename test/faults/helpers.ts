// Shared by the fault tests: a sockbuf command as a child process, its JSON lines as they come.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface Running {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  /** The first line (already seen or still to come) that matches. */
  line(match: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** SIGKILL if still running (every test's finally). */
  kill(): void;
}

export function sockbuf(args: string[], env: NodeJS.ProcessEnv = process.env): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    try {
      lines.push(JSON.parse(l));
    } catch {
      return;
    }
    for (const w of waiters.splice(0)) w();
  });
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal });
    }),
  );
  let exited = false;
  void exit.then(() => {
    exited = true;
  });
  return {
    child,
    lines,
    exit,
    stderr: () => err,
    async line(match) {
      for (;;) {
        const found = lines.find(match);
        if (found) return found;
        if (exited) throw new Error(`exited without the expected line; stderr: ${err.slice(-500)}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    kill() {
      if (!exited) child.kill('SIGKILL');
    },
  };
}
