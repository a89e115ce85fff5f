// `sockbuf bench idle`: what an idle TCP connection costs the receiving process per reader: read-buffer
// bytes, RSS and heap per connection, after a burst on each connection (so adaptive readers grew first).
import { checkWhole } from '../../policy/option-registry.js';
import { formatSize, parseList, parseSizeIn } from '../../policy/units.js';
import { moduleFile } from '../../sys/package.js';
import { parseReader } from '../../tcp/reader.js';
import { lastEvent, numberField } from '../ends.js';
import { declaredOption } from '../options.js';
import type { Scenario } from '../scenario.js';
import { readerLabel } from './drain.js';

const END = moduleFile(new URL('../../ends/bench-tcp.child', import.meta.url));

interface Params {
  conns: number;
  burst: number;
  readers: string[];
}

const size = (v: number) => formatSize(Math.round(v));

const scenario: Scenario<Params> = {
  name: 'idle',
  description: 'memory per idle TCP connection per reader: read buffer, RSS, heap (seed 002)',
  options: [
    declaredOption('conns'),
    {
      flags: '--burst <size>',
      description: 'bytes written on each connection before it goes idle',
      default: '16K',
    },
    { flags: '--readers <list>', description: 'readers to compare', default: 'adaptive,fixed:64K,data' },
  ],
  params: (o) => ({
    conns: checkWhole('conns', o.conns, '--conns'),
    burst: parseSizeIn(String(o.burst), '--burst', 1, 1 << 30),
    readers: parseList(String(o.readers), '--readers', (v, opt) => {
      parseReader(v, opt);
      return v;
    }),
  }),
  points: (p) => p.readers.map((r) => ({ reader: readerLabel(r) })),
  ends: (pt, p) => {
    const reader = p.readers.find((r) => readerLabel(r) === pt.reader) ?? pt.reader;
    const n = String(p.conns);
    const burst = String(p.burst);
    return {
      receiver: {
        module: END,
        args: ['hold', '--host', '{host}', '--reader', reader, '--conns', n, '--burst', burst],
      },
      sender: {
        module: END,
        args: ['idle', '--host', '{host}', '--port', '{port}', '--conns', n, '--burst', burst],
      },
    };
  },
  row: (out) => {
    const r = lastEvent(out.receiver, 'result');
    const f = (k: string) => numberField(r, k);
    return {
      conns: f('conns'),
      readBufferBytesPerConn: f('readBufferBytesPerConn'),
      rssBytesPerConn: f('rssBytesPerConn'),
      heapBytesPerConn: f('heapBytesPerConn'),
      arrayBuffersBytesPerConn: f('arrayBuffersBytesPerConn'),
      maxNextReadBytes: f('maxNextReadBytes'),
    };
  },
  primary: 'readBufferBytesPerConn',
  columns: [
    { key: 'conns' },
    { key: 'readBufferBytesPerConn', title: 'read buffer/conn', format: size },
    { key: 'rssBytesPerConn', title: 'RSS/conn', format: size },
    { key: 'heapBytesPerConn', title: 'heap/conn', format: size },
    { key: 'arrayBuffersBytesPerConn', title: 'arrayBuffers/conn', format: size },
    { key: 'maxNextReadBytes', title: 'max next read', format: size },
  ],
  timeoutSeconds: (p) => 60 + p.conns / 100,
};
export default scenario;
