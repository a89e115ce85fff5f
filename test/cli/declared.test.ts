// A bad value says the same thing from the CLI as from the library (issue 38 item 3): both check it
// against the one declaration (src/policy/option-registry.ts), the CLI as it parses (`--sockets 0` and
// `--sockets -1` alike, where the CLI once let 0 through to another range and said "from 0" for -1).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { declared } from '../../src/cli/declared.js';
import { diagnose } from '../../src/doctor/diagnose.js';
import { UsageError } from '../../src/errors.js';
import { createUdpReceiver } from '../../src/index.js';
import { OPTIONS } from '../../src/policy/option-registry.js';
import { probeHandler } from '../../src/serve/probe-http.js';
import { createUdpBlast, runTcpBlast, startExporter } from '../../src/tools.js';
import { SOCKBUF_ARGV } from './argv.js';

/** The one line the CLI prints for `args` (exit 2). */
function cliLine(args: string[]): string {
  const r = spawnSync(process.execPath, [...SOCKBUF_ARGV, ...args], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 2, r.stderr);
  return r.stderr;
}

/** The line the CLI would print for the library's UsageError (main.ts names options by their flags). */
async function libraryLine(f: () => unknown): Promise<string> {
  try {
    await f();
  } catch (err) {
    assert.ok(err instanceof UsageError, String(err));
    return `sockbuf: ${err.describe((n) => `--${n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)}\n`;
  }
  assert.fail('the library took it');
}

test('--sockets 0 and --sockets -1: the same message from the CLI and from createUdpReceiver', async () => {
  for (const bad of [0, -1, 65]) {
    const cli = cliLine(['sink', 'udp', '--listen', '127.0.0.1:0', '--sockets', String(bad)]);
    assert.equal(
      cli,
      `sockbuf: invalid value for --sockets: '${bad}' (expected a whole number from 1 to 64)\n`,
    );
    assert.equal(await libraryLine(() => createUdpReceiver({ listen: '127.0.0.1:0', sockets: bad })), cli);
  }
});

test('blast udp --flows, --batch and --size: the CLI and createUdpBlast say the same, naming the option typed', async () => {
  const to = '127.0.0.1:9';
  for (const [flag, value, options] of [
    ['--flows', '2000', { flows: 2000 }],
    ['--flows', '0', { flows: 0 }],
    ['--batch', '0', { batch: 0 }],
    ['--size', '0', { size: 0 }],
  ] as const) {
    const cli = cliLine(['blast', 'udp', '--to', to, flag, value]);
    assert.match(cli, new RegExp(`^sockbuf: invalid value for ${flag}: '${value}'`));
    assert.equal(await libraryLine(() => createUdpBlast({ to, ...options })), cli);
  }
});

test('blast tcp --parallel, exporter --top and --probe-max-concurrent: one range, from the CLI and the library', async () => {
  const parallel = cliLine(['blast', 'tcp', '--to', '127.0.0.1:9', '--parallel', '0']);
  assert.equal(
    await libraryLine(() =>
      runTcpBlast({ host: '127.0.0.1', port: 9, size: 65536, parallel: 0 } as never, () => {}),
    ),
    parallel,
  );
  const top = cliLine(['exporter', '--top', '-1']);
  assert.equal(await libraryLine(() => startExporter({ port: 0, top: -1 })), top);
  const concurrent = cliLine(['exporter', '--probe-allow', '127.0.0.1', '--probe-max-concurrent', '65']);
  assert.equal(
    await libraryLine(() => probeHandler({ allow: '127.0.0.1', maxConcurrent: 65 })).then((l) =>
      l.replace('--max-concurrent', '--probe-max-concurrent'),
    ),
    concurrent,
  );
});

test("a declared option's commander Option carries the declaration: flag, doc, default, choices", () => {
  const sockets = declared('sockets');
  assert.equal(sockets.flags, '--sockets <n>');
  assert.equal(sockets.description, OPTIONS.sockets.doc);
  assert.equal(sockets.defaultValue, OPTIONS.sockets.default);
  assert.deepEqual(declared('receiver').argChoices, [...OPTIONS.receiver.choices]);
  assert.equal(declared('gro').flags, '--gro [mode]');
});

test('sizes, durations and bit rates: doctor --rtt/--bandwidth/--udp-rcvbuf and blast udp --size say what diagnose and createUdpBlast say', async () => {
  for (const [flag, value, options] of [
    ['--rtt', '2m', { rtt: '2m' }],
    ['--rtt', '0ms', { rtt: '0ms' }],
    ['--bandwidth', '20tbit', { bandwidth: '20tbit' }],
    ['--udp-rcvbuf', '4GiB', { udpRcvbuf: '4GiB' }],
  ] as const) {
    const cli = cliLine(['doctor', flag, value]);
    assert.match(cli, new RegExp(`^sockbuf: invalid value for ${flag}: '${value}' \\(expected a `));
    assert.equal(await libraryLine(() => diagnose({ ...options, sockets: false })), cli);
  }
  const size = cliLine(['blast', 'udp', '--to', '127.0.0.1:9', '--size', '65508']);
  assert.equal(size, "sockbuf: invalid value for --size: '65508' (expected a size from 1 B to 65507 B)\n");
  assert.equal(await libraryLine(() => createUdpBlast({ to: '127.0.0.1:9', size: '65508' })), size);
});

test('a size, duration or bit rate option is parsed by commander into the declared unit, its default too', () => {
  const rtt = declared('rtt');
  assert.equal(rtt.defaultValue, 2, 'doctor takes milliseconds');
  assert.equal(rtt.defaultValueDescription, '2ms');
  assert.equal(rtt.parseArg?.('1.5s', undefined), 1500);
  assert.equal(declared('frameSize').defaultValue, 128 * 1024);
  assert.equal(declared('bandwidth').parseArg?.('1gbit', undefined), 1e9);
  // the library applies it: --bytes may replace --duration
  assert.equal(declared('duration', undefined, true).defaultValue, undefined);
  assert.throws(
    () => declared('interval').parseArg?.('5ms', undefined),
    /--interval: '5ms' \(expected a duration from 10 ms to 1 h\)/,
  );
});
