// How every command ends when asked: the first SIGINT or SIGTERM stops the work at once (the command
// still reports what it had) and the command exits 128 + the signal's number (130, 143). A command
// that has not ended FORCE_SECONDS after the signal, or a second signal, exits at once. The library
// never owns the process: it gets an AbortSignal; this file is the CLI's only signal handler.

/** After the first signal, the command has this long to report and end before it is made to. */
export const FORCE_SECONDS = 5;

/**
 * A second signal this soon after the first is the same stop, not a second one: a terminal's Ctrl-C
 * reaches a command and the sockbuf that runs it (lab exec, lab -- CMD), which passes it on.
 */
export const SAME_STOP_MS = 500;

const NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

export interface StopSignals {
  /** Aborted (reason: the signal's name) on the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** The signal received, if any. */
  readonly received: NodeJS.Signals | undefined;
  /** Removes the handlers (the exit code after a signal is 128 + its number in any case). */
  dispose(): void;
}

/**
 * Turns SIGINT and SIGTERM into an abort (`stop` runs too, with the signal's name). Install before the
 * ready line: a peer may signal as soon as it reads it.
 */
export function stopSignals(stop: (sig: NodeJS.Signals) => void = () => {}): StopSignals {
  const ac = new AbortController();
  let received: NodeJS.Signals | undefined;
  let receivedAt = 0;
  const exitNow = (sig: NodeJS.Signals, why: string) => {
    process.stderr.write(`sockbuf: ${why}; exiting\n`);
    process.exit(128 + (NUMBERS[sig] ?? 0));
  };
  const on = (sig: NodeJS.Signals) => {
    if (received !== undefined) {
      if (performance.now() - receivedAt < SAME_STOP_MS) return;
      return exitNow(sig, `${sig} after ${received}`);
    }
    received = sig;
    receivedAt = performance.now();
    // whatever the command then sets, the process exits 128 + the signal's number
    process.once('exit', () => {
      process.exitCode = 128 + (NUMBERS[sig] ?? 0);
    });
    const force = setTimeout(
      () => exitNow(sig, `still running ${FORCE_SECONDS} s after ${sig}`),
      FORCE_SECONDS * 1000,
    );
    force.unref();
    ac.abort(sig);
    stop(sig);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  for (const s of signals) process.on(s, on);
  return {
    signal: ac.signal,
    get received() {
      return received;
    },
    dispose() {
      for (const s of signals) process.off(s, on);
      // the force timer stays (unref'd): a handle left open still cannot keep the process past it
    },
  };
}
