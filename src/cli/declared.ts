// commander options made from the option registry (src/policy/option-registry.ts): the flag, the value's name,
// the doc line, the default and the choices are the declaration's; a count is checked as it is parsed,
// by the same checkWhole() as the library, so `--sockets 0` and `sockets: 0` say the same thing.
import { Option } from 'commander';
import { checkWhole, OPTIONS, type OptionDecl, type OptionName } from '../policy/option-registry.js';

/** The declared option `name` as a commander Option; `doc` replaces the declared line where a command says more. */
export function declared(name: OptionName, doc?: string): Option {
  const d: OptionDecl = OPTIONS[name];
  const value = d.optionalValue ? `[${d.arg}]` : `<${d.arg}>`;
  const o = new Option(`${d.flag} ${value}`, doc ?? d.doc);
  if (d.choices) o.choices(d.choices);
  if (d.kind === 'count')
    o.argParser((v: string) => checkWhole(name as Parameters<typeof checkWhole>[0], v, d.flag));
  if (d.default !== undefined && !d.optionalValue) o.default(d.default);
  return o;
}
