import { readFile } from 'node:fs/promises';
import { usableWindow } from '@baton/actors';
import { DEFAULT_REBUILD_CAPS, defaultTokenCounter, loadPrompt, memoryPaths, renderPrompt, renderRebuildContext, scaleRebuildCaps, type RebuildCaps } from '@baton/memory-store';
import { userTextMessage, viewOf, type HandoffBasis, type Message, type ModelInfo, type ProviderApi } from '@baton/protocol';
import { fitTranscript } from '../rebuild/handoff-transcript.ts';
import { textOf } from '../rebuild/message-text.ts';
import { isBatonBoundary } from '../rebuild/preserved-tail.ts';
import type { HostedSession, MessageSource } from './session-host.ts';

/** What a handoff asks the session's worker to render. */
export interface HandoffRender {
  /** The id the rendered message gets. */
  readonly id: string;
  readonly to: ProviderApi;
  readonly model: ModelInfo;
}

/** The rendered context of a handoff, or why there is none. */
export type RenderedHandoff =
  | { readonly ok: true; readonly context: Message[]; readonly basis: HandoffBasis; readonly watermark: string | null; readonly tokens: number; readonly usable: number }
  | { readonly ok: false; readonly reason: string };

/** Share of the target model's usable window the inherited context may take: the rest is the new agent's. */
export const HANDOFF_SHARE = 0.5;
/** The transcript gets at least this share of the budget; below it the boundary is rendered with smaller caps. */
const MIN_TRANSCRIPT_SHARE = 0.3;
const MAX_ATTEMPTS = 6;
const CAPS_STEP = 0.6;
/** Newest main-slice messages whose user texts the boundary may show. */
const RECENT_WINDOW = 200;

const readOrNull = (path: string): Promise<string | null> => readFile(path, 'utf8').catch(() => null);

/**
 * Renders the context a handoff carries to another agent: the session's rebuilt boundary (checkpoint, tasks, memory,
 * the user's earlier words), self-contained, without its seam, then the steps after the checkpoint's watermark as text
 * facts (`fitTranscript`), between a header and a seam of the handoff's own — one user message in the target API,
 * fitted into `HANDOFF_SHARE` of the target model's usable window. Counted in real tokens of the byte-pair counter.
 */
export async function renderHandoff(session: HostedSession, req: HandoffRender, options: { memoryRoot: string; caps?: RebuildCaps; source: MessageSource }): Promise<RenderedHandoff> {
  const { sessionId, projectId } = session.setup.input;
  const ctx = session.context;
  const ids = session.contextIds();
  const paths = memoryPaths(options.memoryRoot, { projectId, sessionId });
  const [checkpoint, conversation, main, projectMemory, globalMemory, notes] = await Promise.all([
    readOrNull(paths.checkpoint),
    session.resolve(ids, options.source),
    options.source.recentMain(sessionId, RECENT_WINDOW),
    readOrNull(paths.memory),
    readOrNull(paths.globalMemory),
    readOrNull(paths.notes),
  ]);
  const watermark = checkpoint === null ? null : ctx.watermark;
  const at = watermark === null ? -1 : conversation.findIndex((m) => m.id === watermark);
  // After the watermark; when an earlier rebuild replaced it, everything but Baton's own boundary messages.
  const after = (at >= 0 ? conversation.slice(at + 1) : conversation).filter((m) => !isBatonBoundary(m));
  const afterIds = new Set(after.map((m) => m.id));
  const recentUser = main.filter((m) => viewOf(m).role === 'user' && !isBatonBoundary(m) && !afterIds.has(m.id)).map((m) => ({ id: m.id, text: textOf(m) }));
  const inherited = session.setup.inherited ?? [];
  const counter = defaultTokenCounter;
  const usable = usableWindow({
    contextWindow: req.model.context_window,
    ...(req.model.max_output_tokens !== undefined ? { maxOutputTokens: req.model.max_output_tokens } : {}),
    ...(req.model.input_limit !== undefined ? { inputLimit: req.model.input_limit } : {}),
  });
  const budget = Math.floor(usable * HANDOFF_SHARE);
  const header = renderPrompt('handoff-header', { FROM_SESSION: sessionId }).trimEnd();
  const seam = loadPrompt('handoff-seam').trimEnd();
  // A session that inherited a context itself (a chain of handoffs) passes its facts on: they are part of its start.
  // Once the session has a checkpoint of its own, its writer covered what it inherited.
  const earlier = checkpoint === null ? inherited.map((m) => textOf(m)).filter((t) => t.trim() !== '') : [];
  let caps = options.caps ?? DEFAULT_REBUILD_CAPS;
  let best: { text: string; tokens: number } | null = null;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const boundary = renderRebuildContext({
      tasks: ctx.tasks,
      checkpoint,
      projectMemory,
      globalMemory,
      notes,
      activeWriters: [],
      recentUser,
      memoryKeys: [],
      lastMessage: null,
      sessionDir: paths.sessionDir,
      checkpointPath: paths.checkpoint,
      selfContained: true,
      caps,
      counter,
    });
    const sections = (boundary?.sections ?? []).filter((s) => s.name !== 'seam' && s.name !== 'tail' && s.name !== 'checkpoint_index' && s.name !== 'header');
    const earlierText = earlier.length === 0 ? [] : [truncateTo(earlier.join('\n\n'), Math.floor(budget * 0.25), counter)];
    const head = [header, ...earlierText, ...sections.map((s) => s.text)].join('\n\n');
    const fixed = counter.count(head) + counter.count(seam) + 4;
    const room = budget - fixed;
    if (room < budget * MIN_TRANSCRIPT_SHARE && attempt < MAX_ATTEMPTS - 1 && after.length > 0) {
      caps = scaleRebuildCaps(caps, CAPS_STEP);
      continue;
    }
    const transcript = fitTranscript(after, Math.max(0, room), counter);
    if (sections.length === 0 && transcript.text === null && earlierText.length === 0) return { ok: false, reason: 'the session has nothing to hand off yet (no checkpoint, no memory, no messages)' };
    const text = [head, ...(transcript.text === null ? [] : [transcript.text]), seam].join('\n\n');
    const tokens = counter.count(text);
    if (best === null || tokens < best.tokens) best = { text, tokens };
    if (tokens <= budget) break;
    caps = scaleRebuildCaps(caps, CAPS_STEP);
  }
  if (best === null) return { ok: false, reason: 'nothing could be rendered' };
  const basis: HandoffBasis = checkpoint === null ? 'messages' : after.length === 0 ? 'checkpoint' : 'checkpoint+messages';
  return { ok: true, context: [userTextMessage(req.to, req.id, best.text)], basis, watermark, tokens: best.tokens, usable };
}

function truncateTo(text: string, cap: number, counter: { count(text: string): number }): string {
  if (counter.count(text) <= cap) return text;
  // Keep the newest part of an inherited context: the head of a long one is the oldest state.
  let cut = text.slice(-Math.max(0, cap * 3));
  while (cut.length > 0 && counter.count(cut) > cap) cut = cut.slice(Math.floor(cut.length / 10) + 1);
  return cut;
}
