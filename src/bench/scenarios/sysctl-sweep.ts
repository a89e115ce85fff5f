// Seed 000's second table: an application that asks for osiris's 2041500-byte receive buffer gets
// min(2041500, rmem_max), so raising net.core.rmem_max/wmem_max raises its ceiling until the link is
// the limit. Each point sets both sysctls (root), runs one transfer, and everything is restored at the
// end; the originals are on disk before the first change (src/lab/sysctls.ts).

import { EnvironmentError, UsageError } from '../../errors.js';
import { cleanStale } from '../../lab/lab.js';
import { changeSysctls, restoreSysctls } from '../../lab/sysctls.js';
import { formatSize, parseDuration, parseList, parseSize } from '../../policy/units.js';
import { readSysctlText } from '../../sys/sysctl.js';
import { lastEvent, numberField } from '../ends.js';
import type { Scenario } from '../scenario.js';

interface Params {
  values: number[];
  rcvbuf: number;
  duration: string;
}

const SYSCTLS = ['net.core.rmem_max', 'net.core.wmem_max'];
export const OSIRIS_RCVBUF = 2041500;

const scenario: Scenario<Params> = {
  name: 'sysctl-sweep',
  description:
    "throughput of a receiver asking for osiris's 2041500 B buffer as rmem_max/wmem_max grow (seed 000; root, --yes)",
  options: [
    {
      flags: '--values <list>',
      description: 'rmem_max = wmem_max values',
      default: '229376,512K,1M,2M,4M,8M',
    },
    {
      flags: '--rcvbuf <size>',
      description: "what the receiver asks for (osiris's request)",
      default: String(OSIRIS_RCVBUF),
    },
    { flags: '--duration <duration>', description: 'per run', default: '3s' },
    { flags: '--yes', description: 'change the host sysctls (restored afterwards)' },
  ],
  params(o) {
    const values = parseList(String(o.values), '--values', parseSize);
    const rcvbuf = parseSize(String(o.rcvbuf), '--rcvbuf');
    parseDuration(String(o.duration), '--duration');
    if (!o.yes) {
      const now = SYSCTLS.map((n) => `${n} = ${readSysctlText(n) ?? '?'}`).join(', ');
      throw new UsageError(
        `bench sysctl-sweep would set ${SYSCTLS.join(' and ')} to each of ${values.map(formatSize).join(', ')} in turn (now ${now}) and restore them afterwards; add --yes to let it`,
      );
    }
    if (process.getuid?.() !== 0)
      throw new EnvironmentError('bench sysctl-sweep changes host sysctls: run as root');
    cleanStale(); // also puts back what a killed sweep changed
    return { values, rcvbuf, duration: String(o.duration) };
  },
  points: (p) => p.values.map((v) => ({ rmemMax: String(v) })),
  setUp(point) {
    changeSysctls(Object.fromEntries(SYSCTLS.map((n) => [n, point.rmemMax])));
  },
  tearDown() {
    restoreSysctls();
  },
  ends: (_pt, p) => ({
    receiver: {
      sockbuf: ['sink', 'tcp', '--listen', '{host}:0', '--rcvbuf', String(p.rcvbuf), '--once', '--json'],
    },
    sender: { sockbuf: ['blast', 'tcp', '--to', '{host}:{port}', '--duration', p.duration, '--json'] },
  }),
  row(out) {
    const result = lastEvent(out.receiver, 'result');
    const buffers = out.receiver.ready?.buffers as { rcvbuf?: { effective?: number } } | undefined;
    return {
      bytesPerSecond: numberField(result, 'bytesPerSecond'),
      rcvbufBytes: buffers?.rcvbuf?.effective ?? null,
    };
  },
  primary: 'bytesPerSecond',
  columns: [
    { key: 'bytesPerSecond', title: 'throughput' },
    { key: 'rcvbufBytes', title: 'rcvbuf (kernel)' },
  ],
  defaultLab: 'rtt=2ms,bandwidth=5gbit',
};
export default scenario;
