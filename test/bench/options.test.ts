// Options declared as data: names, defaults, parsers, an argv through parseArgs, and the old
// function form (`options: (cmd) => cmd.option(…)`) recorded into the same data.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type OptionSpec,
  optionName,
  optionSpecs,
  optionValues,
  parseOptionArgv,
} from '../../src/bench/options.js';
import { loadScenario } from '../../src/bench/scenario-registry.js';
import { UsageError } from '../../src/errors.js';
import { parseWhole } from '../../src/policy/option-registry.js';

const SPECS: OptionSpec[] = [
  { flags: '--sizes <list>', description: 'sizes', default: '250,4000' },
  { flags: '--find-max', description: 'search' },
  { flags: '--steps <n>', description: 'steps', default: '6', parse: (v, o) => parseWhole(v, o, 1, 20) },
  { flags: '--remote <host[:port]>', description: 'far end' },
];

test('option names as commander makes them', () => {
  assert.deepEqual(optionName('--find-max'), { long: 'find-max', key: 'findMax', value: false });
  assert.deepEqual(optionName('--remote <host[:port]>'), { long: 'remote', key: 'remote', value: true });
  assert.deepEqual(optionName('--gro [mode]'), { long: 'gro', key: 'gro', value: true });
  assert.throws(() => optionName('-x'), TypeError);
});

test('values by name: defaults filled in, parsers run, unknown names refused', () => {
  assert.deepEqual(optionValues(SPECS, {}), { sizes: '250,4000', steps: 6 });
  assert.deepEqual(optionValues(SPECS, { findMax: true, steps: '3' }), {
    findMax: true,
    steps: 3,
    sizes: '250,4000',
  });
  assert.throws(
    () => optionValues(SPECS, { steps: '99' }),
    (e: Error) => e instanceof UsageError && /--steps/.test(e.message),
  );
  assert.throws(
    () => optionValues(SPECS, { size: '1' }),
    (e: Error) => e instanceof UsageError && /unknown option 'size'/.test(e.message),
  );
});

test('an argv through parseArgs: values, switches, and unknown options as usage errors', () => {
  assert.deepEqual(parseOptionArgv(SPECS, ['--sizes', '1,2', '--find-max', '--remote=[::1]:5209']), {
    sizes: '1,2',
    findMax: true,
    remote: '[::1]:5209',
  });
  assert.throws(() => parseOptionArgv(SPECS, ['--no-such']), UsageError);
  assert.throws(() => parseOptionArgv(SPECS, ['extra']), UsageError);
});

test('the old function form is recorded into the same data (a user scenario module keeps working)', async () => {
  const specs = optionSpecs((cmd: { option: (...a: unknown[]) => unknown }) => {
    cmd.option('--mode <mode>', 'how', 'ok');
    cmd.option('--count <n>', 'how many', (v: string) => Number(v) * 2, 5);
    cmd.option('--quiet', 'say less');
  });
  assert.deepEqual(
    specs.map((s) => [s.flags, s.default]),
    [
      ['--mode <mode>', 'ok'],
      ['--count <n>', '5'],
      ['--quiet', undefined],
    ],
  );
  assert.deepEqual(optionValues(specs, { count: '4' }), { count: 8, mode: 'ok' });
  // the test fixture is such a module
  const pair = await loadScenario(new URL('../fixtures/bench/pair-scenario.mjs', import.meta.url).pathname);
  assert.equal(typeof pair.options, 'function');
  assert.deepEqual(
    optionSpecs(pair.options).map((s) => s.flags),
    ['--mode <mode>', '--values <list>', '--counter <file>', '--pidfile <file>'],
  );
});

test('every built-in scenario declares its options as data', async () => {
  for (const name of ['drain', 'idle', 'ping', 'streamer', 'sysctl-sweep', 'tcp', 'udp']) {
    const s = await loadScenario(name);
    assert.ok(Array.isArray(s.options), name);
    for (const o of s.options as OptionSpec[]) optionName(o.flags);
  }
});
