// The protocol between the bench runner and an end (a `sockbuf sink`/`blast` child, or a module):
// one JSON object per line on stdout, each with an `event` field. Anything that is not a JSON object
// line is ignored by the runner; stderr is for people (the runner keeps its last lines for errors).
//
//   {"event":"ready","host":"127.0.0.1","port":40311}   the receiver can be reached now. Required of
//                                                       the receiver, printed once, after listen().
//                                                       Its fields fill `{port}`, `{field}` in the
//                                                       sender's argv (port 0 → the real port).
//   {"event":"interval", ...}                           optional, while running
//   {"event":"result", ...}                             the end's totals, printed before it exits
//
// The receiver exits by itself when its work is done (Ends.receiverStop 'exit', the default), or
// (receiverStop 'term') on SIGTERM: it stops accepting, lets the transfer in progress end, prints its
// result and exits 0. The runner sends SIGTERM as soon as the sender exited, which may be before the
// receiver has read the last bytes: a receiver that prints at once on SIGTERM may miss them.
import { PeerError, UsageError } from '../errors.js';
import type { EndOutput } from './scenario.js';

export const READY_EVENT = 'ready';

export { MAX_EVENT_LINE, parseEventLine } from '../ends/event.js';

/** The last line of an end with the given event; throws if there is none (a row needs it). */
export function lastEvent(end: EndOutput, event: string): Record<string, unknown> {
  for (let i = end.lines.length - 1; i >= 0; i--) if (end.lines[i].event === event) return end.lines[i];
  throw new PeerError(`no "${event}" line in the end's output (${end.lines.length} JSON lines)`);
}

/** A numeric field of a line; throws naming the field if it is missing or not a finite number. */
export function numberField(line: Record<string, unknown>, field: string): number {
  const v = line[field];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new PeerError(
      `field "${field}" of the "${String(line.event)}" line is not a number: ${JSON.stringify(v)}`,
    );
  }
  return v;
}

/**
 * Replaces `{name}` in each argument with vars[name]; unknown placeholders are an error. An IPv6
 * address followed by a port (`{host}:0`) is bracketed: `[::1]:0`.
 */
export function substitute(args: string[], vars: Record<string, unknown>): string[] {
  return args.map((a) =>
    a.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match: string, name: string, at: number) => {
      const v = vars[name];
      if (v === undefined || v === null || typeof v === 'object') {
        throw new UsageError(
          `placeholder {${name}} in '${a}' has no value (known: ${Object.keys(vars).join(', ')})`,
        );
      }
      const text = String(v);
      return text.includes(':') && a[at + match.length] === ':' ? `[${text}]` : text;
    }),
  );
}
