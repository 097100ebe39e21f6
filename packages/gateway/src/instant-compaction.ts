import type { ServerResponse } from 'node:http';
import type { BatonClient } from '@baton/client';
import { viewOf } from '@baton/protocol';
import type { AgentApi } from './agent-api.ts';
import type { AgentRequest } from './agent-request.ts';
import type { SessionRecorder } from './session-recorder.ts';

export interface CompactionCall {
  readonly client: BatonClient;
  readonly recorder: SessionRecorder;
  readonly api: AgentApi;
  readonly key: string;
  readonly req: AgentRequest;
  readonly res: ServerResponse;
  readonly log: (level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Record<string, unknown>) => void;
  /** The agent cannot reach the daemon's memory files: the summary names none of them. */
  readonly selfContained: boolean;
}

/**
 * Answers an agent's own compaction request in the agent's API, never with a call upstream: the daemon rebuilds the
 * session (reason `compaction`, announced in its events) — from its checkpoint when one is usable, otherwise at once
 * from the conversation by the same fitting rules with an extractive summary — and the rebuilt context's boundary
 * message (checkpoint or summary, the user's recent words, memory) is the summary the agent gets. The slice
 * remembers it: the agent's next request, which starts from that summary, continues the same daemon session on the
 * rebuilt context (`SessionRecorder.adoptCompaction`). Returns false only when the gateway has recorded nothing of
 * the session or the daemon could not answer (the request then goes upstream like any side call).
 */
export async function answerCompaction(call: CompactionCall): Promise<boolean> {
  const { client, recorder, api, key, req, res } = call;
  // The request may carry the conversation another way (a transcript in one message): the session's newest slice is
  // the one being compacted then.
  const session = recorder.sliceFor(key, api, req) ?? recorder.session(key);
  if (session === undefined) return false;
  try {
    await recorder.recordBeforeCompaction(session, api, req);
    const rebuilt = await client.rebuild(session.daemonSessionId, { reason: 'compaction', ...(call.selfContained ? { self_contained: true } : {}) });
    const boundary = rebuilt.context[0];
    if (rebuilt.outcome === 'insert-failed' || boundary === undefined) return false;
    const text = viewOf(boundary).text;
    recorder.compacted(session, text, rebuilt.context);
    const { contentType, body } = api.textReply(req, text, { input: recorder.lastUsage(session), output: Math.ceil(text.length / 4) });
    if (res.destroyed) return true;
    res.writeHead(200, { 'content-type': contentType });
    res.end(body);
    call.log('info', "answered the agent's compaction without a model call", { session: key, outcome: rebuilt.outcome, covered: rebuilt.covered_up_to });
    return true;
  } catch (err) {
    call.log('warn', "could not answer the agent's compaction: it goes upstream", { session: key, error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}
