// The deploy artefacts as an operator ships them unchanged: the systemd unit installed by its own
// header's steps (npm install -g of the packed tarball, for npm's global prefix /usr and /usr/local)
// passes `systemd-analyze verify` (in a --root of its own, so that nothing is installed on this host);
// the manifest creates the namespace it uses; the Dockerfile builds from a supported Node LTS base as a
// non-root user, from a context of exactly one tarball (checked as text: no image registry here).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'docs/deploy');
const UNIT = readFileSync(join(DEPLOY, 'sockbuf-exporter.service'), 'utf8');
const NO_SYSTEMD = spawnSync('systemd-analyze', ['--version']).error
  ? 'systemd-analyze is not installed'
  : false;

test("the unit, installed by its header's steps under npm prefix /usr or /usr/local, passes systemd-analyze verify", {
  skip:
    NO_SYSTEMD || (existsSync('/usr/lib/systemd/system/sysinit.target') ? false : 'no systemd units here'),
  timeout: 180_000,
}, () => {
  assert.ok(existsSync(join(ROOT, 'dist/cli/main.js')), 'dist/cli/main.js: run npm run build');
  // the header's steps, word for word
  assert.match(UNIT, /^# {3}npm install -g \.\/sockbuf-0\.1\.0\.tgz /m);
  assert.match(UNIT, /^# {3}cp sockbuf-exporter\.service \/etc\/systemd\/system\//m);
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-unit-'));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      }),
    );
    for (const prefix of ['usr', 'usr/local']) {
      const root = join(dir, prefix.replace('/', '-'));
      mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
      mkdirSync(join(root, 'usr/lib'), { recursive: true });
      // the host's own units (sysinit.target …), for the dependencies verify loads
      symlinkSync('/usr/lib/systemd', join(root, 'usr/lib/systemd'));
      execFileSync(
        'npm',
        [
          'install',
          '-g',
          '--prefix',
          join(root, prefix),
          '--prefer-offline',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          join(dir, packed.filename),
        ],
        { cwd: dir, encoding: 'utf8', timeout: 90_000, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      assert.ok(existsSync(join(root, prefix, 'bin/sockbuf')), `npm put sockbuf in /${prefix}/bin`);
      const verify = (unit: string) => {
        writeFileSync(join(root, 'etc/systemd/system/sockbuf-exporter.service'), unit);
        return spawnSync('systemd-analyze', ['verify', `--root=${root}`, 'sockbuf-exporter.service'], {
          encoding: 'utf8',
          timeout: 30_000,
        });
      };
      const ok = verify(UNIT);
      assert.equal(ok.status, 0, `/${prefix}: ${ok.stderr}`);
      assert.doesNotMatch(ok.stderr, /sockbuf-exporter\.service:/, `/${prefix}: ${ok.stderr}`);
      // and it can fail: a command that is not there, as /usr/local/bin/sockbuf was under prefix /usr
      const bad = verify(UNIT.replace('ExecStart=sockbuf', 'ExecStart=/usr/local/bin/sockbuf-missing'));
      assert.notEqual(bad.status, 0);
      assert.match(bad.stderr, /sockbuf-missing is not executable/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the manifest creates the namespace its DaemonSet lives in, first', () => {
  const docs = parseAllDocuments(readFileSync(join(DEPLOY, 'sockbuf-exporter-daemonset.yaml'), 'utf8')).map(
    (d) => {
      assert.deepEqual(d.errors, []);
      return d.toJS();
    },
  );
  assert.deepEqual(
    docs.map((d) => `${d.apiVersion} ${d.kind}`),
    ['v1 Namespace', 'apps/v1 DaemonSet'],
  );
  const [ns, ds] = docs;
  assert.equal(ns.metadata.name, ds.metadata.namespace);
  assert.equal(ns.metadata.name, 'monitoring');
  assert.equal(ns.metadata.namespace, undefined, 'a namespace is cluster-scoped');
});

/** The Dockerfile's instructions (continuation lines joined, comments dropped). */
function instructions(text: string): { op: string; arg: string }[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), arg: rest.join(' ') };
    });
}

test('the Dockerfile: a supported Node LTS base, a non-root user with the two capabilities, one tarball, a .dockerignore', () => {
  const text = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
  const ins = instructions(text);
  const from = ins.filter((i) => i.op === 'FROM');
  assert.equal(from.length, 1);
  // Node 20 reached its end of life on 2026-04-30; 22 (to 2027-04-30), 24 (to 2028-04-30) and 26 are LTS lines
  const major = Number(/^node:(\d+)[-\w.]*$/.exec(from[0].arg)?.[1]);
  assert.ok([22, 24, 26].includes(major), `base ${from[0].arg}: a Node LTS line that is still maintained`);
  // the library's own floor stays Node 20.19
  assert.equal(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node, '>=20.19');
  const users = ins.filter((i) => i.op === 'USER');
  assert.ok(users.length >= 1, 'a USER line');
  const user = users[users.length - 1].arg;
  assert.ok(!['root', '0', '0:0'].includes(user), `runs as ${user}`);
  assert.match(text, /setcap cap_sys_ptrace,cap_dac_read_search\+ep /, 'the two capabilities');
  // COPY into a directory takes every match; the RUN after it refuses anything but exactly one
  const copy = ins.filter((i) => i.op === 'COPY');
  assert.deepEqual(
    copy.map((c) => c.arg),
    ['sockbuf-*.tgz /tmp/sockbuf/'],
  );
  assert.match(text, /set -- \/tmp\/sockbuf\/sockbuf-\*\.tgz/);
  assert.match(text, /if \[ "\$#" -ne 1 \]; then .*exit 1; fi/);
  assert.match(text, /npm install -g --omit=dev --ignore-scripts --no-audit --no-fund "\$1"/);
  // the build context: only the tarball, whichever directory is given
  const ignore = readFileSync(join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(ignore, ['*', '!sockbuf-*.tgz']);
  // the documented build commands make a context of one tarball
  for (const f of ['Dockerfile', 'sockbuf-exporter-daemonset.yaml']) {
    const doc = readFileSync(join(DEPLOY, f), 'utf8');
    assert.match(doc, /rm -rf image && mkdir image && npm pack --pack-destination image/, f);
    assert.match(doc, /docker build -f docs\/deploy\/Dockerfile -t \S+ image$/m, f);
  }
});
