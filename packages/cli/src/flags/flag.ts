import { Option } from 'commander';
import type { FlagSetting } from './settings-table.ts';

/** Where flag defaults may come from (the environment `main` was given, not necessarily `process.env`). */
export type FlagEnv = NodeJS.ProcessEnv;

/** An older spelling of a flag, still accepted but left out of `--help`; its value lands on the flag's key. */
interface FlagAlias<V> {
  readonly flags: string;
  readonly parse: (raw: string) => V;
}

interface FlagSpec<V> {
  /** Commander's flag text, e.g. `--data-dir <dir>` or `--json`. */
  readonly flags: string;
  readonly help: string;
  /** Turns the raw text into the value (throwing commander's `InvalidArgumentError`); `previous` for repeatable flags. */
  readonly parse?: ((raw: string, previous: V | undefined) => V) | undefined;
  readonly choices?: readonly string[] | undefined;
  /** The default, computed from the environment when the command is built, and how `--help` names it. */
  readonly fallback?: { readonly value: (env: FlagEnv) => V; readonly shown?: string | undefined } | undefined;
  readonly mandatory?: boolean | undefined;
  readonly aliases?: readonly FlagAlias<V>[] | undefined;
}

/**
 * One flag of the catalogue: its key in the parsed options, its text, help, parser and default. `Present` is true
 * when the parsed options always hold a value (a default or a mandatory flag), so the options type derived from a
 * command's flags says which keys may be absent.
 */
export class Flag<K extends string, V, Present extends boolean = false> {
  /** Phantom: carries the value type for `FlagValues`; never read. */
  declare readonly value: V;
  declare readonly present: Present;

  constructor(
    readonly key: K,
    readonly spec: FlagSpec<V>,
  ) {}

  /** The same flag with this command's own wording. */
  help(help: string): Flag<K, V, Present> {
    return new Flag(this.key, { ...this.spec, help });
  }

  /** The same flag with a default (so the parsed options always hold a value). */
  default(value: V | ((env: FlagEnv) => V), shown?: string): Flag<K, V, true> {
    const fallback = { value: typeof value === 'function' ? (value as (env: FlagEnv) => V) : () => value, shown };
    return new Flag(this.key, { ...this.spec, fallback });
  }

  /** The same flag without its default (absent unless given). */
  optional(): Flag<K, V, false> {
    return new Flag(this.key, { ...this.spec, fallback: undefined, mandatory: false });
  }

  /** The same flag, which the command refuses to run without. */
  required(): Flag<K, V, true> {
    return new Flag(this.key, { ...this.spec, fallback: undefined, mandatory: true });
  }

  /** Commander's options for this flag: the visible one, then its hidden older spellings. */
  options(env: FlagEnv): Option[] {
    const s = this.spec;
    const option = new Option(s.flags, s.help);
    if (s.choices !== undefined) option.choices(s.choices);
    if (s.parse !== undefined) option.argParser(s.parse as (raw: string, previous: unknown) => unknown);
    if (s.fallback !== undefined) option.default(s.fallback.value(env), s.fallback.shown);
    if (s.mandatory === true) option.makeOptionMandatory();
    if (option.attributeName() !== this.key) throw new Error(`flag ${s.flags} is filed under ${this.key}, commander names it ${option.attributeName()}`);
    return [option, ...(s.aliases ?? []).map((a) => new Option(a.flags, `same as ${option.long ?? s.flags}`).argParser(a.parse).hideHelp())];
  }

  /** The value commander parsed, from the flag or (when the flag itself was not given) one of its older spellings. */
  read(parsed: Record<string, unknown>, sources: (attribute: string) => string | undefined): V | undefined {
    const own = parsed[this.key] as V | undefined;
    if (sources(this.key) === 'cli') return own;
    for (const alias of this.spec.aliases ?? []) {
      const attribute = new Option(alias.flags).attributeName();
      if (parsed[attribute] !== undefined) return parsed[attribute] as V;
    }
    return own;
  }

  /** The spelling the command line used: the flag's own (`--lease`) or an older one (`--lease-ms`). */
  givenAs(parsed: Record<string, unknown>, sources: (attribute: string) => string | undefined): string {
    const own = new Option(this.spec.flags);
    if (sources(this.key) !== 'cli') {
      for (const alias of this.spec.aliases ?? []) {
        const option = new Option(alias.flags);
        if (parsed[option.attributeName()] !== undefined) return option.long ?? alias.flags;
      }
    }
    return own.long ?? this.spec.flags;
  }
}

/** Any flag, whatever its key and value. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the value type varies per flag, in both directions
export type AnyFlag = Flag<string, any, boolean>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The options object a command's flags produce: one key per flag, optional unless it has a default or is required. */
export type FlagValues<F extends readonly AnyFlag[]> = Simplify<
  { readonly [E in F[number] as E['present'] extends true ? E['key'] : never]: E['value'] } & {
    readonly [E in F[number] as E['present'] extends true ? never : E['key']]?: E['value'];
  }
>;

/** Defines a flag of the catalogue: the flag of a setting that has one on the command line. */
export function flag<K extends FlagSetting, V = string>(key: K, spec: FlagSpec<V>): Flag<K, V, false> {
  return new Flag(key, spec);
}
