import { fillLabel, loadPromptLabels, truncateHeadTail } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { textOf } from './message-text.ts';

/**
 * The steps an earlier agent took after the checkpoint, as text facts for the agent that continues its session: the
 * user's words whole, what the agent said, which tools it ran with what, and what they returned — never as tool calls
 * or tool results, which the new agent's tools could not answer. Fitted into a token budget: the user's words first,
 * then the newest of the other steps.
 */

const LABELS = ['since', 'user', 'assistant', 'call', 'result', 'omitted', 'cut'] as const;
/** Characters of an agent's text and of a tool's arguments kept on their line. */
const TEXT_CHARS = 600;
const ARGUMENT_CHARS = 300;
/** Characters of a tool's output kept (its first lines, or the lines around an error). */
const OUTPUT_CHARS = 400;
/** When the user's words do not all fit: the share of the room the newest of them take whole. */
const WHOLE_SHARE = 0.6;
/** Tokens below which an older user message cut to its share says nothing useful: it is left out. */
const MIN_USER_SHARE = 24;

export interface TokenCounter {
  count(text: string): number;
}

interface Step {
  readonly text: string;
  readonly user: boolean;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function oneLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}

/** A tool's output as a short fact: the lines that name an error when there are any, else its first lines. */
function outputFact(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  if (lines.length === 0) return '(empty)';
  const error = lines.findIndex((l) => /error|exception|fail|fatal|traceback|panic/i.test(l));
  const from = error < 0 ? 0 : Math.max(0, error - 1);
  return oneLine(lines.slice(from, from + 6).join(' | '), OUTPUT_CHARS);
}

/** One step per user message, agent text, tool call and tool result, in order. */
export function transcriptSteps(messages: readonly Message[]): Step[] {
  const labels = loadPromptLabels('handoff-labels', LABELS);
  const names = new Map<string, string>();
  const steps: Step[] = [];
  for (const m of messages) {
    const view = viewOf(m);
    if (view.reasoning || view.opaque) continue;
    if (view.role === 'user') {
      const text = textOf(m);
      if (text.trim() !== '') steps.push({ text: `${labels.user}\n${text}`, user: true });
    } else if (view.role === 'tool') {
      for (const r of view.toolResults) steps.push({ text: fillLabel(labels.result, { TOOL: names.get(r.callId) ?? 'a tool', TEXT: outputFact(r.text) }), user: false });
    } else if (view.role === 'assistant') {
      if (view.text.trim() !== '') steps.push({ text: fillLabel(labels.assistant, { TEXT: oneLine(view.text, TEXT_CHARS) }), user: false });
      for (const c of view.toolCalls) {
        names.set(c.id, c.name);
        steps.push({ text: fillLabel(labels.call, { TOOL: c.name, ARGUMENTS: oneLine(c.arguments, ARGUMENT_CHARS) }), user: false });
      }
    }
  }
  return steps;
}

export interface FittedTranscript {
  /** The section (heading included), or null when there is nothing after the checkpoint. */
  readonly text: string | null;
  readonly tokens: number;
  /** Steps left out (other than the user's). */
  readonly omitted: number;
  /** Older user messages cut to head and tail (or left out) because the user's words alone did not fit. */
  readonly userCut: number;
}

/**
 * The transcript of `messages` within `budget` tokens: every user message whole when they fit together (else the
 * newest whole and the older ones cut to their share, head and tail kept), then the newest other steps that fit, in
 * their order, with a line counting those left out.
 */
export function fitTranscript(messages: readonly Message[], budget: number, counter: TokenCounter): FittedTranscript {
  const labels = loadPromptLabels('handoff-labels', LABELS);
  const steps = transcriptSteps(messages);
  if (steps.length === 0) return { text: null, tokens: 0, omitted: 0, userCut: 0 };
  const overhead = counter.count(`${labels.since}\n`) + counter.count(fillLabel(labels.omitted, { COUNT: String(steps.length) })) + 2;
  let room = Math.max(0, budget - overhead);
  const kept = new Array<string | null>(steps.length).fill(null);
  const users = steps.flatMap((s, i) => (s.user ? [i] : []));
  const userTokens = users.map((i) => counter.count((steps[i] as Step).text) + 1);
  const userTotal = userTokens.reduce((a, b) => a + b, 0);
  let userCut = 0;
  if (userTotal <= room) {
    for (const i of users) kept[i] = (steps[i] as Step).text;
    room -= userTotal;
  } else {
    // The newest user messages whole while they take at most WHOLE_SHARE of the room; the older ones share the rest,
    // each cut to head and tail (left out when its share is too small to say anything).
    let whole = Math.floor(room * WHOLE_SHARE);
    let n = users.length - 1;
    for (; n >= 0; n--) {
      const tokens = userTokens[n] ?? 0;
      if (tokens > whole) break;
      kept[users[n] as number] = (steps[users[n] as number] as Step).text;
      whole -= tokens;
    }
    const older = n + 1;
    const share = older === 0 ? 0 : Math.floor((room - (Math.floor(room * WHOLE_SHARE) - whole)) / older);
    for (let k = 0; k < older; k++) {
      const i = users[k] as number;
      const cut = share >= MIN_USER_SHARE ? truncateHeadTail((steps[i] as Step).text, share - 1, () => labels.cut, counter) : null;
      if (cut !== null) kept[i] = cut.text;
      userCut++;
    }
    room = 0;
  }
  for (let i = steps.length - 1; i >= 0 && room > 0; i--) {
    const step = steps[i] as Step;
    if (step.user) continue;
    const tokens = counter.count(step.text) + 1;
    if (tokens > room) break;
    kept[i] = step.text;
    room -= tokens;
  }
  const omitted = steps.filter((s, i) => !s.user && kept[i] === null).length;
  const lines = [labels.since, ...(omitted > 0 ? [fillLabel(labels.omitted, { COUNT: String(omitted) })] : []), ...kept.filter((t): t is string => t !== null)];
  const text = lines.join('\n');
  return { text, tokens: counter.count(text), omitted, userCut };
}
