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
}

/**
 * Answers an agent's own compaction request from the session's checkpoint, in the agent's API and without a model
 * call: when the request continues a recorded conversation whose checkpoint exists, the daemon rebuilds the session
 * (reason `compaction`, announced in its events) and the rebuilt context's boundary message — checkpoint, the user's
 * recent words, memory — is the summary the agent gets. Returns false when there is no such checkpoint (the request
 * then goes upstream like any side call).
 */
export async function answerCompaction(call: CompactionCall): Promise<boolean> {
  const { client, recorder, api, key, req, res } = call;
  const session = recorder.sliceFor(key, api, req);
  if (session === undefined) return false;
  try {
    await session.appending;
    const status = await client.status(session.daemonSessionId);
    if (status.state.watermark === null || !status.files.checkpoint.exists) return false;
    const rebuilt = await client.rebuild(session.daemonSessionId, { reason: 'compaction' });
    const boundary = rebuilt.context[0];
    if (rebuilt.outcome !== 'rebuilt' || boundary === undefined) return false;
    const text = viewOf(boundary).text;
    const { contentType, body } = api.textReply(req, text, { input: status.state.tokens, output: Math.ceil(text.length / 4) });
    if (res.destroyed) return true;
    res.writeHead(200, { 'content-type': contentType });
    res.end(body);
    call.log('info', "answered the agent's compaction from the checkpoint", { session: key, covered: rebuilt.covered_up_to });
    return true;
  } catch (err) {
    call.log('warn', "could not answer the agent's compaction from the checkpoint: it goes upstream", { session: key, error: err instanceof Error ? err.message : String(err) });
    return false;
  }
}
