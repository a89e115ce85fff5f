// Output of the long-running ends (sink, blast): one JSON object per line with --json, else one line for
// people. Text for people never carries a control character that came from input (a peer's, a file's, a
// process name): each is shown escaped (printable); JSON escapes them itself.
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { printable } from '../policy/printable.js';

/** Writes one event: any end's event or result object (its fields as they are). */
export type LineOut = (event: string, fields: object) => void;

/** `v` with every string in it (nested too) made printable, for a formatter that writes text. */
export function printableFields<T>(v: T): T {
  if (typeof v === 'string') return printable(v) as T;
  if (Array.isArray(v)) return v.map(printableFields) as T;
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, printableFields(x)])) as T;
  return v;
}

/** Text for people: its own line breaks stay, any other control character is shown escaped. */
export function printableText(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

export function lineWriter(
  json: boolean,
  human: (event: string, f: Record<string, unknown>) => string,
): LineOut {
  return (event, fields) => {
    // the fields are escaped before the formatter sees them; its own line breaks stay
    const line = json
      ? JSON.stringify({ event, ...fields })
      : printableText(human(event, printableFields(fields as Record<string, unknown>)));
    process.stdout.write(`${line}\n`);
  };
}

/**
 * Checks, before anything runs, that FILE can be written where asked (its folder exists and is a
 * folder): a long run must not end in a raw ENOENT. Returns the reason, or undefined when it can.
 */
export function outputFileProblem(file: string, option: string): string | undefined {
  if (file.trim() === '') return `invalid value for ${option}: '' (expected a file name)`;
  const dir = dirname(resolve(file));
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(dir);
  } catch {
    return `invalid value for ${option}: '${file}' (the folder ${dir} does not exist)`;
  }
  if (!st.isDirectory()) return `invalid value for ${option}: '${file}' (${dir} is not a folder)`;
  const target = statSync(file, { throwIfNoEntry: false });
  if (target?.isDirectory()) return `invalid value for ${option}: '${file}' (a folder: expected a file name)`;
  return undefined;
}
