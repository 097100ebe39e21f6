import { describe, expect, it } from 'vitest';
import { DEFAULT_REBUILD_CAPS, MemoryStoreError, REBUILD_CAP_KEYS, resolveRebuildCaps, scaleRebuildCaps } from '../../src/index.ts';

function refusal(overrides: unknown): MemoryStoreError {
  try {
    resolveRebuildCaps(overrides);
  } catch (error) {
    if (error instanceof MemoryStoreError) return error;
    throw error;
  }
  throw new Error(`resolveRebuildCaps accepted ${JSON.stringify(overrides)}`);
}

describe('resolveRebuildCaps', () => {
  it('has the default caps, all in tokens, and a cap for the steps no checkpoint covers', () => {
    expect(DEFAULT_REBUILD_CAPS).toEqual({
      checkpoint: 11_000,
      uncovered: 4_000,
      memory: 10_000,
      notes: 6_000,
      global: 6_000,
      recent_user: 16_000,
      recent_user_per_msg: 2_000,
      tasks_ledger: 2_000,
      actor_ledger: 500,
      memory_titles: 500,
    });
    expect(Object.keys(DEFAULT_REBUILD_CAPS).sort()).toEqual([...REBUILD_CAP_KEYS].sort());
    expect(resolveRebuildCaps()).toEqual(DEFAULT_REBUILD_CAPS);
    expect(resolveRebuildCaps(undefined)).toEqual(DEFAULT_REBUILD_CAPS);
  });

  it('scales every cap down by a factor, never up', () => {
    const half = scaleRebuildCaps(DEFAULT_REBUILD_CAPS, 0.5);
    for (const key of REBUILD_CAP_KEYS) expect(half[key]).toBe(Math.floor(DEFAULT_REBUILD_CAPS[key] / 2));
    expect(scaleRebuildCaps(DEFAULT_REBUILD_CAPS, 1.5)).toBe(DEFAULT_REBUILD_CAPS);
    expect(scaleRebuildCaps(DEFAULT_REBUILD_CAPS, 0).checkpoint).toBe(0);
  });

  it('merges partial overrides onto the defaults, 0 included, and freezes the result', () => {
    const caps = resolveRebuildCaps({ recent_user: 0, tasks_ledger: 300 });
    expect(caps).toEqual({ ...DEFAULT_REBUILD_CAPS, recent_user: 0, tasks_ledger: 300 });
    expect(Object.isFrozen(caps)).toBe(true);
    expect(DEFAULT_REBUILD_CAPS.recent_user).toBe(16_000);
  });

  it.each([
    [{ notes: -1 }, 'rebuild_caps.notes'],
    [{ checkpoint: 10.5 }, 'rebuild_caps.checkpoint'],
    [{ memory_titles: '500' }, 'rebuild_caps.memory_titles'],
    [{ recent_user_per_msg: Number.NaN }, 'rebuild_caps.recent_user_per_msg'],
    [{ tasks_ledgr: 10 }, 'rebuild_caps.tasks_ledgr'],
  ])('refuses %j with invalid_config naming %s', (overrides, key) => {
    const error = refusal(overrides);
    expect(error.code).toBe('invalid_config');
    expect(error.details['key']).toBe(key);
    expect(error.message.startsWith(`${key}:`)).toBe(true);
  });

  it('refuses a value that is not an object', () => {
    expect(refusal(42).code).toBe('invalid_config');
  });
});
