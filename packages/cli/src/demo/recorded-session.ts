import { readFileSync } from 'node:fs';
import { MessageSchema, OpenRequestSchema, type Message, type OpenRequest } from '@baton/protocol';

/**
 * A recorded agent session (`fixtures/recorded-session.json`): what the agent sent at `open`, and its messages in
 * conversation order (OpenAI shapes with ids; finished assistant messages carry the provider's `usage`).
 */
export interface RecordedSession {
  readonly open: OpenRequest;
  readonly messages: readonly Message[];
}

/** The recording shipped with the CLI. */
export const RECORDED_SESSION_URL = new URL('../../fixtures/recorded-session.json', import.meta.url);

/**
 * Reads and validates a recording `{ project_id, agent, model, system, tools, writer_tools, messages }` with the
 * protocol's own schemas. Throws with the offending field when it does not match.
 */
export function loadRecordedSession(url: URL = RECORDED_SESSION_URL): RecordedSession {
  const raw = JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
  const { messages, ...rest } = raw;
  const open = OpenRequestSchema.safeParse(Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined && v !== null)));
  if (!open.success) {
    const issue = open.error.issues[0];
    throw new Error(`recorded session ${url.pathname}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  if (!Array.isArray(messages) || messages.length === 0) throw new Error(`recorded session ${url.pathname}: messages must be a non-empty array`);
  const parsed = messages.map((m, i) => {
    const result = MessageSchema.safeParse(m);
    if (!result.success) throw new Error(`recorded session ${url.pathname}: messages[${i}]: ${result.error.issues[0]?.message ?? 'invalid'}`);
    return result.data;
  });
  return { open: open.data, messages: parsed };
}

/**
 * Splits messages into agent turns as an agent would append them: a user (or system) message alone, or an assistant
 * message together with the tool results that follow it.
 */
export function agentTurns(messages: readonly Message[]): Message[][] {
  const turns: Message[][] = [];
  for (const m of messages) {
    const current = turns.at(-1);
    if (m.role === 'tool' && current !== undefined && current[0]?.role === 'assistant') current.push(m);
    else turns.push([m]);
  }
  return turns;
}
