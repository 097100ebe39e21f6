import { isScopableProject, subjects } from '@baton/protocol/subjects';
import { InvalidArgumentError } from 'commander';

/** Parsers of flag values: each returns the value or throws commander's `InvalidArgumentError` saying what it expects. */

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer.');
  return n;
}

/** A port: 0 (any free port) or a positive integer. */
export function port(value: string): number {
  return value === '0' ? 0 : positiveInt(value);
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * A duration flag's parser, giving milliseconds: a positive number with a unit (`500ms`, `15s`, `1.5m`, `2h`). A bare
 * number is read in `bareUnit`, the unit the flag took before durations had units, so older scripts keep working.
 */
export function duration(bareUnit: keyof typeof UNIT_MS): (value: string) => number {
  return (value) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
    const ms = m === null ? NaN : Math.ceil(Number(m[1]) * UNIT_MS[(m[2] as keyof typeof UNIT_MS | undefined) ?? bareUnit]);
    if (!(ms >= 1) || !Number.isSafeInteger(ms)) throw new InvalidArgumentError('expected a duration such as 500ms, 15s, 10m or 1h.');
    return ms;
  };
}

export function natsUrl(value: string): string {
  try {
    const url = new URL(value.includes('://') ? value : `nats://${value}`);
    if (url.hostname === '') throw new Error('no host');
  } catch {
    throw new InvalidArgumentError('expected a NATS URL such as nats://127.0.0.1:4222.');
  }
  return value;
}

/** One or more NATS URLs, comma-separated (the servers of a cluster). */
export function natsUrls(value: string): string {
  for (const url of value.split(',')) natsUrl(url.trim());
  return value;
}

export function projectToken(value: string): string {
  if (!isScopableProject(value)) throw new InvalidArgumentError('expected a project id of letters, digits, _ and - (one subject token).');
  return value;
}

export function subjectPrefix(value: string): string {
  try {
    subjects(value);
  } catch {
    throw new InvalidArgumentError('expected dot-separated tokens of letters, digits, _ and -, such as baton or acme.dev.');
  }
  return value;
}

export function sessionId(value: string): string {
  try {
    subjects().status(value);
  } catch {
    throw new InvalidArgumentError('expected a session id ([A-Za-z0-9_-], 1 to 128 characters).');
  }
  return value;
}

/** A `--passthrough` prefix: a plain path (`/v1/files`), no query, no `//`, no dot segments, nothing encoded. */
export function passthroughPrefix(value: string): string {
  if (!/^(\/[A-Za-z0-9_.~-]+)+\/?$/.test(value) || value.split('/').some((s) => s === '.' || s === '..')) throw new InvalidArgumentError('expected a path like /v1/files.');
  return value;
}
