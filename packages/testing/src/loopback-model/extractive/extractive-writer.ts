import { parseToolArguments } from '../chat-request.ts';
import type { ConversationItem } from '../conversation-view.ts';
import type { RecordedRequest, ScriptStep, ToolCallSpec } from '../types.ts';
import { renderCheckpoint } from './checkpoint-render.ts';
import { DEFAULT_CHECKPOINT_TEMPLATE, parseCheckpointTemplate, stripLineNumbers } from './checkpoint-template.ts';
import { clip, extractConversationFacts } from './conversation-facts.ts';
import { findWriterTask, inlinedTaskTree, isReflection, type WriterPaths } from './writer-task.ts';
import { callArguments, pathOf, pickWriterTools, writesContent } from './writer-tools.ts';

/** The completion signal of a writer turn (reference §6.3). */
export const CHECKPOINT_COMPLETE = 'CHECKPOINT_COMPLETE';

/** What the writer has done so far in this run (the messages after its task). */
interface WriterProgress {
  /** Content returned for each path read, by path. */
  readonly readResults: ReadonlyMap<string, string | undefined>;
  readonly lastCheckpointWrite: number;
  readonly lastReflection: number;
}

function writerProgress(items: readonly ConversationItem[], taskIndex: number, paths: WriterPaths): WriterProgress {
  const results = new Map<string, string>();
  const readCalls = new Map<string, string>();
  let lastCheckpointWrite = -1;
  let lastReflection = -1;
  items.forEach((item, i) => {
    // The task item itself may carry the results of the agent's last calls (Anthropic): they are not the writer's.
    if (i <= taskIndex) return;
    for (const result of item.toolResults) results.set(result.callId, result.output);
    if (item.role === 'user' && isReflection(item.text)) lastReflection = i;
    if (item.role !== 'assistant') return;
    for (const call of item.toolCalls) {
      const args = parseToolArguments(call.arguments);
      const path = pathOf(args);
      if (path === undefined) continue;
      if (!writesContent(args)) readCalls.set(path, call.id);
      else if (path === paths.checkpoint) lastCheckpointWrite = i;
    }
  });
  const readResults = new Map([...readCalls].map(([path, id]) => [path, results.get(id)] as const));
  return { readResults, lastCheckpointWrite, lastReflection };
}

/** Splits notes.md into its template part (before the first `## ` entry) and its entries' text lines. */
function splitNotes(text: string): { template: string; entries: string[] } | undefined {
  const lines = stripLineNumbers(text).split('\n');
  const first = lines.findIndex((l) => l.startsWith('## '));
  if (first < 0) return undefined;
  const entries = lines.slice(first).filter((l) => l.trim() !== '' && !l.startsWith('## '));
  return { template: `${lines.slice(0, first).join('\n').trimEnd()}\n`, entries: entries.map((l) => clip(l, 200)).slice(0, 5) };
}

/** The conversation the checkpoint covers: the items before the task, plus the tool results the task item carries. */
function historyBefore(items: readonly ConversationItem[], taskIndex: number): ConversationItem[] {
  const before = items.slice(0, taskIndex);
  const task = items[taskIndex];
  return task !== undefined && task.toolResults.length > 0 ? [...before, { ...task, text: '' }] : before;
}

function text(content: string): ScriptStep {
  return { reply: { content, finish_reason: 'stop' } };
}

/**
 * The deterministic fake checkpoint writer: reads the request like a writer model would and answers the next turn.
 * Turn 1 reads the checkpoint, memory and notes files in one parallel message; turn 2 writes a complete 11-section
 * checkpoint built from the conversation before the task (structure copied from the file it read), resetting notes.md
 * when it has entries; after a write it answers `CHECKPOINT_COMPLETE`, unless a later validation reflection asks for a
 * fix, which gets one shorter rewrite. Without a writer task it answers with an extractive summary as text; without
 * a usable write tool, with an explanation. Reads the request through its neutral view, so it serves every API, and
 * its reply spec renders in the request's API.
 */
export function extractiveStep(request: RecordedRequest): ScriptStep {
  const { items, tools } = request.conversation;
  const task = findWriterTask(items);
  if (task === undefined) {
    const last = items[items.length - 1];
    const history = last?.role === 'user' && last.toolResults.length === 0 ? items.slice(0, -1) : items;
    return text(renderCheckpoint(DEFAULT_CHECKPOINT_TEMPLATE, extractConversationFacts(history), { taskTree: [], notes: [], short: false }));
  }
  const { read, write } = pickWriterTools(tools);
  if (write === undefined) {
    return text('Cannot write the checkpoint: the request offers no tool that writes a whole file (a tool named like write/create with a path argument and a content argument).');
  }
  const { paths } = task;
  const progress = writerProgress(items, task.index, paths);
  const rewrite = progress.lastCheckpointWrite >= 0 && progress.lastReflection > progress.lastCheckpointWrite;
  if (progress.lastCheckpointWrite >= 0 && !rewrite) return text(CHECKPOINT_COMPLETE);

  if (read !== undefined && progress.readResults.size === 0) {
    const targets = [paths.checkpoint, paths.memory, paths.notes].filter((p): p is string => p !== undefined);
    return { reply: { content: null, tool_calls: targets.map((p) => ({ name: read.name, arguments: callArguments(read, p) })) } };
  }

  const template = parseCheckpointTemplate(progress.readResults.get(paths.checkpoint));
  const notesText = paths.notes === undefined ? undefined : progress.readResults.get(paths.notes);
  const notes = notesText === undefined ? undefined : splitNotes(notesText);
  const facts = extractConversationFacts(historyBefore(items, task.index));
  const checkpoint = renderCheckpoint(template, facts, { taskTree: inlinedTaskTree(task.text), notes: notes?.entries ?? [], short: rewrite });
  const calls: ToolCallSpec[] = [{ name: write.name, arguments: callArguments(write, paths.checkpoint, checkpoint) }];
  if (!rewrite && notes !== undefined && paths.notes !== undefined) {
    calls.push({ name: write.name, arguments: callArguments(write, paths.notes, notes.template) });
  }
  return { reply: { content: null, tool_calls: calls } };
}
