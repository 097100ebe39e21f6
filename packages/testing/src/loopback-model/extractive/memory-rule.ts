import { stripLineNumbers } from './checkpoint-template.ts';

const RULES_HEADER = '## Rules';

/**
 * MEMORY.md with `rule` added as the last entry of its Rules section (the placeholder `(none yet)` goes), keeping the
 * header and its italic line; unchanged when the file has no Rules section or already holds the rule.
 */
export function addMemoryRule(memory: string, rule: string): string {
  const lines = stripLineNumbers(memory).split('\n');
  const header = lines.indexOf(RULES_HEADER);
  if (header < 0) return memory;
  const entry = `- ${rule}`;
  if (lines.includes(entry)) return memory;
  const bodyStart = lines[header + 1]?.startsWith('_') === true ? header + 2 : header + 1;
  let end = lines.findIndex((l, i) => i >= bodyStart && l.startsWith('## '));
  if (end < 0) end = lines.length;
  const body = lines.slice(bodyStart, end).filter((l) => l.trim() !== '' && l.trim() !== '(none yet)');
  return [...lines.slice(0, bodyStart), '', ...body, entry, '', ...lines.slice(end)].join('\n');
}
