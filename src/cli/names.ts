// A host name that did not resolve, said with what carried it on the command line.
import type { Command } from 'commander';
import type { ResolveError } from '../errors.js';

/** A name that did not resolve, said with the option that carried it (`--to`, `--listen`, `--remote`). */
export function resolveMessage(command: Command, err: ResolveError): string {
  const values = command.opts();
  const option = command.options.find((o) => String(values[o.attributeName()] ?? '').includes(err.host));
  if (option?.long)
    return `cannot resolve ${option.long} '${values[option.attributeName()]}': no such host '${err.host}' (${err.code})`;
  // an argument, such as remote's <server>
  const i = command.processedArgs.findIndex((a) => String(a).includes(err.host));
  const arg = command.registeredArguments[i];
  if (!arg) return err.message;
  return `cannot resolve <${arg.name()}> '${command.processedArgs[i]}': no such host '${err.host}' (${err.code})`;
}
