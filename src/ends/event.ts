// How an end talks to the bench runner: one JSON object per line on stdout, each with an `event`
// field (the full protocol is in src/bench/ends.ts). The bench runner and serve read them here.
import { parseBoundedJson } from '../policy/json.js';

/** Writes one event line on stdout (what an end calls). */
export function printEvent(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

/** An end's line longer than this, or nested deeper than 32, is not an event (it is ignored). */
export const MAX_EVENT_LINE = 1 << 20;

/**
 * Parses one stdout line: the JSON object, or undefined for anything else (also a line past
 * MAX_EVENT_LINE or nested too deep: what it returns can always be written out again).
 */
export function parseEventLine(line: string): Record<string, unknown> | undefined {
  if (line.length > MAX_EVENT_LINE) return undefined;
  const t = line.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = parseBoundedJson(t);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
