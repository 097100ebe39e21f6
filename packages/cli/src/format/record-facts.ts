import { decisionFacts } from './decision-facts.ts';
import { excerpt, groupDigits, shortWriterId } from './numbers.ts';

type Payload = Record<string, unknown>;

const MAX_LISTED_MESSAGES = 6;

function toolNames(calls: unknown): string[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((c) => {
    const call = c as { name?: unknown; function?: { name?: unknown } };
    return String(call.function?.name ?? call.name ?? '?');
  });
}

function messageFacts(m: Payload): string {
  let text = `${String(m['id'])} ${String(m['role'])}`;
  if (m['agent_id'] !== undefined && m['agent_id'] !== 'main') text += ` [${String(m['agent_id'])}]`;
  const usage = m['usage'] as { total_tokens?: number; prompt_tokens?: number; completion_tokens?: number } | undefined;
  if (usage !== undefined) {
    const total = usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0);
    text += ` (usage ${groupDigits(total)})`;
  }
  const tools = toolNames(m['tool_calls']);
  if (tools.length > 0) text += ` → ${tools.join(', ')}`;
  return text;
}

function sessionFacts(type: string, p: Payload, sessionId: string): string {
  switch (type) {
    case 'session.opened': {
      const setup = (p['setup'] ?? {}) as Payload;
      const input = (setup['input'] ?? {}) as Payload;
      const thresholds = Array.isArray(input['thresholds']) ? (input['thresholds'] as number[]).map(groupDigits).join(' · ') : '–';
      return `project ${String(setup['projectId'])}, model ${String(setup['model'])}, usable ${groupDigits(Number(input['usableWindow'] ?? 0))}, thresholds ${thresholds}, ${input['fork'] === true ? 'fork' : 'delta'} mode, ${String(p['encoding'])}`;
    }
    case 'messages.appended': {
      const messages = Array.isArray(p['messages']) ? (p['messages'] as Payload[]) : [];
      const listed = messages.slice(0, MAX_LISTED_MESSAGES).map(messageFacts);
      if (messages.length > MAX_LISTED_MESSAGES) listed.push(`… +${messages.length - MAX_LISTED_MESSAGES} more`);
      return listed.join('; ');
    }
    case 'decision':
      return decisionFacts(p, sessionId);
    case 'writer.settled': {
      const failure = p['failure'] as { kind?: string; message?: string } | undefined;
      let text = `${shortWriterId(String(p['writerId']), sessionId)} ${String(p['outcome'])}`;
      if (failure?.kind !== undefined) text += ` (${failure.kind}${failure.message !== undefined ? `: ${excerpt(failure.message, 80)}` : ''})`;
      if (p['reason'] !== undefined && failure?.message !== p['reason']) text += `, reason: ${excerpt(String(p['reason']), 80)}`;
      return text;
    }
    case 'tasks.replaced':
      return `${Array.isArray(p['tasks']) ? p['tasks'].length : 0} tasks`;
    case 'checkpoint.requested':
    case 'close.requested':
      return `request ${String(p['requestId']).slice(0, 8)}`;
    default:
      return '';
  }
}

function writerFacts(type: string, p: Payload): string {
  switch (type) {
    case 'writer.started': {
      const input = (p['input'] ?? {}) as Payload;
      return `${String(input['mode'])} mode, covers up to ${String(input['boundary'])}, trigger ${String(p['trigger'])}, watermark ${String(p['watermark'] ?? '–')}, ${String(p['prefixMessages'])} prefix messages, model ${String(p['model'])}`;
    }
    case 'writer.prepared':
      return '';
    case 'writer.prepare_failed':
      return `${String(p['outcome'])}: ${excerpt(String(p['reason']), 100)}`;
    case 'model.replied': {
      const u = (p['usage'] ?? {}) as { prompt?: number; completion?: number; cached?: number };
      const tools = toolNames(p['toolCalls']);
      let text = `usage prompt ${groupDigits(u.prompt ?? 0)} / completion ${groupDigits(u.completion ?? 0)} / cached ${groupDigits(u.cached ?? 0)}`;
      if (tools.length > 0) text += `; tool calls ${tools.join(', ')}`;
      if (p['finishReason'] !== null && p['finishReason'] !== undefined) text += `; finish ${String(p['finishReason'])}`;
      return text;
    }
    case 'model.failed': {
      const f = (p['failure'] ?? {}) as { kind?: string; message?: string };
      return `${String(f.kind)}${p['status'] !== null && p['status'] !== undefined ? ` (HTTP ${String(p['status'])})` : ''}${f.message !== undefined ? `: ${excerpt(f.message, 80)}` : ''}`;
    }
    case 'tools.completed': {
      const results = Array.isArray(p['results']) ? (p['results'] as { name?: unknown; ok?: unknown }[]) : [];
      return results.map((r) => `${String(r.name)} ${r.ok === true ? 'ok' : 'refused'}`).join(', ');
    }
    case 'validation.completed': {
      const errors = Array.isArray(p['errors']) ? (p['errors'] as string[]) : [];
      const warnings = Array.isArray(p['warnings']) ? p['warnings'].length : 0;
      const verdict = errors.length === 0 ? 'valid' : `invalid, ${errors.length} error${errors.length === 1 ? '' : 's'}: ${excerpt(errors[0] ?? '', 80)}`;
      return warnings > 0 ? `${verdict}, ${warnings} warnings` : verdict;
    }
    case 'commit.completed': {
      const files = Array.isArray(p['files']) ? (p['files'] as { path?: unknown }[]) : [];
      return `committed ${files.length} file${files.length === 1 ? '' : 's'}: ${files.map((f) => String(f.path).split('/').at(-1)).join(', ')}`;
    }
    case 'commit.failed':
      return excerpt(String(p['message']), 100);
    case 'writer.cancel':
      return `reason: ${excerpt(String(p['reason']), 100)}`;
    default:
      return '';
  }
}

/** The key facts of one log record, for the readable timeline (empty when the type says it all). */
export function recordFacts(record: { type: string; payload: unknown; writerId: string | null }, sessionId: string): string {
  const payload = (record.payload ?? {}) as Payload;
  return record.writerId === null ? sessionFacts(record.type, payload, sessionId) : writerFacts(record.type, payload);
}
