import { fillLabel, loadPromptLabels } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';

/**
 * The steps a fitted rebuild took out of the context, as one short line each for the rebuilt context's "since the
 * checkpoint" section: what the assistant said, which tools it called with what, and the first line of what they
 * returned. The user's own messages are only named here: their words go to the recent-user section whole.
 */

const LABELS = ['user_step', 'assistant_step', 'call_step', 'result_step'] as const;
/** Characters of a text kept on its line. */
const TEXT_CHARS = 160;
const ARGUMENT_CHARS = 120;

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** The first non-blank line of a tool output, or the line that names an error when there is one. */
function outputLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return lines.find((l) => /error|exception|fail|fatal|traceback|panic/i.test(l)) ?? lines[0] ?? '(empty)';
}

/** One line per user message, assistant text, tool call and tool result of `messages`, in order. */
export function uncoveredSteps(messages: readonly Message[]): string[] {
  const labels = loadPromptLabels('fit-labels', LABELS);
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (const m of messages) {
    const view = viewOf(m);
    if (view.reasoning || view.opaque) continue;
    if (view.role === 'user') lines.push(fillLabel(labels.user_step, { MESSAGE_ID: m.id }));
    else if (view.role === 'tool') {
      for (const r of view.toolResults) lines.push(fillLabel(labels.result_step, { TOOL: names.get(r.callId) ?? 'a tool', TEXT: oneLine(outputLine(r.text), TEXT_CHARS) }));
    } else if (view.role === 'assistant') {
      if (view.text.trim() !== '') lines.push(fillLabel(labels.assistant_step, { TEXT: oneLine(view.text, TEXT_CHARS) }));
      for (const c of view.toolCalls) {
        names.set(c.id, c.name);
        lines.push(fillLabel(labels.call_step, { TOOL: c.name, ARGUMENTS: oneLine(c.arguments, ARGUMENT_CHARS) }));
      }
    }
  }
  return lines;
}
