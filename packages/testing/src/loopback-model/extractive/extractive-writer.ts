import { parseToolArguments } from '../chat-request.ts';
import type { ConversationItem, ConversationToolCall } from '../conversation-view.ts';
import type { RecordedRequest, ScriptStep, ToolCallSpec } from '../types.ts';
import { renderCheckpoint } from './checkpoint-render.ts';
import { DEFAULT_CHECKPOINT_TEMPLATE, parseCheckpointTemplate, stripLineNumbers } from './checkpoint-template.ts';
import { clip, extractConversationFacts } from './conversation-facts.ts';
import { addMemoryRule } from './memory-rule.ts';
import { findWriterTask, inlinedTaskTree, isReflection, type WriterPaths } from './writer-task.ts';
import { catCall, fileEffects, patchCall, pickShellPatchTools, shellOutput, wholeFilePatch, type ShellPatchTools } from './shell-patch-tools.ts';
import { callArguments, pathOf, pickWriterTools, writesContent, type ToolBinding } from './writer-tools.ts';

/** The completion signal of a writer turn. */
export const CHECKPOINT_COMPLETE = 'CHECKPOINT_COMPLETE';

/**
 * How the writer reaches the files: the request's whole-file read and write tools, or (Codex) its shell, which prints
 * files, and its patch tool, which writes them.
 */
type FileAccess =
  | { readonly kind: 'whole-file'; readonly read: ToolBinding | undefined; readonly write: ToolBinding }
  | { readonly kind: 'shell-patch'; readonly tools: ShellPatchTools };

/** What the writer has done so far in this run (the messages after its task). */
interface WriterProgress {
  /** Content returned for each path read, by path (undefined: the read failed, or has no result yet). */
  readonly readResults: ReadonlyMap<string, string | undefined>;
  /** The content each path was last written with, when the call shows it (patches). */
  readonly written: ReadonlyMap<string, string>;
  readonly lastCheckpointWrite: number;
  readonly lastReflection: number;
}

/** The paths a call reads and the paths it writes (with their new content when the call shows it). */
function callEffects(access: FileAccess, call: ConversationToolCall): { reads: readonly string[]; writes: ReadonlyMap<string, string | undefined> } {
  if (access.kind === 'shell-patch') return fileEffects(access.tools, call);
  const args = parseToolArguments(call.arguments);
  const path = pathOf(args);
  if (path === undefined) return { reads: [], writes: new Map() };
  return writesContent(args) ? { reads: [], writes: new Map([[path, undefined]]) } : { reads: [path], writes: new Map() };
}

function writerProgress(items: readonly ConversationItem[], taskIndex: number, paths: WriterPaths, access: FileAccess): WriterProgress {
  const results = new Map<string, string>();
  const readCalls = new Map<string, string>();
  const written = new Map<string, string>();
  let lastCheckpointWrite = -1;
  let lastReflection = -1;
  items.forEach((item, i) => {
    // The task item itself may carry the results of the agent's last calls (Anthropic): they are not the writer's.
    if (i <= taskIndex) return;
    for (const result of item.toolResults) results.set(result.callId, result.output);
    if (item.role === 'user' && isReflection(item.text)) lastReflection = i;
    if (item.role !== 'assistant') return;
    for (const call of item.toolCalls) {
      const effects = callEffects(access, call);
      for (const path of effects.reads) readCalls.set(path, call.id);
      for (const [path, content] of effects.writes) {
        if (content !== undefined) written.set(path, content);
        if (path === paths.checkpoint) lastCheckpointWrite = i;
      }
    }
  });
  // A shell that could not print a file answers with an error: the file is taken as missing.
  const content = (output: string | undefined): string | undefined => (output === undefined || access.kind === 'whole-file' ? output : shellOutput(output));
  const readResults = new Map([...readCalls].map(([path, id]) => [path, content(results.get(id))] as const));
  return { readResults, written, lastCheckpointWrite, lastReflection };
}

/** The call that reads `path`, when the writer can read. */
function readCall(access: FileAccess, path: string): ToolCallSpec | undefined {
  if (access.kind === 'shell-patch') return catCall(access.tools, path);
  return access.read === undefined ? undefined : { name: access.read.name, arguments: callArguments(access.read, path) };
}

/** The call that makes `path` hold `content`; `previous` is what it holds now (undefined: it does not exist). */
function writeCall(access: FileAccess, path: string, content: string, previous: string | undefined): ToolCallSpec {
  if (access.kind === 'shell-patch') return patchCall(access.tools, wholeFilePatch(path, previous, content));
  return { name: access.write.name, arguments: callArguments(access.write, path, content) };
}

/** Splits notes.md into its template part (before the first `## ` entry) and its entries' text lines. */
function splitNotes(text: string): { template: string; entries: string[] } | undefined {
  const lines = stripLineNumbers(text).split('\n');
  const first = lines.findIndex((l) => l.startsWith('## '));
  if (first < 0) return undefined;
  const entries = lines.slice(first).filter((l) => l.trim() !== '' && !l.startsWith('## '));
  return { template: `${lines.slice(0, first).join('\n').trimEnd()}\n`, entries: entries.map((l) => clip(l, 200)).slice(0, 5) };
}

/**
 * The text of the task item before the task itself: in the Anthropic API a fork whose prefix ends on a user message
 * (Claude Code's prompt, say) carries the task as one more text block of that message, so the user's words come
 * first. The task starts at the `<system-reminder>` that opens the block stating the checkpoint path.
 */
function textBeforeTask(text: string): string {
  const paths = text.indexOf('CHECKPOINT_PATH');
  const at = paths < 0 ? -1 : text.lastIndexOf('<system-reminder>', paths);
  return at > 0 ? text.slice(0, at).trim() : '';
}

/**
 * The conversation the checkpoint covers: the items before the task, plus what the task item carries besides the
 * task (tool results, the user's own text).
 */
function historyBefore(items: readonly ConversationItem[], taskIndex: number): ConversationItem[] {
  const before = items.slice(0, taskIndex);
  const task = items[taskIndex];
  if (task === undefined) return before;
  const own = textBeforeTask(task.text);
  return task.toolResults.length > 0 || own !== '' ? [...before, { ...task, text: own }] : before;
}

function text(content: string): ScriptStep {
  return { reply: { content, finish_reason: 'stop' } };
}

/** The request's way to the files: whole-file tools first, else a shell and a patch tool; undefined when neither. */
function fileAccess(request: RecordedRequest): FileAccess | undefined {
  const { read, write } = pickWriterTools(request.conversation.tools);
  if (write !== undefined) return { kind: 'whole-file', read, write };
  const tools = pickShellPatchTools(request);
  return tools === undefined ? undefined : { kind: 'shell-patch', tools };
}

/** How the fake writer behaves beyond the checkpoint. */
export interface ExtractiveOptions {
  /**
   * A rule this writer adds to the project's MEMORY.md (its Rules section), given the writer's paths (the staged
   * paths name the writer); undefined leaves MEMORY.md alone.
   */
  readonly memoryRule?: (paths: WriterPaths) => string | undefined;
}

/**
 * The deterministic fake checkpoint writer: reads the request like a writer model would and answers the next turn.
 * Turn 1 reads the checkpoint, memory and notes files in one parallel message; turn 2 writes a complete 11-section
 * checkpoint built from the conversation before the task (structure copied from the file it read), resetting notes.md
 * when it has entries; after a write it answers `CHECKPOINT_COMPLETE`, unless a later validation reflection asks for a
 * fix, which gets one shorter rewrite. It uses the request's whole-file read and write tools, or — for an agent
 * without them, such as Codex — its shell (`cat <path>`, an error meaning the file is missing) and its patch tool
 * (an added file, or an update replacing every line). Without a writer task it answers with an extractive summary as
 * text; without a usable way to write, with an explanation. Reads the request through its neutral view, so it serves
 * every API, and its reply spec renders in the request's API.
 */
export function extractiveStep(request: RecordedRequest, options: ExtractiveOptions = {}): ScriptStep {
  const { items } = request.conversation;
  const task = findWriterTask(items);
  if (task === undefined) {
    const last = items[items.length - 1];
    const history = last?.role === 'user' && last.toolResults.length === 0 ? items.slice(0, -1) : items;
    return text(renderCheckpoint(DEFAULT_CHECKPOINT_TEMPLATE, extractConversationFacts(history), { taskTree: [], notes: [], short: false }));
  }
  const access = fileAccess(request);
  if (access === undefined) {
    return text('Cannot write the checkpoint: the request offers no tool that writes a whole file (a tool named like write/create with a path argument and a content argument), nor a shell and a patch tool.');
  }
  const { paths } = task;
  const progress = writerProgress(items, task.index, paths, access);
  const rewrite = progress.lastCheckpointWrite >= 0 && progress.lastReflection > progress.lastCheckpointWrite;
  if (progress.lastCheckpointWrite >= 0 && !rewrite) return text(CHECKPOINT_COMPLETE);

  if (progress.readResults.size === 0) {
    const targets = [paths.checkpoint, paths.memory, paths.notes].filter((p): p is string => p !== undefined);
    const reads = targets.flatMap((p) => readCall(access, p) ?? []);
    if (reads.length > 0) return { reply: { content: null, tool_calls: reads } };
  }

  const template = parseCheckpointTemplate(progress.readResults.get(paths.checkpoint));
  const notesText = paths.notes === undefined ? undefined : progress.readResults.get(paths.notes);
  const notes = notesText === undefined ? undefined : splitNotes(notesText);
  const facts = extractConversationFacts(historyBefore(items, task.index));
  const checkpoint = renderCheckpoint(template, facts, { taskTree: inlinedTaskTree(task.text), notes: notes?.entries ?? [], short: rewrite });
  const current = (path: string): string | undefined => progress.written.get(path) ?? progress.readResults.get(path);
  const calls: ToolCallSpec[] = [writeCall(access, paths.checkpoint, checkpoint, current(paths.checkpoint))];
  if (!rewrite && notes !== undefined && paths.notes !== undefined && notesText !== undefined) {
    calls.push(writeCall(access, paths.notes, notes.template, notesText));
  }
  const rule = paths.memory === undefined ? undefined : options.memoryRule?.(paths);
  const memoryText = paths.memory === undefined ? undefined : current(paths.memory);
  if (!rewrite && rule !== undefined && paths.memory !== undefined && memoryText !== undefined) {
    const updated = addMemoryRule(memoryText, rule);
    if (updated !== memoryText) calls.push(writeCall(access, paths.memory, updated, memoryText));
  }
  return { reply: { content: null, tool_calls: calls } };
}
