// The preload's replacement of node:dgram (module-hook.ts), in a process of its own as an application
// meets it: `import dgram from 'node:dgram'`, its named imports, require('dgram') and
// require('node:dgram') all give sockbuf/dgram's createSocket and Socket, whose sockets still read
// (through the original node:dgram, builtinOriginal), and no loader thread is started for it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('node --import sockbuf/dgram/register: every way to name node:dgram gives sockbuf/dgram, which receives', () => {
  assert.ok(existsSync(`${ROOT}dist/dgram-register.js`), 'dist/: run npm run build');
  const code = `
    import d, { createSocket, Socket } from 'node:dgram';
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const ours = (s) => typeof s.stats === 'function';
    const ways = [d.createSocket('udp4'), createSocket('udp4'), require('dgram').createSocket('udp4'),
      require('node:dgram').createSocket('udp4'), new Socket('udp4')];
    const s = ways[0];
    s.on('message', (m) => {
      console.log(JSON.stringify({ ours: ways.map(ours), instance: s instanceof Socket, got: String(m), mode: s.stats().mode }));
      for (const w of ways) w.close();
    });
    s.bind(0, '127.0.0.1', () => ways[1].send('hello', s.address().port, '127.0.0.1'));`;
  const r = spawnSync(
    process.execPath,
    ['--import', 'sockbuf/dgram/register', '--input-type=module', '-e', code],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    ours: [true, true, true, true, true],
    instance: true,
    got: 'hello',
    mode: 'main',
  });
});
