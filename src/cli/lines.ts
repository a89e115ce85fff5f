// Output of the long-running ends (sink, blast): one JSON object per line with --json, else one line for people.
export type LineOut = (event: string, fields: Record<string, unknown>) => void;

export function lineWriter(
  json: boolean,
  human: (event: string, f: Record<string, unknown>) => string,
): LineOut {
  return (event, fields) => {
    process.stdout.write(`${json ? JSON.stringify({ event, ...fields }) : human(event, fields)}\n`);
  };
}
