import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitLog, sessionLog } from '@baton/log-schema';
import { HistoryStore, commitFiles } from '@baton/memory-store';
import { ProtocolError, type OpenRequest } from '@baton/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLineage, type LineageFiles, type LineageSource } from '../../src/daemon/session-lineage.ts';
import { sessionSetupFor } from '../../src/daemon/session-setup.ts';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { EventLogCommitJournal } from '../../src/memory/event-log-commit-journal.ts';

/*
 * What a session that continues another starts from: the other session's newest committed checkpoint files (its
 * spillovers too, not its notes), copied as one `inherited` commit, the version count of its checkpoint.md, and the
 * refusals that leave everything as it was. On a real LMDB log and history store in a temporary directory.
 */

const AT = 1_780_000_000_000;
const OWNER = `hmac-sha256:${'A'.repeat(43)}`;
const OTHER = `hmac-sha256:${'B'.repeat(43)}`;

let dir: string;
let log: LmdbEventLog;
let files: LineageFiles;
let source: LineageSource;

async function open(sessionId: string, projectId: string, owner?: string): Promise<void> {
  const request: OpenRequest = { session_id: sessionId, project_id: projectId, model: { id: 'gpt-4o', context_window: 64_000 }, ...(owner !== undefined ? { owner } : {}) };
  const setup = sessionSetupFor(request, sessionId, {});
  await sessionLog(log).append(sessionId, [{ type: 'session.opened', at: AT, payload: { setup, encoding: 'msgpack', request }, msgId: 'session.opened', ...(owner !== undefined ? { keys: ['owner'] } : {}) }]);
}

async function commit(commitId: string, contents: Record<string, string>): Promise<void> {
  await commitFiles({ ...files, commitId, writerId: commitId, reason: 'writer', at: AT }, new Map(Object.entries(contents)));
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-lineage-'));
  log = LmdbEventLog.open({ path: join(dir, 'events') });
  files = { memoryRoot: join(dir, 'memory'), history: new HistoryStore(join(dir, 'history')), journal: new EventLogCommitJournal(log) };
  source = {
    log,
    projectOf: (sessionId) => {
      const [first] = [...log.read(`session/${sessionId}`, { from: 1, to: 1 })];
      return (first?.payload as { setup?: { projectId?: string } } | undefined)?.setup?.projectId ?? null;
    },
    watermarkOf: (sessionId) => (sessionId === 'a' ? 'g7-abc' : null),
  };
});

afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('openLineage', () => {
  it('copies the newest committed checkpoint and its spillovers as one inherited commit and counts the versions', async () => {
    await open('a', 'shop', OWNER);
    await commit('a-w1', { 'sessions/a/checkpoint.md': '# v1\n', 'sessions/a/notes.md': 'note\n' });
    await commit('a-w2', { 'sessions/a/checkpoint.md': '# v2\n- See checkpoint-api.md (2 items)\n', 'sessions/a/checkpoint-api.md': '# api\n' });
    const lineage = await openLineage(files, source, { lineage: { from_session: 'a', kind: 'slice' }, sessionId: 'b', projectId: 'shop', owner: OWNER, at: AT + 1 });
    expect(lineage).toEqual({ from_session: 'a', kind: 'slice', checkpoint_version: 2, watermark: 'g7-abc' });
    expect(await readFile(join(dir, 'memory/sessions/b/checkpoint.md'), 'utf8')).toBe('# v2\n- See checkpoint-api.md (2 items)\n');
    expect(await readFile(join(dir, 'memory/sessions/b/checkpoint-api.md'), 'utf8')).toBe('# api\n');
    await expect(readFile(join(dir, 'memory/sessions/b/notes.md'), 'utf8')).rejects.toThrow(/ENOENT/);
    const inherited = [...commitLog(log).read('')].filter((r) => r.payload.reason === 'inherited');
    expect(inherited.map((r) => [r.type, r.payload.writerId, r.payload.files.map((f) => f.rel).sort()])).toEqual([
      ['commit.prepared', null, ['sessions/b/checkpoint-api.md', 'sessions/b/checkpoint.md']],
      ['commit.applied', null, ['sessions/b/checkpoint-api.md', 'sessions/b/checkpoint.md']],
    ]);
    // A session that continues the inherited one counts that copy as a version of its own.
    await open('b', 'shop', OWNER);
    const next = await openLineage(files, { ...source, watermarkOf: () => null }, { lineage: { from_session: 'b', kind: 'slice' }, sessionId: 'c', projectId: 'shop', owner: OWNER, at: AT + 2 });
    expect(next).toEqual({ from_session: 'b', kind: 'slice', checkpoint_version: 1, watermark: null });
    expect(await readFile(join(dir, 'memory/sessions/c/checkpoint.md'), 'utf8')).toBe('# v2\n- See checkpoint-api.md (2 items)\n');
  });

  it('inherits nothing from a session without a committed checkpoint', async () => {
    await open('a', 'shop');
    const lineage = await openLineage(files, source, { lineage: { from_session: 'a', kind: 'slice' }, sessionId: 'b', projectId: 'shop', owner: null, at: AT });
    expect(lineage).toEqual({ from_session: 'a', kind: 'slice', checkpoint_version: null, watermark: 'g7-abc' });
    expect(commitLog(log).lastSeq('')).toBe(0);
  });

  it('refuses another owner, no owner for an owned session, an unknown session, another project and itself, committing nothing', async () => {
    await open('a', 'shop', OWNER);
    await commit('a-w1', { 'sessions/a/checkpoint.md': '# v1\n' });
    const commits = commitLog(log).lastSeq('');
    const cases: [string, string, string | null, string][] = [
      ['a', 'shop', OTHER, 'forbidden'],
      ['a', 'shop', null, 'forbidden'],
      ['nope', 'shop', OWNER, 'not_found'],
      ['a', 'warehouse', OWNER, 'not_found'],
      ['b', 'shop', OWNER, 'bad_request'],
    ];
    for (const [from, projectId, owner, code] of cases) {
      const refused = await openLineage(files, source, { lineage: { from_session: from, kind: 'slice' }, sessionId: 'b', projectId, owner, at: AT }).catch((err: unknown) => err);
      expect(refused, `${from} ${projectId} ${owner}`).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(code);
    }
    expect(commitLog(log).lastSeq('')).toBe(commits);
    await expect(readFile(join(dir, 'memory/sessions/b/checkpoint.md'), 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
