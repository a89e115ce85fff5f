// runBench checks its own options before any end starts: a UsageError naming the option as a program
// writes it (`repeat`, `timeout`), which the CLI prints as its flag (--repeat, --timeout).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/index.js';
import { runBench } from '../../src/tools.js';

test('runBench: repeat out of 1 to 1000 and a timeout of 0 are UsageErrors naming the option', async () => {
  const bad: [Parameters<typeof runBench>[1], string][] = [
    [{ repeat: 0 }, 'repeat'],
    [{ repeat: 1.5 }, 'repeat'],
    [{ repeat: '1001' }, 'repeat'],
    [{ repeat: 1, timeout: '0s' }, 'timeout'],
  ];
  for (const [opts, option] of bad) {
    await assert.rejects(
      runBench('tcp', opts),
      (err: unknown) => err instanceof UsageError && err.option === option,
      JSON.stringify(opts),
    );
  }
});
