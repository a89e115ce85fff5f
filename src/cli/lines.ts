// Output of the long-running ends (sink, blast): one JSON object per line with --json, else one line for people.
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
export type LineOut = (event: string, fields: Record<string, unknown>) => void;

export function lineWriter(
  json: boolean,
  human: (event: string, f: Record<string, unknown>) => string,
): LineOut {
  return (event, fields) => {
    process.stdout.write(`${json ? JSON.stringify({ event, ...fields }) : human(event, fields)}\n`);
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
  return undefined;
}
