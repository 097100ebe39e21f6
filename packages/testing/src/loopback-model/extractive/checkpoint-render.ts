import type { CheckpointTemplate } from './checkpoint-template.ts';
import { clip, type ConversationFacts } from './conversation-facts.ts';

/** Inputs of {@link renderCheckpoint} that do not come from the conversation. */
export interface RenderInput {
  /** Bullet lines of the task tree the writer task inlined (empty: none). */
  readonly taskTree: readonly string[];
  /** Entries routed from notes.md. */
  readonly notes: readonly string[];
  /** A shorter version (after a validation reflection): fewer items, shorter quotes. */
  readonly short: boolean;
}

// The writer prompt's edge case: a request longer than 200 characters is quoted up to 200 characters plus "..."
// and followed by a "(Paraphrased: …)" line (here simply the whole request, flattened and clipped).
const QUOTE_CHARS = 200;

function blockQuote(text: string, maxLines: number): string[] {
  const truncated = text.length > QUOTE_CHARS;
  const cut = truncated ? `${text.slice(0, QUOTE_CHARS).trimEnd()}...` : text;
  const lines = cut.split('\n').map((l) => l.trimEnd());
  const kept = lines.length > maxLines ? [...lines.slice(0, maxLines), '...'] : lines;
  const quoted = kept.map((l) => (l === '' ? '>' : `> ${l}`));
  return truncated ? [...quoted, '', `(Paraphrased: ${clip(text, 400)})`] : quoted;
}

function bullets(items: readonly string[], max: number, placeholder: string): string[] {
  return items.length === 0 ? [placeholder] : items.slice(0, max).map((item) => `- ${item}`);
}

function bodies(facts: ConversationFacts, input: RenderInput): string[][] {
  const max = input.short ? 3 : 40;
  const work: string[] = [];
  if (facts.lastAssistantText !== undefined) work.push(`- Last assistant message: ${clip(facts.lastAssistantText, input.short ? 160 : 400)}`);
  if (facts.lastToolCalls.length > 0) work.push(`- Last tool calls: ${facts.lastToolCalls.slice(0, input.short ? 2 : 8).join(', ')}`);
  return [
    facts.userRequest === undefined
      ? ['(none yet)']
      : blockQuote(facts.userRequest, input.short ? 4 : 12),
    facts.nextAction === undefined ? ['(none yet)'] : [`- ${facts.nextAction}`],
    bullets(facts.directives.map((d) => `"${d}"`), max, '(none)'),
    input.taskTree.length === 0 ? ['(none yet)'] : input.taskTree.slice(0, input.short ? 10 : 60),
    work.length === 0 ? ['(none yet)'] : work,
    bullets(facts.files.map((f) => `\`${f.path}\` — ${f.tools.join(', ')}`), max, '(none yet)'),
    bullets(facts.facts, max, '(none yet)'),
    bullets(facts.errors, max, '(none)'),
    bullets(facts.resources, max, '(none yet)'),
    bullets(facts.decisions, max, '(none yet)'),
    bullets([...facts.questions.map((q) => `Open question: ${q}`), ...input.notes.map((n) => `(notes) ${n}`)], max, '(none yet)'),
  ];
}

/**
 * Renders a complete checkpoint: the template's preamble, then every section with its header and italic instruction
 * line copied verbatim and a body filled from `facts`. Deterministic: the same inputs give the same bytes.
 */
export function renderCheckpoint(template: CheckpointTemplate, facts: ConversationFacts, input: RenderInput): string {
  const filled = bodies(facts, input);
  const out: string[] = [...template.preamble, ''];
  template.sections.forEach((section, i) => {
    out.push(section.header);
    if (section.instruction !== undefined) out.push(section.instruction);
    if (section.instruction === undefined || section.blankBeforeBody) out.push('');
    out.push(...(filled[i] ?? ['(none yet)']), '');
  });
  return `${out.join('\n').trimEnd()}\n`;
}
