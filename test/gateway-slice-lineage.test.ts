import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonRequestError } from '@baton/client';
import type { Lineage } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import type { RecordedRequest } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBaton } from '../packages/cli/test/helpers/run-baton.ts';
import { SdkAgent, agentResponder, bigFile, isWriterRequest } from './support/gateway-agent.ts';
import { recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY = 'sk-slice-owner-aaaaaaaa';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
/** A fact only the first slice's conversation holds: its checkpoint carries it into the next slice. */
const FACT = 'the release codename is PELICAN-42';
const MODEL = { id: 'gpt-4o', context_window: 64_000 };

/** The lineage a session's opening recorded (undefined: none). */
function openedLineage(rig: GatewayRig, sid: string): Lineage | undefined {
  const [opened] = [...rig.log.read(`session/${sid}`, { from: 1, to: 1 })];
  return (opened?.payload as { lineage?: Lineage } | undefined)?.lineage;
}

/** The commits of `memory/commits` that touched session `sid`'s files: record type, reason and files. */
function commitsOf(rig: GatewayRig, sid: string): { type: string; reason: string; rels: string[] }[] {
  return [...rig.log.read('memory/commits')]
    .map((r) => ({ type: r.type, payload: r.payload as { reason: string; files: { rel: string }[] } }))
    .filter(({ payload }) => payload.files.some((f) => f.rel.startsWith(`sessions/${sid}/`)))
    .map(({ type, payload }) => ({ type, reason: payload.reason, rels: payload.files.map((f) => f.rel) }));
}

/** Every text a loopback request carried, joined (its messages as JSON). */
const requestText = (req: RecordedRequest): string => JSON.stringify(req.body.messages);

/** The requests of the writers of daemon session `sid` (their task names its checkpoint path), in order. */
function writerRequestsOf(rig: GatewayRig, sid: string): RecordedRequest[] {
  return rig.model.requests.filter((r) => isWriterRequest(r) && requestText(r).includes(`/sessions/${sid}/checkpoint.md`));
}

/** One user turn with a message of the test's own: the model's read call, the file, the model's answer. */
async function say(agent: SdkAgent, text: string, n: number): Promise<void> {
  agent.history.push({ role: 'user', content: text });
  const { message } = await agent.call();
  const id = message.tool_calls?.[0]?.id;
  if (id === undefined) return;
  agent.history.push({ role: 'tool', tool_call_id: id, content: bigFile(n) });
  await agent.call();
}

/** Asks session `sid` for a checkpoint and waits for its writer to settle; returns the outcome. */
async function checkpointOf(rig: GatewayRig, sid: string): Promise<string> {
  const settled = rig.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 120_000);
  await rig.client.checkpoint(sid);
  return ((await settled) as unknown as { outcome: string }).outcome;
}

describe('slices inherit the checkpoint of the slice they follow', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig({ nats: true });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('a slice opened after the agent compacted on its own starts from the previous slice\'s checkpoint; a sub-agent does not', { timeout: 300_000 }, async () => {
    const sid = 'slice-inherit';
    const first = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM });
    await first.turn();
    // The user's latest request: the checkpoint quotes it.
    await say(first, `Please fix the reducer in src/mod-2.ts; ${FACT}, keep it in the changelog.`, 2);
    await until(() => recordedMessages(rig.log, sid).length === first.sentLength - 1, 60_000);
    expect(await checkpointOf(rig, sid)).toBe('success');
    const memory = join(rig.dataDir, 'memory', 'sessions');
    const checkpoint = await readFile(join(memory, sid, 'checkpoint.md'), 'utf8');
    expect(checkpoint).toContain('PELICAN-42');
    const watermark = (await rig.client.status(sid)).state.watermark;
    expect(watermark).not.toBeNull();

    // The agent compacted on its own: its new history starts from its own summary, which continues no slice.
    const second = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM });
    second.history.push({ role: 'user', content: 'Summary of the work so far: the reducer of src/mod-1.ts was fixed.' });
    await say(second, 'Now look at src/mod-7.ts and fix its reducer too.', 7);
    const slice = `${sid}-s1`;
    await until(() => recordedMessages(rig.log, slice).length === second.sentLength - 1, 60_000);
    expect(JSON.stringify(recordedMessages(rig.log, slice))).not.toContain('PELICAN-42');

    // Its lineage: the slice it follows, that slice's committed checkpoint version and watermark.
    const lineage: Lineage = { from_session: sid, kind: 'slice', checkpoint_version: 1, watermark };
    expect(openedLineage(rig, slice)).toEqual(lineage);
    const listed = (await rig.client.runtimeSessions()).sessions;
    expect(listed.find((s) => s.session_id === slice)?.lineage).toEqual(lineage);
    expect(listed.find((s) => s.session_id === sid)?.lineage).toBeUndefined();
    // Its checkpoint starts as the previous slice's, one commit of reason `inherited`.
    expect(await readFile(join(memory, slice, 'checkpoint.md'), 'utf8')).toBe(checkpoint);
    expect(commitsOf(rig, slice)).toEqual([
      { type: 'commit.prepared', reason: 'inherited', rels: [`sessions/${slice}/checkpoint.md`] },
      { type: 'commit.applied', reason: 'inherited', rels: [`sessions/${slice}/checkpoint.md`] },
    ]);

    // A rebuild before a writer of its own ran renders the inherited checkpoint (and the slice's own context after it).
    const rebuilt = await rig.client.rebuild(slice, { reason: 'manual' });
    expect(rebuilt.outcome).toBe('rebuilt');
    expect(JSON.stringify(rebuilt.context[0])).toContain('PELICAN-42');
    expect(JSON.stringify(rebuilt.context)).toContain('Now look at src/mod-7.ts and fix its reducer too.');

    // Its first writer is told the checkpoint is inherited, and reads it: the model gets the earlier slice's words.
    expect(writerRequestsOf(rig, slice)).toEqual([]);
    expect(await checkpointOf(rig, slice)).toBe('success');
    const calls = writerRequestsOf(rig, slice);
    expect(requestText(calls[0] as RecordedRequest)).toContain('it is the checkpoint of the session this one continues');
    expect(calls.some((r) => requestText(r).includes('PELICAN-42'))).toBe(true);

    // A sub-agent on the same key (a prompt of its own) gets a slice of its own that inherits nothing.
    const sub = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: 'You are a sub-agent: search the repository and report.' });
    await say(sub, 'Find every caller of computeReducerStep.', 9);
    const subSlice = `${sid}-s2`;
    await until(() => recordedMessages(rig.log, subSlice).length === sub.sentLength - 1, 60_000);
    expect(openedLineage(rig, subSlice)).toBeUndefined();
    expect(commitsOf(rig, subSlice)).toEqual([]);
    expect(await checkpointOf(rig, subSlice)).toBe('success');
    const subCalls = writerRequestsOf(rig, subSlice);
    expect(subCalls.length).toBeGreaterThan(0);
    expect(subCalls.some((r) => requestText(r).includes('PELICAN-42'))).toBe(false);
    expect(requestText(subCalls[0] as RecordedRequest)).not.toContain('it is the checkpoint of the session this one continues');

    // Everything replays, and the CLI shows where the slice came from.
    await rig.daemon.sessions.flushDecisions();
    for (const s of [sid, slice, subSlice]) expect(verifySession(rig.log, s).divergence).toBeNull();
    const replay = await runBaton(['replay', slice, '--data-dir', rig.dataDir, '--verify']);
    expect(replay.code, replay.stderr).toBe(0);
    const timeline = await runBaton(['replay', slice, '--data-dir', rig.dataDir]);
    expect(timeline.code, timeline.stderr).toBe(0);
    expect(timeline.stdout).toContain(`continues ${sid} (slice, checkpoint v1)`);
    const listing = await runBaton(['sessions', '--nats', rig.natsUrl ?? '']);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stdout).toContain(`↳ ${slice} continues ${sid} (slice, from checkpoint v1 up to ${watermark ?? ''})`);
    expect(listing.stdout).not.toContain(`↳ ${subSlice} `);
    const versions = await runBaton(['memory', 'log', slice, '--data-dir', rig.dataDir]);
    expect(versions.code, versions.stderr).toBe(0);
    expect(versions.stdout).toContain('inherited');
  });

  it('refuses a lineage naming a session of another owner, an unknown one or one of another project, and opens nothing', async () => {
    const sid = 'slice-owned';
    const owner = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM });
    await owner.turn();
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1, 60_000);
    const stranger = `hmac-sha256:${'B'.repeat(43)}`;
    const attempts: [string, Record<string, unknown>, string][] = [
      ['lineage-stranger', { owner: stranger, lineage: { from_session: sid, kind: 'slice' } }, 'forbidden'],
      ['lineage-no-owner', { lineage: { from_session: sid, kind: 'slice' } }, 'forbidden'],
      ['lineage-unknown', { owner: stranger, lineage: { from_session: 'no-such-session', kind: 'slice' } }, 'not_found'],
      ['lineage-self', { owner: stranger, lineage: { from_session: 'lineage-self', kind: 'slice' } }, 'bad_request'],
      ['lineage-handoff', { lineage: { from_session: sid, kind: 'handoff', checkpoint_version: 1, watermark: null } }, 'bad_request'],
    ];
    for (const [id, fields, code] of attempts) {
      const refused = await rig.client.open({ session_id: id, project_id: 'default', model: MODEL, ...fields }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused, id).toBeInstanceOf(BatonRequestError);
      expect((refused as BatonRequestError).code, id).toBe(code);
      expect(rig.log.lastSeq(`session/${id}`), id).toBe(0);
    }
    // Of another project: unknown there.
    const other = await rig.client.open({ session_id: 'lineage-project', project_id: 'warehouse', model: MODEL, lineage: { from_session: sid, kind: 'slice' } }).catch((err: unknown) => err);
    expect((other as BatonRequestError).code).toBe('not_found');
    expect(rig.log.lastSeq('session/lineage-project')).toBe(0);
    // The daemon goes on serving: the owner's next turn is recorded.
    await owner.turn();
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1, 60_000);
  });

  it('a slice the daemon refuses to start from the one it follows (another project here) starts blank, and the call goes through', async () => {
    const sid = 'slice-elsewhere';
    const first = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM, headers: { 'x-baton-project': 'alpha' } });
    await first.turn();
    await until(() => recordedMessages(rig.log, sid).length === first.sentLength - 1, 60_000);
    // The same agent, a new history, named in another project: the slice it follows is unknown there.
    const second = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM, headers: { 'x-baton-project': 'beta' } });
    second.history.push({ role: 'user', content: 'Summary of the work so far: nothing yet.' });
    await second.turn();
    await until(() => recordedMessages(rig.log, `${sid}-s1`).length === second.sentLength - 1, 60_000);
    expect(openedLineage(rig, `${sid}-s1`)).toBeUndefined();
    expect(commitsOf(rig, `${sid}-s1`)).toEqual([]);
  });
});
