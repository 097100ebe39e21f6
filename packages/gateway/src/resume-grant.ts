import type { BatonClient } from '@baton/client';
import type { AgentApi } from './agent-api.ts';
import { toRole } from './agent-items.ts';
import type { AgentRequest } from './agent-request.ts';

/** A history an agent sends when it starts over: nothing the model said yet (no assistant item, no tool result). */
export function startsOver(api: AgentApi, req: AgentRequest): boolean {
  return req.history.length > 0 && req.history.every((item) => toRole(item, api.api) === 'user');
}

/**
 * Resuming a session for an agent that started over (`--resume-empty`): a one-time grant of the session's rebuilt
 * context in the agent's API (lineage kind `resume`), which the new slice is opened with. Null when the daemon has no
 * such session (nothing to resume).
 */
export async function resumeGrant(client: BatonClient, from: string, api: AgentApi, req: AgentRequest, contextWindow: number): Promise<string | null> {
  try {
    const grant = await client.handoff(from, { kind: 'resume', to: api.api, model: { id: req.model, context_window: contextWindow } });
    return grant.token;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'not_found' || (err as { code?: unknown }).code === 'conflict') return null;
    throw err;
  }
}
