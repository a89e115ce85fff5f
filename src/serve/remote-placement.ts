// The bench runner's `remote` placement: the receiving end runs on a `sockbuf serve` host, through
// `sockbuf remote SERVER -- <receiver's command>` (remote-end.ts) started here in its place, and the
// sending end runs here against the server's address. The runner itself never knows the difference.

import { UsageError } from '../errors.js';
import { formatHostPort, type HostPort } from '../policy/address.js';
import { resolveHost } from '../policy/resolve.js';
import type { SpawnSpec } from '../sys/process.js';
import { parseServer } from './remote-end.js';

/** The sockbuf entry in a spawn spec (`node [--import tsx] …/cli/main.js ARGS`): its index. */
function entryIndex(args: string[]): number {
  return args.findIndex((a) => /[\\/]cli[\\/]main\.(js|ts)$/.test(a));
}

export function remotePlacement(server: HostPort, token?: string) {
  return {
    name: 'remote',
    host: server.host,
    command(role: 'receiver' | 'sender', spec: SpawnSpec): SpawnSpec {
      if (role === 'sender') return spec;
      const i = entryIndex(spec.args);
      if (i < 0)
        throw new UsageError(
          '--remote runs only sockbuf ends (sink tcp [--echo], sink udp) on the serve host, not modules',
        );
      const env = token === undefined ? spec.env : { ...spec.env, SOCKBUF_TOKEN: token };
      return {
        file: spec.file,
        args: [
          ...spec.args.slice(0, i + 1),
          'remote',
          formatHostPort(server),
          '--',
          ...spec.args.slice(i + 1),
        ],
        env,
      };
    },
    describe: () => ({ name: 'remote', server: formatHostPort(server) }),
  };
}

/** The bench runner's entry for `remote`: `--remote HOST[:PORT]`, the token from SOCKBUF_TOKEN. */
export const REMOTE_PLACEMENT = {
  options: [
    {
      flags: '--remote <host[:port]>',
      description: 'the receiving end on a sockbuf serve host (token: SOCKBUF_TOKEN)',
    },
  ],
  create: async (o: Record<string, unknown>) => {
    if (o.remote === undefined)
      throw new UsageError(
        '--placement remote needs the server: use --remote HOST[:PORT] (sockbuf serve there)',
      );
    const server = parseServer(String(o.remote));
    // a name that does not resolve stops the bench here (ResolveError, exit 3, said with --remote),
    // not in the first run's far end; the ends resolve it again themselves
    await resolveHost(server.host, { option: 'remote', value: String(o.remote) });
    return remotePlacement(server, process.env.SOCKBUF_TOKEN);
  },
};
