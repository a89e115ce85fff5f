// How an error shows a value it refused (units.ts and shape.ts both say it; neither imports the other). Pure.

/** A value as an error shows it: a string as written, an object by its kind. */
export function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return String(value);
}
