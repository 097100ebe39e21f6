import { defaultTokenCounter, type TokenCounter } from '@baton/memory-store';
import { type Message, type RebuildReply } from '@baton/protocol';
import { groupDigits } from '../format/numbers.ts';

/** One `## ` section of a rebuild's boundary message. */
export interface BoundarySection {
  readonly heading: string;
  /** Tokens of the section, heading line included (o200k_base). */
  readonly tokens: number;
}

function textOf(m: Message | undefined): string {
  if (m === undefined || m.content === null) return '';
  return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
}

/**
 * The `## ` sections of a boundary message with their token counts, in order. Text before the first heading, if
 * any, is counted as a section headed `(preamble)`.
 */
export function boundarySections(text: string, counter: TokenCounter = defaultTokenCounter): BoundarySection[] {
  const sections: { heading: string; lines: string[] }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) sections.push({ heading: line.slice(3).trim(), lines: [line] });
    else if (sections.length === 0) sections.push({ heading: '(preamble)', lines: [line] });
    else sections.at(-1)?.lines.push(line);
  }
  return sections
    .filter((s) => s.heading !== '(preamble)' || s.lines.some((l) => l.trim() !== ''))
    .map((s) => ({ heading: s.heading, tokens: counter.count(s.lines.join('\n')) }));
}

/**
 * The demo's lines about a rebuild reply: outcome and coverage, the new context's size (messages, and the tokens of
 * its boundary message, the first one) and the boundary message's sections with their tokens.
 */
export function rebuildReportLines(reply: RebuildReply, counter: TokenCounter = defaultTokenCounter): string[] {
  const boundary = textOf(reply.context[0]);
  const sections = boundarySections(boundary, counter);
  const width = Math.max(0, ...sections.map((s) => s.heading.length));
  const tokens = sections.map((s) => groupDigits(s.tokens));
  const tokensWidth = Math.max(0, ...tokens.map((t) => t.length));
  return [
    `⟲ rebuild: ${reply.outcome}, covered up to ${reply.covered_up_to ?? '–'} — ${reply.status_text}`,
    `  new context: ${reply.context.length} message${reply.context.length === 1 ? '' : 's'}, ` +
      `boundary message ${groupDigits(counter.count(boundary))} tokens in ${sections.length} section${sections.length === 1 ? '' : 's'}:`,
    ...sections.map((s, i) => `  │ ## ${s.heading.padEnd(width)}  ${(tokens[i] ?? '').padStart(tokensWidth)} tokens`),
  ];
}
