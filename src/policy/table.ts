// A plain text table for people: a header, a rule, then rows; columns padded to their widest cell,
// text left-aligned, numbers right-aligned. Pure; any command can use it.

export type Align = 'left' | 'right';

export interface TableColumn {
  title: string;
  /** Default: right when every cell of the column starts with a digit, a sign or a dot. */
  align?: Align;
}

const NUMERIC = /^[-+]?[\d.]/;

export function formatTable(columns: (TableColumn | string)[], rows: string[][]): string {
  const cols = columns.map((c) => (typeof c === 'string' ? { title: c } : c));
  // a loop, not a spread: a spread of 120 000 rows into Math.max overflows the stack
  const widths = cols.map((c, i) => rows.reduce((w, r) => Math.max(w, (r[i] ?? '').length), c.title.length));
  const aligns = cols.map(
    (c, i) => c.align ?? (rows.length && rows.every((r) => NUMERIC.test(r[i] ?? '')) ? 'right' : 'left'),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (aligns[i] === 'right' ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [
    line(cols.map((c) => c.title)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(cols.map((_, i) => r[i] ?? ''))),
  ].join('\n');
}
