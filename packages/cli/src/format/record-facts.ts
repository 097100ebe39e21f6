import type { StoredSessionRecord, StoredWriterRecord } from '@baton/log-schema';
import type { Message } from '@baton/protocol';
import type { TimelineEntry } from '@baton/runtime';
import { assertNever } from '../assert-never.ts';
import { decisionFacts } from './decision-facts.ts';
import { excerpt, groupDigits, shortWriterId } from './numbers.ts';

const MAX_LISTED_MESSAGES = 6;

/** Names of the tools an agent message calls (OpenAI `tool_calls`: `{ function: { name } }`). */
function toolNames(calls: Message['tool_calls']): string[] {
  return (calls ?? []).map((call) => {
    const name = (call as { function?: { name?: unknown } }).function?.name;
    return typeof name === 'string' ? name : '?';
  });
}

function messageFacts(m: Message): string {
  let text = `${m.id} ${m.role}`;
  if (m.agent_id !== undefined && m.agent_id !== 'main') text += ` [${m.agent_id}]`;
  if (m.usage !== undefined) text += ` (usage ${groupDigits(m.usage.total_tokens ?? m.usage.prompt_tokens + m.usage.completion_tokens)})`;
  const tools = toolNames(m.tool_calls);
  if (tools.length > 0) text += ` → ${tools.join(', ')}`;
  return text;
}

function sessionFacts(record: StoredSessionRecord, sessionId: string): string {
  switch (record.type) {
    case 'session.opened': {
      const { setup, encoding, lineage } = record.payload;
      const thresholds = setup.input.thresholds.map(groupDigits).join(' · ') || '–';
      const from = lineage === undefined ? '' : `, continues ${lineage.from_session} (${lineage.kind}${lineage.checkpoint_version === null ? '' : `, checkpoint v${lineage.checkpoint_version}`})`;
      return `project ${setup.projectId}, model ${setup.model}, usable ${groupDigits(setup.input.usableWindow)}, thresholds ${thresholds}, ${setup.input.fork ? 'fork' : 'delta'} mode, ${encoding}${from}`;
    }
    case 'messages.appended': {
      const { messages } = record.payload;
      const listed = messages.slice(0, MAX_LISTED_MESSAGES).map(messageFacts);
      if (messages.length > MAX_LISTED_MESSAGES) listed.push(`… +${messages.length - MAX_LISTED_MESSAGES} more`);
      return listed.join('; ');
    }
    case 'decision':
      return decisionFacts(record.payload, sessionId);
    case 'session.bound':
      return 'bound to another credential';
    case 'session.handoff_granted': {
      const p = record.payload;
      return `to ${p.to} (${p.model.id}), ${p.basis}, writer ${p.writer}, checkpoint v${p.checkpoint_version ?? '–'}, expires ${new Date(p.expires_at).toISOString()}`;
    }
    case 'session.continued':
      return `continued by ${record.payload.session_id} (${record.payload.kind})`;
    case 'snapshot':
      return `state after #${record.payload.for}: ${record.payload.state.context.index.length} messages in context`;
    case 'writer.settled': {
      const { writerId, outcome, failure, reason } = record.payload;
      let text = `${shortWriterId(writerId, sessionId)} ${outcome}`;
      if (failure !== undefined) text += ` (${failure.kind}${failure.message !== undefined ? `: ${excerpt(failure.message, 80)}` : ''})`;
      if (reason !== undefined && failure?.message !== reason) text += `, reason: ${excerpt(reason, 80)}`;
      return text;
    }
    case 'tasks.replaced':
      return `${record.payload.tasks.length} tasks`;
    case 'checkpoint.requested':
    case 'close.requested':
      return `request ${record.payload.requestId.slice(0, 8)}`;
    case 'rebuild.requested':
      return `${record.payload.reason}, request ${record.payload.requestId.slice(0, 8)}${record.payload.checkpointExists ? '' : ', no checkpoint file'}`;
    case 'rebuild.rendered':
      return record.payload.ok ? `boundary ${record.payload.boundary?.id ?? '–'}, ${record.payload.tailIds.length} tail messages` : `failed: ${excerpt(record.payload.reason ?? '', 80)}`;
    case 'rebuild.compacted':
      return `${record.payload.source} summary, boundary ${record.payload.boundary.id}, ${record.payload.tailIds.length} tail messages`;
    case 'rebuild.abandoned':
      return excerpt(record.payload.reason, 100);
    case 'timer.fired':
      return record.payload.timerId;
    case 'session.resumed':
    case 'drain.requested':
    case 'drain.lifted':
      return '';
    default:
      return assertNever(record, 'session record');
  }
}

function writerFacts(record: StoredWriterRecord): string {
  switch (record.type) {
    case 'writer.started': {
      const p = record.payload;
      return `${p.input.mode} mode, covers up to ${p.input.boundary}, trigger ${p.trigger}, watermark ${p.watermark ?? '–'}, ${p.prefixMessages} prefix messages, model ${p.model}`;
    }
    case 'writer.prepared':
      return '';
    case 'writer.prepare_failed':
      return `${record.payload.outcome}: ${excerpt(record.payload.reason, 100)}`;
    case 'model.replied': {
      const { usage, toolCalls, finishReason } = record.payload;
      let text = `usage prompt ${groupDigits(usage.prompt)} / completion ${groupDigits(usage.completion)} / cached ${groupDigits(usage.cached)}`;
      if (toolCalls.length > 0) text += `; tool calls ${toolCalls.map((c) => c.name).join(', ')}`;
      if (finishReason !== null) text += `; finish ${finishReason}`;
      return text;
    }
    case 'model.failed': {
      const { failure, status } = record.payload;
      return `${failure.kind}${status !== null ? ` (HTTP ${status})` : ''}${failure.message !== undefined ? `: ${excerpt(failure.message, 80)}` : ''}`;
    }
    case 'tools.completed':
      return record.payload.results.map((r) => `${r.name} ${r.ok ? 'ok' : 'refused'}`).join(', ');
    case 'validation.completed': {
      const { errors, warnings } = record.payload;
      const verdict = errors.length === 0 ? 'valid' : `invalid, ${errors.length} error${errors.length === 1 ? '' : 's'}: ${excerpt(errors[0] ?? '', 80)}`;
      return warnings.length > 0 ? `${verdict}, ${warnings.length} warnings` : verdict;
    }
    case 'commit.completed': {
      const { files } = record.payload;
      return `committed ${files.length} file${files.length === 1 ? '' : 's'}: ${files.map((f) => f.path.split('/').at(-1)).join(', ')}`;
    }
    case 'commit.failed':
      return excerpt(record.payload.message, 100);
    case 'writer.cancel':
      return `reason: ${excerpt(record.payload.reason, 100)}`;
    case 'snapshot':
      return `final state ${JSON.stringify(record.payload.state.value)}`;
    default:
      return assertNever(record, 'writer record');
  }
}

/** The key facts of one log record, for the readable timeline (empty when the type says it all). */
export function recordFacts(entry: TimelineEntry, sessionId: string): string {
  return entry.writerId === null ? sessionFacts(entry, sessionId) : writerFacts(entry);
}
