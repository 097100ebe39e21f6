import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DEFAULT_REBUILD_CAPS, loadPrompt, memoryPaths, renderRebuildContext, type RebuildCaps } from '@baton/memory-store';
import type { SessionInputRecord } from '@baton/log-schema';
import type { HostedSession, MessageSource } from './session-host.ts';
import { userTextMessage, viewOf, withToolOutputs, type Message, type ProviderApi } from '@baton/protocol';
import { clearableToolResults, preservedTail } from '../rebuild/preserved-tail.ts';
import { DEFAULT_FIT_OPTIONS, type FitOptions } from '../rebuild/fit-costs.ts';
import { fitRebuild, type BoundaryRender } from '../rebuild/fit-rebuild.ts';
import { textOf } from '../rebuild/message-text.ts';

/** The payload of the `rebuild.rendered` input. */
export type RebuildRendered = Extract<SessionInputRecord, { type: 'rebuild.rendered' }>['payload'];

/** Newest main-slice messages whose user texts go into "recent user input". */
const RECENT_WINDOW = 200;

async function readOrNull(path: string): Promise<string | null> {
  return await readFile(path, 'utf8').catch(() => null);
}

/** Memory files under `dir`, relative to the memory root (non-recursive into `tasks/` depth ≤ 3). */
async function listKeys(root: string, dir: string, depth = 0): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory() && depth < 3) out.push(...(await listKeys(root, full, depth + 1)));
    else if (e.isFile() && e.name.endsWith('.md')) out.push(relative(root, full));
  }
  return out.sort();
}

/** The boundary message Baton inserts: a user text message in the session's API, Baton's id. */
export function boundaryMessage(api: ProviderApi, id: string, text: string): Message {
  return userTextMessage(api, id, text);
}

/**
 * Renders the rebuilt context for a session: the boundary message from the memory files, and the preserved
 * tail after the watermark with compactable tool outputs cleared — fitted into the session's usable window by its
 * calibrated count (`fitRebuild`). Returns the payload of the `rebuild.rendered` input; `ok: false` when the
 * checkpoint is gone or nothing could be rendered (the rebuild then reports `insert-failed`).
 */
export async function renderRebuild(
  session: HostedSession,
  effect: { requestId: string; watermark: string | null; selfContained?: boolean },
  options: { memoryRoot: string; caps?: RebuildCaps; fit?: FitOptions; source: MessageSource },
): Promise<RebuildRendered> {
  const { sessionId, projectId } = session.setup.input;
  // What the render works from is taken now, when the session asked for it: later inputs may change the session.
  const ids = session.contextIds();
  const ctx = session.context;
  const carried = session.uncovered;
  const { tasks, writer, rebuildSeq } = ctx;
  const paths = memoryPaths(options.memoryRoot, { projectId, sessionId });
  try {
    // Everything the render reads is asked for at once: the memory files, the directory listings and the message
    // bodies (two calls to the main thread) do not wait for one another. The conversation's bodies are resolved from
    // the ids taken above, before any of these reads yields.
    const [checkpoint, conversation, main, projectMemory, globalMemory, notes, sessionKeys, projectKeys, globalKeys] = await Promise.all([
      readOrNull(paths.checkpoint),
      session.resolve(ids, options.source),
      options.source.recentMain(sessionId, RECENT_WINDOW),
      readOrNull(paths.memory),
      readOrNull(paths.globalMemory),
      readOrNull(paths.notes),
      listKeys(paths.root, paths.sessionDir),
      listKeys(paths.root, paths.projectDir),
      listKeys(paths.root, paths.globalDir),
    ]);
    if (checkpoint === null) return { requestId: effect.requestId, ok: false, reason: 'checkpoint.md is missing', tailIds: [] };
    const raw = preservedTail(conversation, effect.watermark);
    const cleared = new Set(clearableToolResults(raw));
    const clearedText = loadPrompt('tool-result-cleared');
    const candidates = raw.map((m) => (cleared.has(m.id) ? withToolOutputs(m, clearedText) : m));
    const last = conversation.at(-1);
    const render: BoundaryRender = (caps, recentUser, uncovered) =>
      renderRebuildContext({
        tasks,
        checkpoint,
        projectMemory,
        globalMemory,
        notes,
        activeWriters: writer === null ? [] : [{ writerId: writer.writerId, status: 'running', description: `checkpoint writer covering up to ${writer.boundary}` }],
        recentUser,
        uncovered,
        memoryKeys: [...sessionKeys, ...projectKeys, ...globalKeys],
        lastMessage: last === undefined ? null : { role: viewOf(last).role, finishReason: last.finish_reason ?? null },
        sessionDir: paths.sessionDir,
        checkpointPath: paths.checkpoint,
        selfContained: effect.selfContained === true,
        caps,
      });
    const fitted = fitRebuild({
      ctx,
      candidates,
      cleared,
      carried,
      // The user's words the tail does not carry: the covered part of the main slice (its newest messages).
      mainUsers: main.filter((m) => viewOf(m).role === 'user' && !m.id.startsWith('baton-')).map((m) => ({ id: m.id, text: textOf(m) })),
      render,
      caps: options.caps ?? DEFAULT_REBUILD_CAPS,
      options: options.fit ?? DEFAULT_FIT_OPTIONS,
    });
    if (fitted === null) return { requestId: effect.requestId, ok: false, reason: 'nothing to render from the memory files', tailIds: [] };
    const id = `baton-rebuild-${sessionId}-${rebuildSeq}`;
    const message = boundaryMessage(session.api, id, fitted.text);
    return {
      requestId: effect.requestId,
      ok: true,
      boundary: { id, role: 'user', tokens: fitted.boundaryTokens, textual: true, finished: false, toolCallIds: [] },
      tailIds: fitted.kept.map((m) => m.id),
      message,
      cleared: fitted.kept.flatMap((m) => (cleared.has(m.id) && !fitted.changed.has(m.id) ? [m.id] : [])),
      clearedText,
      ...fitted.record,
    };
  } catch (err) {
    return { requestId: effect.requestId, ok: false, reason: err instanceof Error ? err.message : String(err), tailIds: [] };
  }
}
