import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSession } from './helpers/record-session.ts';
import { completion, runBaton, spawnBaton, waitForLine } from './helpers/run-baton.ts';

describe('baton inspect', () => {
  let dataDir: string;
  let sessionId: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'baton-inspect-'));
    ({ sessionId } = await recordSession(dataDir));
  }, 60_000);
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the inspector on loopback, prints its URL, answers for the recorded session and stops on SIGTERM', async () => {
    const child = spawnBaton(['inspect', '--data-dir', dataDir, '--port', '0']);
    const done = completion(child);
    const line = await waitForLine(child, /^baton inspect: http:\/\//);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(line)?.[1];
    expect(url).toBeDefined();
    const sessions = (await (await fetch(new URL('api/sessions', url))).json()) as { sessions: { session_id: string }[] };
    expect(sessions.sessions.map((s) => s.session_id)).toEqual([sessionId]);
    const page = await fetch(new URL(`s/${sessionId}`, url));
    expect(page.headers.get('content-type')).toContain('text/html');
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  }, 60_000);

  it('exits 2 naming the directory when it holds no event log', async () => {
    const missing = join(dataDir, 'nothing-here');
    const run = await runBaton(['inspect', '--data-dir', missing, '--port', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no event log at ${join(missing, 'events')}`);
  }, 60_000);
});
