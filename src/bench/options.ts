// A scenario's (or a placement's) own options, declared as data: the CLI makes commander options of
// them, the library takes their values by name or parses an argv (node:util parseArgs). No commander.
import { parseArgs } from 'node:util';
import { UsageError } from '../errors.js';
import { type CountOption, checkWhole, OPTIONS } from '../policy/option-registry.js';

export interface OptionSpec {
  /** As on the command line: `--sizes <list>` takes a value; `--find-max` is a switch. */
  flags: string;
  /** One line for `--help`. */
  description: string;
  /** The value when the option is not given, as one would type it. */
  default?: string;
  /** Checks and converts a value given as text (throw UsageError naming the option); default: kept as typed. */
  parse?: (value: string, option: string) => unknown;
}

/**
 * A count option of the registry (src/policy/option-registry.ts) as a scenario's option: its flag, doc line,
 * default and range. `list`: a comma-separated list of them (the scenario's params() checks each);
 * `description`, `default`: the scenario's own where it says more or runs something else by default.
 */
export function declaredOption(
  name: CountOption,
  own: { list?: boolean; description?: string; default?: string } = {},
): OptionSpec {
  const d = OPTIONS[name];
  const dflt = own.default ?? ('default' in d ? String(d.default) : undefined);
  return {
    flags: `${d.flag} <${own.list ? 'list' : d.arg}>`,
    description: own.description ?? d.doc,
    ...(dflt === undefined ? {} : { default: dflt }),
    ...(own.list ? {} : { parse: (value: string, option: string) => checkWhole(name, value, option) }),
  };
}

/** Option values by name, the way commander names them (`--find-max` → `findMax`). */
export type OptionValues = Record<string, unknown>;

/**
 * The old form of a scenario's options (before they were data): a function handed an object with
 * commander's `option(flags, description, [parser,] default)`. Still accepted.
 */
export type OptionsFunction = (cmd: never) => unknown;

const FLAGS = /^--([a-z0-9][a-z0-9-]*)(?:[ =](<[^>]*>|\[[^\]]*\]))?$/i;

/** `--find-max` → { long: 'find-max', key: 'findMax', value: false }. */
export function optionName(flags: string): { long: string; key: string; value: boolean } {
  const m = FLAGS.exec(flags.trim());
  if (!m) throw new TypeError(`option flags '${flags}': expected --name, --name <value> or --name [value]`);
  return { long: m[1], key: m[1].replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()), value: !!m[2] };
}

/** The declared options, from the data form or by recording what the old function form declares. */
export function optionSpecs(options: OptionSpec[] | OptionsFunction | undefined): OptionSpec[] {
  if (options === undefined) return [];
  if (Array.isArray(options)) return options;
  const specs: OptionSpec[] = [];
  const add = (flags: string, description = '', a?: unknown, b?: unknown) => {
    const [parser, dflt] =
      typeof a === 'function' ? [a as (v: string, p: unknown) => unknown, b] : [undefined, a];
    specs.push({
      flags,
      description,
      default: dflt === undefined || typeof dflt === 'boolean' ? undefined : String(dflt),
      parse: parser && ((v: string) => parser(v, dflt)),
    });
    return recorder;
  };
  const known = { option: add, requiredOption: add };
  // anything else of commander's (addOption, …) has no data form: say how to migrate
  const recorder: typeof known = new Proxy(known, {
    get: (t, k) =>
      k in t
        ? t[k as keyof typeof t]
        : () => {
            throw new UsageError(
              `a scenario's options(cmd) calls cmd.${String(k)}(), which only commander has: declare the options as data ({ flags, description, default, parse })`,
            );
          },
  });
  (options as (cmd: typeof recorder) => unknown)(recorder);
  return specs;
}

/** Values by name with the defaults filled in and each text value through its parser; UsageError for a name not declared. */
export function optionValues(specs: OptionSpec[], given: OptionValues = {}): OptionValues {
  const byKey = new Map(specs.map((s) => [optionName(s.flags).key, s]));
  const out: OptionValues = {};
  for (const [key, value] of Object.entries(given)) {
    const spec = byKey.get(key);
    if (!spec) {
      throw new UsageError(`unknown option '${key}' (known: ${[...byKey.keys()].join(', ') || 'none'})`);
    }
    out[key] =
      spec?.parse && typeof value === 'string'
        ? spec.parse(value, `--${optionName(spec.flags).long}`)
        : value;
  }
  for (const [key, spec] of byKey) {
    if (out[key] === undefined && spec.default !== undefined) {
      out[key] = spec.parse ? spec.parse(spec.default, `--${optionName(spec.flags).long}`) : spec.default;
    }
  }
  return out;
}

/** An argv of these options (`['--sizes', '250,4000', '--find-max']`) as values by name. */
export function parseOptionArgv(specs: OptionSpec[], argv: string[]): OptionValues {
  const names = specs.map((s) => optionName(s.flags));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(names.map((n) => [n.long, { type: n.value ? 'string' : 'boolean' }])),
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const given: OptionValues = {};
  for (const n of names) {
    const v = parsed.values[n.long];
    if (v !== undefined) given[n.key] = v;
  }
  return given;
}
