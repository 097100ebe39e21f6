import { parseSections } from '../templates/checkpoint-sections.ts';
import { isIndexLine } from './index-lines.ts';

/**
 * Entries of MEMORY.md's `## Discovered durable knowledge` section, for the `Why:` / `How to apply:` and duplicate
 * title rules.
 *
 * What an entry is (the template only says "each entry has a Why: line and a How to apply: line"):
 * - When the section body has `### ` headings, each heading starts an entry and its text is the title; the entry
 *   runs to the next `### ` heading. Bullets under a heading belong to that entry.
 * - Otherwise each top-level bullet (`- `, `* ` or `+ ` at the start of the line) starts an entry; indented lines
 *   and lines without a marker continue it. The title is the emphasised lead (`- **LMDB map size**: …` →
 *   `LMDB map size`) when there is one, else the bullet's whole first line.
 * - Bullets that are themselves a field (`- Why: …`, `- How to apply: …`), index lines (`- See MEMORY-x.md (3
 *   entries) — …`), the `(none yet)` placeholder and lines inside code fences never start an entry.
 */

/** The MEMORY.md section whose entries carry `Why:` and `How to apply:`. */
export const DISCOVERED_SECTION_TITLE = 'Discovered durable knowledge';

/** One entry of the Discovered section. */
export interface MemoryEntry {
  /** The title as written (heading text, or the bullet's lead). */
  readonly title: string;
  /** The title normalised for comparison: case, emphasis marks, spacing and trailing punctuation ignored. */
  readonly key: string;
  /** 1-based line of the entry's first line in the file. */
  readonly line: number;
  /** The entry's lines, title line included. */
  readonly text: string;
}

const FIELD = /^[*_]{0,2}(?:why|how to apply)[*_]{0,2}\s*:/i;
const BULLET = /^[-*+]\s+(.*)$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Entries of the Discovered section of `memory` (the first such section); `[]` when there is none. */
export function parseDiscoveredEntries(memory: string): MemoryEntry[] {
  const section = parseSections(memory).find((candidate) => candidate.title === DISCOVERED_SECTION_TITLE);
  if (section === undefined) return [];
  const firstLine = memory.slice(0, section.start).split('\n').length;
  const lines = memory.slice(section.start, section.end).split('\n').map((line) => line.replace(/\r$/, ''));
  // Line 0 is the header; the italic line and placeholders never match an entry start.
  const starts: { index: number; title: string }[] = [];
  const headingMode = unfenced(lines).some((i) => i > 0 && (lines[i] ?? '').startsWith('### '));
  for (const i of unfenced(lines)) {
    if (i === 0) continue;
    const line = lines[i] ?? '';
    if (headingMode) {
      if (line.startsWith('### ')) starts.push({ index: i, title: line.slice(4).trim() });
      continue;
    }
    const bullet = BULLET.exec(line)?.[1]?.trim();
    if (bullet === undefined || bullet === '' || FIELD.test(bullet) || isIndexLine(line)) continue;
    starts.push({ index: i, title: bulletTitle(bullet) });
  }
  return starts.map((start, n) => {
    const end = starts[n + 1]?.index ?? lines.length;
    return {
      title: start.title,
      key: normaliseTitle(start.title),
      line: firstLine + start.index,
      text: lines.slice(start.index, end).join('\n').trimEnd(),
    };
  });
}

// A field on a line of its own (after indentation, a list marker or emphasis; any case), or written inline after a
// space (capitalised only, so that a title such as "No why: …" does not count as one).
const WHY = [/^[ \t]*(?:[-*+][ \t]+)?[*_]{0,2}why[*_]{0,2}[ \t]*:/im, /\s[*_]{0,2}Why[*_]{0,2}\s*:/];
const HOW_TO_APPLY = [
  /^[ \t]*(?:[-*+][ \t]+)?[*_]{0,2}how\s+to\s+apply[*_]{0,2}[ \t]*:/im,
  /\s[*_]{0,2}How to apply[*_]{0,2}\s*:/,
];

/** Whether an entry's text has a `Why:` field, on its own line or inline. */
export function hasWhy(entry: MemoryEntry): boolean {
  return WHY.some((pattern) => pattern.test(entry.text));
}

/** Whether an entry's text has a `How to apply:` field, on its own line or inline. */
export function hasHowToApply(entry: MemoryEntry): boolean {
  return HOW_TO_APPLY.some((pattern) => pattern.test(entry.text));
}

/** Case, emphasis and code marks, runs of spaces and trailing punctuation do not make two titles different. */
export function normaliseTitle(title: string): string {
  return title
    .replace(/[*_`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/[\s.:;,]+$/, '')
    .trim()
    .toLowerCase();
}

function bulletTitle(bullet: string): string {
  const emphasised = /^(\*\*|__)(.+?)\1/.exec(bullet)?.[2];
  return (emphasised ?? bullet).replace(/:\s*$/, '').trim();
}

function unfenced(lines: readonly string[]): number[] {
  const indexes: number[] = [];
  let fence: string | null = null;
  lines.forEach((line, index) => {
    const marker = FENCE.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return;
    }
    if (fence === null) indexes.push(index);
  });
  return indexes;
}
