import type { RuntimeSession } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { sessionsTable } from '../src/format/runtime-format.ts';

/* `baton sessions` shows where a session came from under the table, one line per session that continues another. */

const base: RuntimeSession = {
  session_id: 'cart',
  project_id: 'shop',
  model: 'gpt-4o',
  opened_at: 1_780_000_000_000,
  resident: true,
  quarantined: false,
  state: null,
  closed: false,
  last_outcome: null,
};

describe('baton sessions: lineage', () => {
  it('names the session a slice continues, the checkpoint version and the watermark it started from', () => {
    const lines = sessionsTable({
      sessions: [
        base,
        { ...base, session_id: 'cart-s1', lineage: { from_session: 'cart', kind: 'slice', checkpoint_version: 3, watermark: 'g41-abc' } },
        { ...base, session_id: 'cart-s2', lineage: { from_session: 'cart-s1', kind: 'slice', checkpoint_version: null, watermark: null } },
      ],
    });
    expect(lines.slice(-3)).toEqual([
      '↳ cart-s1 continues cart (slice, from checkpoint v3 up to g41-abc)',
      '↳ cart-s2 continues cart-s1 (slice, no checkpoint to start from)',
      '3 sessions',
    ]);
    expect(lines.filter((l) => l.startsWith('↳ cart '))).toEqual([]);
  });
});
