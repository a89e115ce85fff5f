// The receiving ends print their ready line the same way: on stdout, `listening on [HOST]:PORT` with
// IPv6 in brackets, then any detail (sink tcp, sink tcp --iperf3 and sink udp; before, sink udp wrote
// "sink udp: listening on" to stderr and sink tcp --iperf3 printed ::1:PORT without brackets), and so do
// serve and the exporter (serve wrote "sockbuf serve: listening on" to stderr; the exporter's URL line stays
// on stderr as its log).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from './argv.js';

for (const args of [['sink', 'tcp'], ['sink', 'tcp', '--iperf3'], ['sink', 'udp'], ['serve'], ['exporter']]) {
  test(`${args.join(' ')} --listen [::1]:0: the first stdout line is "listening on [::1]:PORT"`, {
    timeout: 30_000,
  }, async () => {
    const child = spawn(process.execPath, [...SOCKBUF_ARGV, ...args, '--listen', '[::1]:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((r) => child.once('close', r));
    try {
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('close', () => reject(new Error(`exited before its ready line: ${stderr}`)));
      });
      assert.match(first, /^listening on \[::1\]:\d+( .+)?$/);
      assert.doesNotMatch(stderr, /listening on/, 'the ready line is on stdout only');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
}
