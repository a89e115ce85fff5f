// How an end talks to the bench runner: one JSON object per line on stdout, each with an `event`
// field (the runner's side, and the full protocol, is in src/bench/ends.ts).

/** Writes one event line on stdout (what an end calls). */
export function printEvent(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}
