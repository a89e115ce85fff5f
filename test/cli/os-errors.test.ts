// A value the kernel or the file system refuses is said with the option that carried it (issue 37
// item 5): bind EINVAL for a link-local --listen without its interface, a folder given to --html or
// --out, an address not of this host. One line, exit 2 for a value that cannot be, 3 for the host's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SOCKBUF_ARGV } from './argv.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/results-hand.json', import.meta.url));

function sockbuf(args: string[]) {
  return spawnSync(process.execPath, [...SOCKBUF_ARGV, ...args], { encoding: 'utf8', timeout: 60_000 });
}

test('a link-local --listen without its interface (bind EINVAL): one line naming --listen, exit 2', () => {
  for (const command of [['sink', 'tcp'], ['sink', 'udp'], ['exporter']]) {
    const r = sockbuf([...command, '--listen', '[fe80::1]:0']);
    assert.equal(r.status, 2, `${command.join(' ')}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /^sockbuf: invalid value for --listen: '\[fe80::1\]:0' \(the kernel refused it: EINVAL; a link-local address needs its interface, such as \[fe80::1%eth0\]:PORT\)\n$/,
    );
  }
});

test('an address not of this host (EADDRNOTAVAIL): one line naming --listen, exit 3', () => {
  // 192.0.2.1: TEST-NET-1, never an address of this host
  const r = sockbuf(['sink', 'tcp', '--listen', '192.0.2.1:0']);
  assert.equal(r.status, 3, r.stderr);
  assert.equal(r.stderr, "sockbuf: --listen '192.0.2.1:0': not an address of this host (EADDRNOTAVAIL)\n");
});

test('a folder given as --html or --out: one line naming the option, exit 2, nothing written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-os-errors-'));
  try {
    for (const args of [
      ['report', FIXTURE, '--html', dir],
      ['bench', 'tcp', '--html', dir],
      ['bench', '--out', dir],
    ]) {
      const r = sockbuf(args);
      assert.equal(r.status, 2, r.stderr);
      const flag = args.at(-2);
      assert.equal(
        r.stderr,
        `sockbuf: invalid value for ${flag}: '${dir}' (a folder: expected a file name)\n`,
      );
    }
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
