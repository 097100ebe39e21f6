import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { InspectorData, InspectorError, answerApi, startInspector, type CheckpointDiffView, type RebuiltContextView, type SessionView } from '@baton/inspector';
import { readTimeline } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversation } from './support/conversation.ts';
import { recordSession, startRecordingDaemon, type RecordedSession } from './support/recorded-inspector-session.ts';

interface SessionReply {
  readonly session: SessionView;
  readonly checkpoints: readonly { readonly version: number; readonly writerId: string | null }[];
}

async function apiError(data: InspectorData, path: string): Promise<InspectorError> {
  try {
    await answerApi(data, path);
  } catch (err) {
    if (err instanceof InspectorError) return err;
    throw err;
  }
  throw new Error(`${path} answered`);
}

/** The status of `GET /api/sessions` on the loopback port, sent with the given `Host` header. */
function statusWithHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/sessions', headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Asks `probe` again every 20 ms until it answers (at most 10 s). */
async function until<T>(probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const found = await probe();
    if (found !== null) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the awaited state never came');
}

/** The inspector's JSON API over a session recorded by a real daemon (loopback model, LMDB in a temp dir). */
describe('inspector API', () => {
  let dataDir: string;
  let recorded: RecordedSession;
  let data: InspectorData;

  beforeAll(async () => {
    const daemon = await startRecordingDaemon();
    dataDir = daemon.dataDir;
    try {
      recorded = await recordSession(daemon);
    } finally {
      await daemon.stop();
    }
    data = InspectorData.open(dataDir);
  }, 120_000);

  afterAll(async () => {
    await data.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('lists the recorded session with the state its newest decision holds', async () => {
    const reply = (await answerApi(data, '/api/sessions')) as { sessions: { session_id: string; project_id: string; state: { usable_window: number } }[] };
    expect(reply.sessions.map((s) => s.session_id)).toEqual([recorded.sessionId]);
    expect(reply.sessions[0]).toMatchObject({ project_id: 'shop', state: { usable_window: 48_000 } });
  });

  it("draws every writer run of the log, the rungs, the usable window and the rebuild", async () => {
    const { session, checkpoints } = (await answerApi(data, `/api/sessions/${recorded.sessionId}`)) as SessionReply;
    const timeline = readTimeline(data.log, recorded.sessionId);
    expect(session.writers.map((w) => w.writerId)).toEqual(timeline.writerIds);
    expect(session.writers.map((w) => ({ writerId: w.writerId, outcome: w.outcome }))).toEqual(recorded.writers);
    expect(recorded.writers.map((w) => w.outcome)).toEqual(['success', 'success', 'failure']);
    for (const w of session.writers) {
      expect(w).toMatchObject({ mode: 'fork', trigger: 'threshold' });
      expect(w.llmCalls).toBeGreaterThanOrEqual(1);
      expect(w.coversUpTo).not.toBeNull();
      expect(w.fromSeq).toBeLessThanOrEqual(w.toSeq);
    }
    // The model calls the writers' streams hold, replies and refusals alike.
    const calls = (writerId: string): number => timeline.entries.filter((e) => e.writerId === writerId && (e.type === 'model.replied' || e.type === 'model.failed')).length;
    expect(session.writers.map((w) => w.llmCalls)).toEqual(timeline.writerIds.map(calls));
    const [first, second, failed] = session.writers;
    for (const w of [first, second]) expect(w).toMatchObject({ outcome: 'success', failure: null, cacheHitRate: expect.any(Number) as unknown });
    // The refused writer: its failure as the settlement recorded it, no reply to take a cache rate from.
    expect(failed).toMatchObject({ outcome: 'failure', failure: { kind: 'auth' }, cacheHitRate: null, llmCalls: 1 });
    expect(session.thresholds).toEqual([9_600, 19_200]);
    expect(session.usableWindow).toBe(48_000);
    expect(session.rebuilds).toHaveLength(recorded.rebuilds);
    expect(session.rebuilds[0]).toMatchObject({ number: 1, reason: 'overflow', outcome: 'rendered', hasContext: true });
    // Usage climbs past both rungs and the window, in log order.
    expect(Math.max(...session.usage.tokens)).toBeGreaterThanOrEqual(48_000);
    expect([...session.usage.seq].sort((a, b) => a - b)).toEqual(session.usage.seq);
    // One checkpoint version per successful writer.
    expect(checkpoints.map((c) => c.writerId)).toEqual(recorded.writers.filter((w) => w.outcome === 'success').map((w) => w.writerId));
  });

  it('diffs a checkpoint version against the one before it', async () => {
    const first = (await answerApi(data, `/api/sessions/${recorded.sessionId}/checkpoints/1`)) as CheckpointDiffView;
    expect(first.previous).toBeNull();
    expect(first.removed).toBe(0);
    expect(first.added).toBe(first.content.split('\n').filter((_, i, all) => i < all.length - 1 || all[i] !== '').length);
    const second = (await answerApi(data, `/api/sessions/${recorded.sessionId}/checkpoints/2`)) as CheckpointDiffView;
    expect(second.previous).toBe(1);
    expect(second.added).toBeGreaterThan(0);
    expect(second.removed).toBeGreaterThan(0);
    // The diff's kept and added lines are the new version; its kept and removed lines are the old one.
    expect(second.lines.filter((l) => l.kind !== 'removed').map((l) => `${l.text}\n`).join('')).toBe(second.content.endsWith('\n') ? second.content : `${second.content}\n`);
    expect(second.lines.filter((l) => l.kind !== 'added').map((l) => `${l.text}\n`).join('')).toBe(first.content.endsWith('\n') ? first.content : `${first.content}\n`);
  });

  it('shows the rebuilt context: the system prompt, Baton\'s boundary message, then the preserved tail', async () => {
    const context = (await answerApi(data, `/api/sessions/${recorded.sessionId}/rebuilds/1`)) as RebuiltContextView;
    expect(context.system).toContain('careful coding agent');
    const [boundary, ...tail] = context.messages;
    expect(boundary).toMatchObject({ role: 'user', inserted: true });
    expect(boundary?.id.startsWith('baton-')).toBe(true);
    expect(boundary?.text).toContain('## Session checkpoint');
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.every((m) => !m.inserted)).toBe(true);
    expect(context.sections.length).toBeGreaterThan(0);
  });

  it('answers bad input with a clear error', async () => {
    expect(await apiError(data, '/api/sessions/no-such-session')).toMatchObject({ status: 404, message: expect.stringContaining('unknown session no-such-session') as unknown });
    expect(await apiError(data, '/api/sessions/bad%20id')).toMatchObject({ status: 400, message: expect.stringContaining('not a session id') as unknown });
    expect(await apiError(data, `/api/sessions/${recorded.sessionId}/checkpoints/9`)).toMatchObject({ status: 404, message: expect.stringContaining('no version 9') as unknown });
    expect(await apiError(data, `/api/sessions/${recorded.sessionId}/checkpoints/x`)).toMatchObject({ status: 400 });
    expect(await apiError(data, `/api/sessions/${recorded.sessionId}/rebuilds/2`)).toMatchObject({ status: 404, message: expect.stringContaining('no rebuilt context 2') as unknown });
    expect(await apiError(data, '/api/nothing')).toMatchObject({ status: 404 });
    expect(() => InspectorData.open(join(dataDir, 'missing'))).toThrow(/no event log at .*missing/);
  });

  it('serves the page, uPlot and the API over HTTP, read-only, on loopback', async () => {
    const server = await startInspector({ dataDir });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const page = await fetch(server.url);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('<script type="module"');
      const uplot = await fetch(new URL('vendor/uPlot.esm.js', server.url));
      expect(uplot.status).toBe(200);
      expect(await uplot.text()).toContain('export');
      const sessions = await fetch(new URL('api/sessions', server.url));
      expect(((await sessions.json()) as { sessions: unknown[] }).sessions).toHaveLength(1);
      const missing = await fetch(new URL('api/sessions/nope', server.url));
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: string }).error).toContain('unknown session nope');
      expect((await fetch(new URL('static/../package.json', server.url))).status).toBe(404);
      expect((await fetch(new URL('api/sessions', server.url), { method: 'POST' })).status).toBe(405);
      // A name that only resolves to this machine (a rebinding attack from a web page) is refused; localhost is fine.
      expect(await statusWithHost(server.port, `evil.example:${server.port}`)).toBe(403);
      expect(await statusWithHost(server.port, `localhost:${server.port}`)).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('follows a live session: the revision grows and the view updates as the daemon appends', async () => {
    // This process reopens the log to write, which lmdb-js refuses while the read-only handle is open: the tests
    // above are done with it (they run in order), and closing twice is harmless.
    await data.close();
    const daemon = await startRecordingDaemon(dataDir);
    const live = InspectorData.over(dataDir, daemon.log);
    let writerId = '';
    try {
      const path = `/api/sessions/${recorded.sessionId}`;
      const before = (await answerApi(live, path)) as SessionReply;
      const { revision } = (await answerApi(live, `${path}/revision`)) as { revision: number };
      expect(revision).toBe(before.session.revision);
      const reply = await daemon.client.append(recorded.sessionId, conversation(1, { prefix: 'live', start: 9_000 }));
      expect(((await answerApi(live, `${path}/revision`)) as { revision: number }).revision).toBeGreaterThan(revision);
      // The session's decision on that input is written a moment after the reply (with its next input or when idle);
      // until then the newest point is the one before (the reload's own decision carries the old count).
      const after = await until(async () => {
        const view = (await answerApi(live, path)) as SessionReply;
        return view.session.usage.tokens.at(-1) === reply.state.tokens ? view : null;
      });
      expect(reply.state.tokens).not.toBe(before.session.usage.tokens.at(-1));
      expect(after.session.usage.seq.at(-1)).toBeGreaterThan(before.session.lastSeq);
      expect(after.session.revision).toBeGreaterThan(revision);
      expect(after.session.lastSeq).toBeGreaterThan(before.session.lastSeq);

      // A writer that has not settled runs to the end of the log; stopping the daemon cancels it, and the log says so.
      daemon.model.script({ stall: true });
      const started = daemon.client.waitForEvent(recorded.sessionId, (e) => e.type === 'writer.started', 30_000);
      await daemon.client.append(recorded.sessionId, conversation(1, { prefix: 'stall', start: 20_000 }));
      writerId = ((await started) as { writer_id: string }).writer_id;
      const view = await until(async () => {
        const reply = (await answerApi(live, path)) as SessionReply;
        return reply.session.writers.some((w) => w.writerId === writerId) ? reply : null;
      });
      const running = view.session.writers.find((w) => w.writerId === writerId);
      expect(running).toMatchObject({ outcome: 'running', settledAt: null, failure: null, toSeq: view.session.lastSeq });
    } finally {
      await live.close();
      await daemon.stop();
    }
    // The stopped daemon settled the stalled writer as cancelled; a fresh read-only reader sees that.
    const reopened = InspectorData.open(dataDir);
    try {
      const { session } = (await answerApi(reopened, `/api/sessions/${recorded.sessionId}`)) as SessionReply;
      expect(session.writers.at(-1)).toMatchObject({ writerId, outcome: 'cancelled' });
    } finally {
      await reopened.close();
    }
  });
});

