import { parseToolArguments } from '../chat-request.ts';
import type { ConversationItem } from '../conversation-view.ts';
import { pathOf } from './writer-tools.ts';

/** A file path seen in tool-call arguments and the tools that touched it (first-seen order). */
export interface TouchedFile {
  readonly path: string;
  readonly tools: readonly string[];
}

/** What the fake writer extracts from the conversation it checkpoints. All lists are de-duplicated. */
export interface ConversationFacts {
  /** Latest substantive user request, verbatim (system reminders removed). */
  readonly userRequest: string | undefined;
  readonly nextAction: string | undefined;
  readonly lastAssistantText: string | undefined;
  /** Calls of the last assistant message that called tools, e.g. "`bash` (command: npm test)". */
  readonly lastToolCalls: readonly string[];
  readonly directives: readonly string[];
  readonly files: readonly TouchedFile[];
  readonly facts: readonly string[];
  /** Newest first. */
  readonly errors: readonly string[];
  readonly resources: readonly string[];
  readonly decisions: readonly string[];
  readonly questions: readonly string[];
}

const SHELL_TOOL = /bash|shell|exec|terminal|command|run/i;
const ERROR_LINE = /errors?\b|\bfail(?:ed|ure)\b|exception\b|Traceback|ERR!/i;
const FACT = /\b(?:because|turns out|note)\b/i;
const DECISION = /\b(?:decided|we will|we'll|instead of|chose|choose to|going with)\b/i;
const DIRECTIVE = /^(?:please\s+)?(?:always|never|do not|don't|make sure|avoid)\b/i;
const NEXT = /\b(?:next|I'll|I will|let me|let's|then|going to|now)\b/i;
const TRIVIAL = /^\s*(?:ok(?:ay)?|yes|no|thanks|thank you|continue|go on|go ahead|sure)\W*$/i;

/** Cuts `text` to `max` characters on one line. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function withoutReminders(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '').trim();
}

function sentences(text: string): string[] {
  const prose = withoutReminders(text).replace(/```[\s\S]*?```/g, ' ');
  return prose
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim().replace(/^[-*>#\s]+/, ''))
    .filter((s) => s.length >= 12)
    .map((s) => clip(s, 240));
}

function uniqueLast(items: readonly string[], max: number): string[] {
  const unique = [...new Set(items)];
  return unique.slice(Math.max(0, unique.length - max));
}

function shellCommand(args: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of ['command', 'cmd', 'script', 'commands']) {
    const value = args[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (Array.isArray(value)) return value.filter((v) => typeof v === 'string').join(' ');
  }
  return undefined;
}

function resourcesOf(command: string): string[] {
  const found: string[] = [];
  for (const m of command.matchAll(/git\s+(?:checkout|switch)\s+(?:-[bcB]\s+)?([A-Za-z0-9][\w./-]*)/g)) found.push(`branch: ${m[1]}`);
  for (const m of command.matchAll(/git\s+branch\s+([A-Za-z0-9][\w./-]*)/g)) found.push(`branch: ${m[1]}`);
  for (const m of command.matchAll(/(?:--port[=\s]+|\bPORT=|localhost:|127\.0\.0\.1:|0\.0\.0\.0:|\s-p\s+)(\d{2,5})\b/g)) found.push(`port: ${m[1]}`);
  return found;
}

function describeCall(name: string, args: Readonly<Record<string, unknown>>): string {
  const key = ['path', 'file_path', 'filePath', 'filename', 'file', 'command', 'cmd', 'pattern', 'query'].find(
    (k) => typeof args[k] === 'string',
  );
  return key === undefined ? `\`${name}\`` : `\`${name}\` (${key}: ${clip(String(args[key]), 120)})`;
}

/** The first line that reads like an error, and where it came from: a tool result (named by its tool) or the role. */
function errorOf(item: ConversationItem, toolNames: ReadonlyMap<string, string>): string | undefined {
  for (const result of item.toolResults) {
    const line = result.output.split('\n').find((l) => ERROR_LINE.test(l));
    if (line !== undefined) return `\`${toolNames.get(result.callId) ?? 'tool'}\`: ${clip(line, 200)}`;
  }
  const line = item.text.split('\n').find((l) => ERROR_LINE.test(l));
  return line === undefined ? undefined : `${item.role}: ${clip(line, 200)}`;
}

/**
 * Extracts the checkpoint material from `items` (the conversation before the writer task, in any API). Consecutive
 * assistant items are one turn (a Responses turn is one item per call), so "last tool calls" covers all of them.
 */
export function extractConversationFacts(items: readonly ConversationItem[]): ConversationFacts {
  const toolNames = new Map<string, string>();
  const files = new Map<string, string[]>();
  const facts: string[] = [];
  const decisions: string[] = [];
  const directives: string[] = [];
  const questions: string[] = [];
  const errors: string[] = [];
  const branchesAndPorts: string[] = [];
  const commands: string[] = [];
  let userRequest: string | undefined;
  let lastAssistantText: string | undefined;
  let lastToolCalls: string[] = [];
  let previousRole: string | undefined;

  for (const item of items) {
    const { text } = item;
    if (item.role === 'user') {
      const request = withoutReminders(text);
      if (request.length >= 8 && !TRIVIAL.test(request)) userRequest = request;
      for (const s of sentences(text)) {
        if (s.endsWith('?')) questions.push(s);
        if (DIRECTIVE.test(s)) directives.push(s);
        if (DECISION.test(s)) decisions.push(s);
      }
    } else if (item.role === 'assistant') {
      if (text.trim() !== '') lastAssistantText = withoutReminders(text);
      for (const s of sentences(text)) {
        if (FACT.test(s)) facts.push(s);
        if (DECISION.test(s)) decisions.push(s);
      }
      if (item.toolCalls.length > 0 && previousRole !== 'assistant') lastToolCalls = [];
      for (const call of item.toolCalls) {
        toolNames.set(call.id, call.name);
        const args = parseToolArguments(call.arguments);
        lastToolCalls.push(describeCall(call.name, args));
        const path = pathOf(args);
        if (path !== undefined) {
          const tools = files.get(path) ?? [];
          if (!tools.includes(call.name)) tools.push(call.name);
          files.set(path, tools);
        }
        const command = SHELL_TOOL.test(call.name) ? shellCommand(args) : undefined;
        if (command !== undefined) {
          branchesAndPorts.push(...resourcesOf(command));
          commands.push(`command: \`${clip(command, 160)}\``);
        }
      }
    }
    previousRole = item.role;
    if (item.role === 'system') continue;
    const error = errorOf(item, toolNames);
    if (error !== undefined) errors.push(error);
  }

  const nextSentences = lastAssistantText === undefined ? [] : sentences(lastAssistantText);
  return {
    userRequest,
    nextAction: [...nextSentences].reverse().find((s) => NEXT.test(s)) ?? nextSentences[nextSentences.length - 1],
    lastAssistantText,
    lastToolCalls,
    directives: uniqueLast(directives, 5),
    files: [...files].map(([path, tools]) => ({ path, tools })).slice(0, 40),
    facts: uniqueLast(facts, 8),
    errors: uniqueLast(errors, 8).reverse(),
    resources: [...uniqueLast(branchesAndPorts, 8), ...uniqueLast(commands, 6)],
    decisions: uniqueLast(decisions, 8),
    questions: uniqueLast(questions, 5),
  };
}
