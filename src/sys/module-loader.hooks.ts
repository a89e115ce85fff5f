// The ES module side of module-hook.ts: runs in Node's loader thread (module.register) and resolves
// the named built-ins to the replacement, except for importers inside this package.
interface Data {
  names: string[];
  target: string;
  root: string;
}

let data: Data = { names: [], target: '', root: '' };

export function initialize(d: Data): void {
  data = d;
}

type Next = (specifier: string, context: { parentURL?: string }) => Promise<unknown>;

export async function resolve(
  specifier: string,
  context: { parentURL?: string },
  next: Next,
): Promise<unknown> {
  if (data.names.includes(specifier) && !context.parentURL?.startsWith(data.root))
    return { url: data.target, shortCircuit: true };
  return next(specifier, context);
}
