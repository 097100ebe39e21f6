import type { Command } from 'commander';
import type { AnyFlag, FlagEnv, FlagValues } from './flag.ts';

/** Adds the flags to a command (each with its hidden older spellings), defaults taken from `env`. */
export function withFlags(command: Command, flags: readonly AnyFlag[], env: FlagEnv): Command {
  for (const f of flags) for (const option of f.options(env)) command.addOption(option);
  return command;
}

/** The parsed flags of a command, one key per flag, keys of flags not given (and without a default) left out. */
export function flagValues<F extends readonly AnyFlag[]>(command: Command, flags: F): FlagValues<F> {
  const parsed = command.opts();
  const out: Record<string, unknown> = {};
  for (const f of flags) {
    const value: unknown = f.read(parsed, (attribute) => command.getOptionValueSource(attribute));
    if (value !== undefined) out[f.key] = value;
  }
  return out as FlagValues<F>;
}

/** How the user spelled a flag (`--lease-ms` for an older spelling), for messages that name it. */
export function spelledAs(command: Command, flag: AnyFlag): string {
  return flag.givenAs(command.opts(), (attribute) => command.getOptionValueSource(attribute));
}
