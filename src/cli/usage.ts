// Every usage error of the command line is one line, through one path: commander's own (an unknown
// option, a missing value, a bad choice, a required option not given, an argument too many) become a
// UsageError here that names the flag as typed and what it expects, with a hint to --help; main.ts
// prints it (exit 2). Commands are made with `usageCommand()` so that each, a scenario's too, does this.
import { Command, type HelpContext, type Option } from 'commander';
import { UsageError } from '../errors.js';

/** `sockbuf sink udp` for the command `udp` under `sink`. */
function path(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** An option's value as the help shows it: `--listen <[host:]port>` → `[host:]port`. */
const valueName = (o: Option) => /\s[<[](.*)[>\]]$/.exec(o.flags)?.[1] ?? 'a value';

/** The UsageError that `f` throws (commander's error() throws one here). */
function catching(f: () => never): UsageError {
  try {
    f();
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
}

/** What an option takes, in words: its choices, else its value's name and its description. */
function expects(o: Option): string {
  if (o.argChoices) return o.argChoices.join(', ');
  return `${valueName(o)}: ${o.description}`;
}

/** The option of `cmd` (or an ancestor's) whose flags are `flags` as commander quotes them. */
function findOption(cmd: Command, flags: string): Option | undefined {
  for (let c: Command | null = cmd; c; c = c.parent) {
    const o = c.options.find((x) => x.flags === flags);
    if (o) return o;
  }
  return undefined;
}

/** The first word of `args` that looks like an option and that `cmd` does not know. */
function unknownOf(cmd: Command, args: readonly string[]): string | undefined {
  for (const a of args) {
    if (a === '--') return undefined;
    if (
      a.length > 1 &&
      a.startsWith('-') &&
      !cmd.options.some((o) => o.long === a.split('=')[0] || o.short === a)
    )
      return a;
  }
  return undefined;
}

/**
 * commander's error `message` (with its `code`) for `cmd` as one UsageError: the flag as the user typed
 * it, what it expects, and where the help is.
 */
export function usageFromCommander(cmd: Command, message: string, code: string | undefined): UsageError {
  const where = path(cmd);
  const hint = `; see '${where} --help'`;
  // commander puts its suggestion on a line of its own; a value keeps its own characters (main.ts escapes them)
  const text = message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean/, ' (Did you mean')
    .replace(/\n$/, '');
  const quoted = (re: RegExp) => re.exec(text)?.slice(1) ?? [];
  switch (code) {
    case 'commander.unknownOption': {
      const [flag, suggestion] = quoted(
        /^unknown option '(.*?)'(?: \(Did you mean (?:one of )?(.*?)\?\))?$/s,
      );
      return new UsageError(
        `unknown option '${flag}' for '${where}'${suggestion ? ` (did you mean ${suggestion}?)` : ''}${hint}`,
        String(flag),
      );
    }
    case 'commander.optionMissingArgument': {
      const [flags] = quoted(/^option '(.*?)' argument missing$/s);
      const o = findOption(cmd, String(flags));
      const name = o?.long ?? String(flags);
      const expected = o ? expects(o) : 'a value';
      return new UsageError(`${name} needs a value (${expected})${hint}`, name, { expected });
    }
    case 'commander.missingMandatoryOptionValue': {
      // an unknown option after it hid the required one from commander (it stops at the unknown)
      const unknown = unknownOf(cmd, cmd.args);
      if (unknown) {
        // commander's own unknownOption() adds its suggestion, then calls error() with it
        const withSuggestion = (cmd as unknown as { unknownOption?: (flag: string) => never }).unknownOption;
        if (withSuggestion) return catching(() => withSuggestion.call(cmd, unknown));
        return usageFromCommander(cmd, `unknown option '${unknown}'`, 'commander.unknownOption');
      }
      const [flags] = quoted(/^required option '(.*?)' not specified$/s);
      const o = findOption(cmd, String(flags));
      const name = o?.long ?? String(flags);
      const expected = o ? expects(o) : 'a value';
      return new UsageError(`${name} is required (${expected})${hint}`, name, { expected });
    }
    case 'commander.invalidArgument': {
      const option = quoted(/^option '(.*?)' argument '(.*)' is invalid\. ?(.*)$/s);
      if (option.length) {
        const [flags, value, why] = option;
        const o = findOption(cmd, String(flags));
        const name = o?.long ?? String(flags);
        const expected = o?.argChoices ? `one of ${o.argChoices.join(', ')}` : String(why);
        return new UsageError(`invalid value for ${name}: '${value}' (expected ${expected})${hint}`, name, {
          value: String(value),
          expected,
        });
      }
      return new UsageError(`${text}${hint}`);
    }
    case 'commander.missingArgument': {
      const [name] = quoted(/^missing required argument '(.*?)'$/s);
      const arg = cmd.registeredArguments.find((a) => a.name() === name);
      const expected = arg?.description || 'a value';
      return new UsageError(`<${name}> is required (${expected})${hint}`, `<${name}>`, { expected });
    }
    case 'commander.excessArguments': {
      const extra = cmd.args.slice(cmd.registeredArguments.length);
      const takes = cmd.registeredArguments.length
        ? `takes ${cmd.registeredArguments.map((a) => `<${a.name()}>`).join(' ')} only`
        : 'takes no arguments';
      return new UsageError(`unexpected argument '${extra[0] ?? ''}': '${where}' ${takes}${hint}`);
    }
    case 'commander.unknownCommand': {
      const [name, suggestion] = quoted(/^unknown command '(.*?)'(?: \(Did you mean (.*?)\?\))?$/s);
      const known = cmd.commands.map((c) => c.name()).join(', ');
      return new UsageError(
        `unknown command '${name}' for '${where}' (${suggestion ? `did you mean ${suggestion}? ` : ''}commands: ${known})${hint}`,
      );
    }
    default:
      return new UsageError(`${text}${hint}`);
  }
}

/**
 * A commander Command whose usage errors are thrown as one-line UsageErrors (nothing printed here, no
 * help after them), and whose subcommands are made the same way.
 */
export class UsageCommand extends Command {
  override createCommand(name?: string): Command {
    return new UsageCommand(name);
  }

  override error(message: string, options?: { code?: string; exitCode?: number }): never {
    throw usageFromCommander(this, message, options?.code);
  }

  /** A command with subcommands called without one: a line naming them, not the whole help. */
  override help(context?: HelpContext): never;
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context === 'object' && context.error && this.parent) {
      const known = this.commands.map((c) => c.name()).join(', ');
      throw new UsageError(`'${path(this)}' needs a command (${known}); see '${path(this)} --help'`);
    }
    return super.help(context as HelpContext);
  }
}

/** A top-level command (the program, a scenario's, the suite's) with one-line usage errors. */
export function usageCommand(name?: string): UsageCommand {
  return new UsageCommand(name);
}
