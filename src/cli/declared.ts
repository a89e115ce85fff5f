// commander options made from the option registry (src/policy/option-registry.ts): the flag, the value's name,
// the doc line, the default and the choices are the declaration's; a count, size, duration or bit rate is
// checked as it is parsed, by the same checkOption() as the library, so `--sockets 0` and `sockets: 0`
// say the same thing, and the command gets the number in the declared unit.
import { Option } from 'commander';
import {
  checkOption,
  type MeasureOption,
  OPTIONS,
  type OptionDecl,
  type OptionName,
} from '../policy/option-registry.js';

const CHECKED = new Set(['count', 'size', 'duration', 'bitRate']);

/**
 * The declared option `name` as a commander Option; `doc` replaces the declared line where a command says
 * more. `inLibrary`: the command leaves the option out when it is not given (the library applies the
 * default, as where --bytes replaces --duration); --help still shows the default.
 */
export function declared(name: OptionName, doc?: string, inLibrary = false): Option {
  const d: OptionDecl = OPTIONS[name];
  const value = d.optionalValue ? `[${d.arg}]` : `<${d.arg}>`;
  const o = new Option(`${d.flag} ${value}`, doc ?? d.doc);
  if (d.choices) o.choices(d.choices);
  const checked = CHECKED.has(d.kind);
  const check = (v: unknown, flag?: string) => checkOption(name as MeasureOption, v, flag);
  if (checked) o.argParser((v: string) => check(v, d.flag));
  if (d.default !== undefined && !d.optionalValue)
    // commander does not parse a default: it gets the parsed value, --help shows it as written
    o.default(inLibrary ? undefined : checked ? check(d.default) : d.default, String(d.default));
  return o;
}
