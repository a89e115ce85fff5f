// The shared advice: plain sentences that the doctor, inspect and the alert rules all print.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diagnose } from '../../src/doctor/rules.js';
import { rulesYaml } from '../../src/observe/alerts.js';
import { ADVICE } from '../../src/policy/advice.js';

test('each advice is a plain clause: no template syntax, no final full stop (callers punctuate)', () => {
  for (const [name, a] of Object.entries(ADVICE))
    for (const text of [a.cause, a.fix]) {
      assert.ok(text.length > 10, name);
      assert.doesNotMatch(text, /\{\{|\}\}|\n/, name);
      assert.doesNotMatch(text, /\.$/, name);
    }
});

test('the doctor and the alert rules say the same words', () => {
  const findings = diagnose(
    { sysctls: {}, udp: { RcvbufErrors: 5 }, softnetDrops: 3, procSysReadOnly: false },
    { bitsPerSecond: 1e9, rttSeconds: 0.001, udpRcvbufBytes: 8 << 20 },
  );
  const explanation = (name: string) => findings.find((f) => f.name === name)?.explanation ?? '';
  // the rules file folds long lines: compare with whitespace collapsed
  const rules = rulesYaml().replace(/\n\s+/g, ' ');
  for (const [name, a] of [
    ['Udp.RcvbufErrors', ADVICE.udpRcvbuf],
    ['softnet.dropped', ADVICE.softnetDropped],
  ] as const) {
    assert.ok(explanation(name).includes(a.cause), name);
    assert.ok(explanation(name).includes(a.fix), name);
    assert.ok(rules.includes(`Cause: ${a.cause}. What to do: ${a.fix}.`), name);
  }
});
