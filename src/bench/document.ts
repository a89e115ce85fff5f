// The results document every bench (and doctor) run produces: stable top-level keys, the way iperf3
// -J has start/intervals/end, so that report and other tools can rely on them.
import { createRequire } from 'node:module';
import { type HostInfo, hostInfo } from '../observe/proc.js';

export const SCHEMA = 'sockbuf.v1';

/** sockbuf's version, from package.json (two levels up from both src/bench and dist/bench). */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string })
  .version;

export interface ResultsDocument<R = unknown> {
  schema: typeof SCHEMA;
  version: string;
  /** The command that produced it: 'bench', 'doctor', … */
  command: string;
  /** Everything that decided the results: for bench the scenario, placement, repeat and its options. */
  params: Record<string, unknown>;
  /** The host: kernel, CPUs and the buffer sysctls. */
  host: HostInfo;
  results: R[];
}

export function resultsDocument<R>(
  command: string,
  params: Record<string, unknown>,
  results: R[],
): ResultsDocument<R> {
  return { schema: SCHEMA, version: VERSION, command, params, host: hostInfo(), results };
}
