// Finds scenarios: the built-in ones are the files of src/bench/scenarios/ (each default-exports a
// Scenario and is named after it), and any path to such a module works too (`./my-bench.js`).
import { readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UsageError } from '../errors.js';
import { MODULE_EXT } from '../sys/package.js';
import type { Scenario } from './scenario.js';

const HERE = fileURLToPath(import.meta.url);
const DIR = join(dirname(HERE), 'scenarios');
const EXT = MODULE_EXT; // .js when built, .ts under tsx

/** The names of the built-in scenarios (file names without extension), sorted. */
export function scenarioNames(): string[] {
  let files: string[];
  try {
    files = readdirSync(DIR);
  } catch {
    return [];
  }
  return files
    .filter((f) => f.endsWith(EXT) && !f.endsWith(`.d${EXT}`))
    .map((f) => f.slice(0, -EXT.length))
    .sort();
}

function check(s: unknown, from: string): Scenario {
  const v = s as Partial<Scenario> | undefined;
  const fns = ['params', 'points', 'ends', 'row'] as const;
  if (!v || typeof v.name !== 'string' || fns.some((f) => typeof v[f] !== 'function')) {
    throw new UsageError(
      `invalid value for <scenario>: '${from}' (its default export is not a Scenario: name, params, points, ends, row)`,
      '<scenario>',
    );
  }
  return v as Scenario;
}

function isPath(arg: string): boolean {
  return arg.includes('/') || /\.(m?js|ts)$/.test(arg);
}

/** A built-in scenario by name, or a scenario module by path. UsageError if there is none. */
export async function loadScenario(arg: string): Promise<Scenario> {
  if (isPath(arg)) {
    const file = isAbsolute(arg) ? arg : resolve(arg);
    let mod: { default?: unknown };
    try {
      mod = await import(pathToFileURL(file).href);
    } catch (err) {
      throw new UsageError(
        `invalid value for <scenario>: '${arg}' (cannot load it: ${(err as Error).message})`,
        '<scenario>',
      );
    }
    return check(mod.default, arg);
  }
  const names = scenarioNames();
  if (!names.includes(arg)) {
    throw new UsageError(
      `invalid value for <scenario>: '${arg}' (known: ${names.join(', ') || 'none yet'}; or a path to a scenario module)`,
      '<scenario>',
    );
  }
  const mod = (await import(pathToFileURL(join(DIR, arg + EXT)).href)) as { default?: unknown };
  return check(mod.default, arg);
}

/** Every built-in scenario, loaded (for the list in `sockbuf bench --help`). */
export async function loadScenarios(): Promise<Scenario[]> {
  return Promise.all(scenarioNames().map((n) => loadScenario(n)));
}
