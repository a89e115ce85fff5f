// What one report carries at most, so that a results file of any size makes a page a browser opens and
// text a terminal shows: long strings are cut (saying how much), a table shows its first rows on the page
// (the text report and --json keep them all), a chart its first labels and an even sample of its points,
// and the page's tables stop at a size budget. Every cut is said where it happens. Pure.

/** A string from a results file is shown up to this many characters. */
export const MAX_TEXT = 200;
/** A verdict line (ours, but it may quote strings from the file) up to this many. */
export const MAX_VERDICT = 2000;
/** Rows of one table on the page. */
export const MAX_PAGE_ROWS = 1000;
/** Characters of table markup on one page, all tables together (about 8 MB). */
export const MAX_PAGE_TABLE_CHARS = 8 << 20;
/** Columns of a table of a scenario the report does not know (one per key of its rows). */
export const MAX_COLUMNS = 40;
/** Bar groups (x labels), series, and points of one line of a chart. */
export const MAX_CHART_LABELS = 60;
export const MAX_CHART_SERIES = 12;
export const MAX_CHART_POINTS = 500;
/** Files of a merge shown on one page. */
export const MAX_FILES = 50;
/** Host sysctls and skipped entries listed per file. */
export const MAX_LIST = 100;

/** `text` cut to `max` characters, saying how many were left out (never splitting a surrogate pair). */
export function clip(text: string, max = MAX_TEXT): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]) ? max - 1 : max;
  return `${text.slice(0, end)}… (${(text.length - end).toLocaleString('en-US')} more characters)`;
}

/** Numbers for people in notes: 200,000. */
export const count = (n: number) => n.toLocaleString('en-US');
