import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGETS, parseSections, resolveBudgets, validateMemoryFiles } from '../../src/index.ts';
import { CHECKPOINT_BODIES, MEMORY_BODIES, counter, filledCheckpoint, filledMemory, validInput } from './fixtures.ts';

/**
 * Budgets are in real tokens and inclusive: a section of exactly its budget passes, one token more is over. The
 * texts are built with the counter itself: the smallest number of padding words that reaches the target.
 */

function sectionTokens(markdown: string, header: string): number {
  const section = parseSections(markdown).find((s) => s.header === header);
  if (section === undefined) throw new Error(`no section ${header}`);
  return counter.count(markdown.slice(section.start, section.end));
}

/** The smallest `n` for which `measure(build(n)) >= target` (measure is non-decreasing in n). */
function smallestReaching(build: (n: number) => string, measure: (text: string) => number, target: number): number {
  let low = 0;
  let high = 1;
  while (measure(build(high)) < target) high *= 2;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (measure(build(mid)) < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

const pad = (n: number): string => ' orders'.repeat(n);

describe('section budgets at the boundary', () => {
  it('passes a checkpoint section of exactly its budget and reports one token more', () => {
    const header = '## §5 Current work';
    const budget = DEFAULT_BUDGETS.checkpoint.sections['§5'];
    const build = (n: number) => filledCheckpoint({ [header]: `${CHECKPOINT_BODIES[header]}\n${pad(n).trimStart()}` });
    const n = smallestReaching(build, (text) => sectionTokens(text, header), budget);
    const atBudget = build(n);
    expect(sectionTokens(atBudget, header)).toBe(budget);
    expect(validateMemoryFiles(validInput({ checkpoint: atBudget }))).toEqual([]);

    const over = build(n + 1);
    expect(sectionTokens(over, header)).toBe(budget + 1);
    const violations = validateMemoryFiles(validInput({ checkpoint: over }));
    expect(violations.map((v) => [v.rule, v.severity])).toEqual([['section-budget-exceeded', 'extract-required']]);
    expect(violations[0]?.detail).toBe(`section "${header}" is ${budget + 1} tokens, over its ${budget}-token budget`);
  });

  it('passes a MEMORY.md section of exactly its budget and reports one token more', () => {
    const header = '## Rules';
    const budget = DEFAULT_BUDGETS.memory.sections.Rules;
    const build = (n: number) => filledMemory({ [header]: `${MEMORY_BODIES[header]}\n${pad(n).trimStart()}` });
    const n = smallestReaching(build, (text) => sectionTokens(text, header), budget);
    expect(sectionTokens(build(n), header)).toBe(budget);
    expect(validateMemoryFiles(validInput({ memory: build(n) }))).toEqual([]);
    expect(sectionTokens(build(n + 1), header)).toBe(budget + 1);
    expect(validateMemoryFiles(validInput({ memory: build(n + 1) })).map((v) => v.rule)).toEqual(['section-budget-exceeded']);
  });
});

describe('whole-file budgets at the boundary', () => {
  const checkpoint = filledCheckpoint();
  const fileTokens = counter.count(checkpoint);

  it('measures the whole file exactly: the sum of its parts equals a count of the whole text', () => {
    const sections = parseSections(checkpoint);
    const parts = [checkpoint.slice(0, sections[0]?.start), ...sections.map((s) => checkpoint.slice(s.start, s.end))];
    expect(parts.reduce((sum, part) => sum + counter.count(part), 0)).toBe(fileTokens);
    const crlf = checkpoint.replace(/\n/g, '\r\n');
    const crlfSections = parseSections(crlf);
    const crlfParts = [crlf.slice(0, crlfSections[0]?.start), ...crlfSections.map((s) => crlf.slice(s.start, s.end))];
    expect(crlfParts.reduce((sum, part) => sum + counter.count(part), 0)).toBe(counter.count(crlf));
  });

  it('passes a checkpoint of exactly its total and reports one token more', () => {
    // Section budgets of exactly each section's size (so they can never fire) and a total of exactly the file.
    const sections = Object.fromEntries(
      parseSections(checkpoint).map((s) => [s.title.split(' ')[0] ?? '', counter.count(checkpoint.slice(s.start, s.end))] as const),
    );
    const atTotal = resolveBudgets({ checkpoint: { total: fileTokens, sections } });
    expect(validateMemoryFiles(validInput({ budgets: atTotal }))).toEqual([]);

    const oneUnder = resolveBudgets({ checkpoint: { total: fileTokens - 1, sections } });
    const violations = validateMemoryFiles(validInput({ budgets: oneUnder }));
    expect(violations.map((v) => [v.rule, v.severity])).toEqual([['budget-exceeded', 'extract-required']]);
    expect(violations[0]?.detail).toBe(`checkpoint.md is ${fileTokens} tokens, over its ${fileTokens - 1}-token budget`);
  });

  it('fills an ~11 000-token checkpoint within every default budget', () => {
    // Every section padded to its default budget: the sections sum to 11 000 and the title block sits on top.
    let text = filledCheckpoint();
    for (const section of parseSections(text)) {
      const key = section.title.split(' ')[0] as keyof typeof DEFAULT_BUDGETS.checkpoint.sections;
      const header = section.header;
      const base = parseSections(text).find((s) => s.header === header)?.body ?? '';
      const build = (n: number) => {
        const current = parseSections(text);
        const target = current.find((s) => s.header === header);
        if (target === undefined) throw new Error(header);
        const replaced = `${header}\n${target.italic}\n\n${base}${pad(n)}\n\n`;
        return text.slice(0, target.start) + replaced + text.slice(target.end);
      };
      const n = smallestReaching(build, (t) => sectionTokens(t, header), DEFAULT_BUDGETS.checkpoint.sections[key]);
      text = build(n);
    }
    const violations = validateMemoryFiles(validInput({ checkpoint: text }));
    // Only the whole-file rule can fire: the title block is the only text outside the sections.
    expect(violations.map((v) => v.rule)).toEqual(['budget-exceeded']);
    expect(counter.count(text)).toBeGreaterThan(11_000);
    expect(counter.count(text)).toBeLessThan(11_100);
  });
});
