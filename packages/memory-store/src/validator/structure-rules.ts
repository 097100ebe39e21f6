import path from 'node:path';
import { checkCheckpointStructure, type StructureIssueKind } from '../templates/checkpoint-sections.ts';
import type { Violation, ViolationRule } from './violation.ts';

/**
 * Structure rules shared by checkpoint.md and MEMORY.md: the file must keep its template's title line, the italic
 * line under it, every `## ` header once and in order, and every italic instruction line unchanged. The check is
 * {@link checkCheckpointStructure} (generic over the template); this maps its issues to rule ids.
 */

const RULES: Readonly<Record<'checkpoint' | 'memory', Readonly<Record<StructureIssueKind, ViolationRule>>>> = {
  checkpoint: {
    title: 'checkpoint-title',
    'title-italic': 'checkpoint-title-italic',
    missing: 'checkpoint-section-missing',
    order: 'checkpoint-section-order',
    duplicate: 'checkpoint-section-duplicate',
    unexpected: 'checkpoint-section-unexpected',
    italic: 'checkpoint-italic-line',
  },
  memory: {
    title: 'memory-title',
    'title-italic': 'memory-title-italic',
    missing: 'memory-section-missing',
    order: 'memory-section-order',
    duplicate: 'memory-section-duplicate',
    unexpected: 'memory-section-unexpected',
    italic: 'memory-italic-line',
  },
};

/** Structure violations of `text` (at absolute `file`) against `template`, all of severity `error`. */
export function checkStructure(
  kind: 'checkpoint' | 'memory',
  file: string,
  text: string,
  template: string,
): Violation[] {
  const name = path.basename(file);
  return checkCheckpointStructure(text, template).issues.map((issue) => ({
    file,
    rule: RULES[kind][issue.kind],
    severity: 'error' as const,
    detail: `${name}: ${issue.message}${HINTS[issue.kind]}`,
  }));
}

const HINTS: Readonly<Record<StructureIssueKind, string>> = {
  title: '; restore the title line exactly as the template has it',
  'title-italic': '; restore it exactly as the template has it',
  missing: '; add it back (header, italic line, then the body or "(none)") in its place',
  order: '; keep the sections in the template order',
  duplicate: '; merge the copies into one section',
  unexpected: '; move its content into the section it belongs to (use "###" for sub-headings)',
  italic: '; restore the line exactly as the template has it and write only below it',
};
