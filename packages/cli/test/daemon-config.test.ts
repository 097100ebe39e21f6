import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../src/daemon/daemon-config.ts';

describe('daemon configuration file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, body: string) => {
    const p = join(dir, name);
    await writeFile(p, body);
    return p;
  };

  it('maps tail, budgets and rebuild caps', async () => {
    const c = await loadDaemonConfig(await file('ok.json', JSON.stringify({ tail: { min_tokens: 100, max_tokens: 200, min_text_messages: 2 }, budgets: { checkpoint: { total: 12000 } }, rebuild_caps: { notes: 100 } })));
    expect(c).toEqual({ tail: { minTokens: 100, maxTokens: 200, minTextMessages: 2 }, budgets: { checkpoint: { total: 12000 } }, rebuildCaps: { notes: 100 } });
  });

  it('maps the waits to the daemon option, and refuses unknown or negative ones naming the key', async () => {
    const c = await loadDaemonConfig(await file('waits.json', JSON.stringify({ waits: { close_ms: 500, rebuild_in_flight_ms: 0 } })));
    expect(c).toEqual({ waits: { closeMs: 500, rebuildInFlightMs: 0 } });
    await expect(loadDaemonConfig(await file('w-unknown.json', JSON.stringify({ waits: { close: 5 } })))).rejects.toThrow(/w-unknown\.json: waits\.close/);
    await expect(loadDaemonConfig(await file('w-neg.json', JSON.stringify({ waits: { drain_ms: -1 } })))).rejects.toThrow(/w-neg\.json: waits\.drain_ms/);
  });

  it('maps the request queue bounds and their wait, and refuses a bound that is not a positive integer', async () => {
    const c = await loadDaemonConfig(await file('queue.json', JSON.stringify({ max_queued_requests: 100, max_queued_per_session: 8, waits: { queue_ms: 2_000 } })));
    expect(c).toEqual({ requestQueue: { total: 100, perSession: 8 }, waits: { queueMs: 2_000 } });
    await expect(loadDaemonConfig(await file('q-zero.json', JSON.stringify({ max_queued_requests: 0 })))).rejects.toThrow(/q-zero\.json: max_queued_requests/);
  });

  it('names the offending key and the file', async () => {
    await expect(loadDaemonConfig(await file('bad.json', JSON.stringify({ tail: { min_tokens: 300, max_tokens: 200, min_text_messages: 2 } })))).rejects.toThrow(/bad\.json: tail\.max_tokens/);
    await expect(loadDaemonConfig(await file('unknown.json', JSON.stringify({ tails: {} })))).rejects.toThrow(/tails/);
    await expect(loadDaemonConfig(await file('garbage.json', '{ nope'))).rejects.toThrow(/cannot read the configuration/);
  });
});
