// Writes docs/cli/options.md from the option registry (src/policy/option-registry.ts): every declared
// option with what it takes, its default, where it appears and serve's name for it. A test checks that
// the page in the repository is what this writes (test/scripts/cli-options-doc.test.ts).
//   npm run docs:cli
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expected, OPTIONS, type OptionDecl, type OptionName } from '../src/policy/option-registry.js';

export const PAGE = fileURLToPath(new URL('../docs/cli/options.md', import.meta.url));

/** A Markdown table padded the way the repository's formatter (Biome) pads one. */
function table(head: string[], rows: string[][]): string {
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i])).join(' | ')} |`;
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The page. */
export function optionsMarkdown(): string {
  const rows = (Object.entries(OPTIONS) as [OptionName, OptionDecl][]).map(([name, d]) => [
    `\`${d.flag} ${d.optionalValue ? `[${d.arg}]` : `<${d.arg}>`}\``,
    expected(name).replaceAll('|', '\\|'),
    d.default === undefined ? '' : `\`${d.default}\``,
    d.where.replaceAll('|', '\\|'),
    d.wire === undefined ? '' : `\`${d.wire}\``,
    d.doc.replaceAll('|', '\\|'),
  ]);
  return [
    '# Options declared once',
    '',
    '<!-- Written by `npm run docs:cli` from src/policy/option-registry.ts: edit the registry, not this page. -->',
    '',
    'Each of these options is declared once, in `src/policy/option-registry.ts`. The library checks its',
    "value against the declaration, the CLI's flag is made from it, and `sockbuf serve` bounds the",
    'parameter of the same name with it. So a value out of range says the same thing everywhere, such as',
    "`invalid value for --sockets: '0' (expected a whole number from 1 to 64)`.",
    '',
    'A usage error is one line on stderr, naming the option as you typed it, and the exit code is 2.',
    '',
    table(['option', 'takes', 'default', 'where', 'serve', 'what it is'], rows),
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(PAGE, optionsMarkdown());
  process.stderr.write(`wrote ${PAGE}\n`);
}
