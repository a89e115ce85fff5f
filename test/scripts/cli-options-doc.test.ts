// docs/cli/options.md is what `npm run docs:cli` writes from the option registry: a declaration changed
// without the page written again fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { optionsMarkdown, PAGE } from '../../scripts/cli-options-doc.js';
import { OPTIONS } from '../../src/policy/option-registry.js';

test('docs/cli/options.md is current (npm run docs:cli), a row for every declared option', () => {
  const page = optionsMarkdown();
  assert.equal(readFileSync(PAGE, 'utf8'), page, 'docs/cli/options.md is stale: npm run docs:cli');
  for (const d of Object.values(OPTIONS)) assert.ok(page.includes(`| \`${d.flag} `), d.flag);
  assert.match(page, /\| `--sockets <n>` +\| a whole number from 1 to 64 +\| `1` /);
});
