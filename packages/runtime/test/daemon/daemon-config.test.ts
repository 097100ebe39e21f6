import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonDaemon } from '../../src/daemon/daemon.ts';
import { MemoryEventLog } from '../../src/event-log/memory-event-log.ts';
import { MemoryTransport } from '@baton/client';

describe('daemon options are validated once at start-up', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-daemon-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const start = (extra: Record<string, unknown>) => () =>
    BatonDaemon.start({ transport: new MemoryTransport(), log: new MemoryEventLog(), dataDir: dir, poolSize: 1, model: { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'x' }, ...extra });

  it('refuses checkpoint section budgets that sum above the total, naming the key', () => {
    expect(start({ budgets: { checkpoint: { total: 1_000 } } })).toThrow(/budgets\.checkpoint/);
    expect(start({ budgets: { checkpoint: { sections: { '§5': 99_000 } } } })).toThrow(/budgets\.checkpoint\.sections/);
  });

  it('refuses unknown or negative waits, naming the key', () => {
    expect(start({ waits: { closeMs: -1 } })).toThrow(/waits\.closeMs/);
    expect(start({ waits: { close: 5 } })).toThrow(/waits\.close/);
  });

  it('refuses unknown budget keys and bad rebuild caps', () => {
    expect(start({ budgets: { checkpoints: {} } })).toThrow(/budgets/);
    expect(start({ rebuildCaps: { notes: -1 } })).toThrow(/notes/);
  });
});
