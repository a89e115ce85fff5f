import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { closeTun, openTun } from '../../src/sys/tun.js';

const root = process.getuid?.() === 0;

function links(): string {
  return execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' });
}

test('a tun device with GSO passthrough, gone when its fd closes', {
  skip: !root && 'needs root (tun devices)',
}, () => {
  const name = `sbt-${process.pid}`.slice(0, 15);
  const dev = openTun(name);
  try {
    assert.equal(dev.name, name);
    assert.ok(dev.gso, 'the kernel takes TSO offloads on tun');
    assert.match(links(), new RegExp(`: ${name}:`));
    const features = execFileSync('ethtool', ['-k', name], { encoding: 'utf8' }).toString();
    assert.match(features, /tcp-segmentation-offload: on/);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // no ethtool: the offload flag above stands
    throw err;
  } finally {
    closeTun(dev);
  }
  assert.doesNotMatch(links(), new RegExp(`: ${name}:`));
});

test('a name too long for a network device is refused before any syscall', () => {
  assert.throws(() => openTun('a-name-longer-than-15'), /too long/);
});
