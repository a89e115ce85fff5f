// scripts/lib/rabbitmq.ts's rabbitmq.conf: a pin writes RabbitMQ's whole default tcp_listen_options
// back (the trap of issue 34: any key replaces the default list, and nodelay goes off), no pin writes
// none; a bad size fails before anything starts. Starting the real broker: test/real/rabbitmq.test.ts.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { brokerConfig, startBroker } from '../../scripts/lib/rabbitmq.js';

test('a pinned broker keeps nodelay and the default listen options; an autotuned one sets none', () => {
  const pinned = brokerConfig({ address: '10.201.0.2', port: 5672, recbuf: 16384, sndbuf: 131072 });
  assert.match(pinned, /^listeners\.tcp\.default = 10\.201\.0\.2:5672$/m);
  assert.match(pinned, /^tcp_listen_options\.nodelay = true$/m);
  assert.match(pinned, /^tcp_listen_options\.backlog = 128$/m);
  assert.match(pinned, /^tcp_listen_options\.recbuf = 16384$/m);
  assert.match(pinned, /^tcp_listen_options\.sndbuf = 131072$/m);
  const recvOnly = brokerConfig({ address: '127.0.0.1', port: 1, recbuf: 4096 });
  assert.doesNotMatch(recvOnly, /sndbuf/);
  assert.match(recvOnly, /nodelay = true/);
  const autotuned = brokerConfig({ address: '127.0.0.1', port: 1 });
  assert.doesNotMatch(autotuned, /tcp_listen_options/);
  assert.match(brokerConfig({ address: '127.0.0.1', port: 1, nodelay: false }), /nodelay = false/);
});

test('a bad buffer size fails before a broker or a temp dir exists', async () => {
  const dirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`sockbuf-rabbitmq-${process.pid}-`));
  await assert.rejects(startBroker({ recbuf: 0 }), /recbuf: not a positive integer: 0/);
  await assert.rejects(startBroker({ sndbuf: 1.5 }), /sndbuf: not a positive integer: 1\.5/);
  assert.deepEqual(dirs(), []);
});
