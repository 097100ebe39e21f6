import { readFile } from 'node:fs/promises';
import type { TailPolicy } from '@baton/actors';
import { z } from 'zod';

/**
 * The daemon's configuration file (`baton daemon --config <file.json>`). Budgets and rebuild caps are validated by
 * the daemon itself at start-up (sections summing above a total are refused with the key named); the tail policy
 * here.
 */
const DaemonConfigSchema = z.strictObject({
  budgets: z.unknown().optional(),
  rebuild_caps: z.unknown().optional(),
  tail: z
    .strictObject({
      min_tokens: z.int().positive(),
      max_tokens: z.int().positive(),
      min_text_messages: z.int().nonnegative(),
    })
    .refine((t) => t.max_tokens >= t.min_tokens, { message: 'max_tokens must be at least min_tokens', path: ['max_tokens'] })
    .optional(),
});

export interface DaemonConfig {
  readonly budgets?: unknown;
  readonly rebuildCaps?: unknown;
  readonly tail?: TailPolicy;
}

export class DaemonConfigError extends Error {
  override readonly name = 'DaemonConfigError';
}

/** Reads and validates a configuration file; throws `DaemonConfigError` naming the file and the offending key. */
export async function loadDaemonConfig(path: string): Promise<DaemonConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new DaemonConfigError(`cannot read the configuration ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = DaemonConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue === undefined ? '' : [...issue.path, ...(issue.code === 'unrecognized_keys' ? issue.keys : [])].join('.');
    throw new DaemonConfigError(`invalid configuration ${path}: ${key || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const c = parsed.data;
  return {
    ...(c.budgets !== undefined ? { budgets: c.budgets } : {}),
    ...(c.rebuild_caps !== undefined ? { rebuildCaps: c.rebuild_caps } : {}),
    ...(c.tail !== undefined ? { tail: { minTokens: c.tail.min_tokens, maxTokens: c.tail.max_tokens, minTextMessages: c.tail.min_text_messages } } : {}),
  };
}
