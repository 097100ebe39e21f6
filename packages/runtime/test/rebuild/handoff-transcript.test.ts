import { defaultTokenCounter } from '@baton/memory-store';
import type { Message } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { fitTranscript } from '../../src/rebuild/handoff-transcript.ts';

/** `n` steps of a coding agent: a user request, a tool call, its long output, an answer. */
function steps(n: number, userWords: (i: number) => string): Message[] {
  return Array.from({ length: n }, (_, i): Message[] => [
    { id: `u${i}`, role: 'user', content: userWords(i) },
    { id: `a${i}`, role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `npm test -- src/mod-${i}.test.ts` }) } }] },
    { id: `t${i}`, role: 'tool', tool_call_id: `c${i}`, content: `${'ok line\n'.repeat(400)}Error: expected 3 to be 4 in src/mod-${i}.test.ts:12\n${'trace\n'.repeat(200)}` },
    { id: `b${i}`, role: 'assistant', content: `Fixed mod-${i}: the reducer double-counted refunds.` },
  ]).flat();
}

describe('fitTranscript', () => {
  it('keeps every user message whole and the newest other steps within the budget, tool calls as text', () => {
    const messages = steps(120, (i) => `Please fix src/mod-${i}.ts and keep port ${8000 + i}.`);
    const fitted = fitTranscript(messages, 4_000, defaultTokenCounter);
    expect(fitted.tokens).toBeLessThanOrEqual(4_000);
    expect(fitted.omitted).toBeGreaterThan(0);
    expect(fitted.userCut).toBe(0);
    for (let i = 0; i < 120; i++) expect(fitted.text).toContain(`Please fix src/mod-${i}.ts and keep port ${8000 + i}.`);
    // The newest step is there, as facts: the command run and the error line of its output.
    expect(fitted.text).toContain('the earlier agent ran bash {"command":"npm test -- src/mod-119.test.ts"}');
    expect(fitted.text).toContain('Error: expected 3 to be 4 in src/mod-119.test.ts:12');
    expect(fitted.text).not.toContain('tool_call_id');
  });

  it('keeps the newest user messages whole and cuts the older ones to their share, head and tail kept, when they alone do not fit', () => {
    const request = (i: number): string => `Request ${i} starts here. ${'Details of the change, one after another. '.repeat(60)} Request ${i} ends here.`;
    const messages = steps(20, request);
    const fitted = fitTranscript(messages, 3_000, defaultTokenCounter);
    expect(fitted.tokens).toBeLessThanOrEqual(3_000);
    expect(fitted.text).toContain(request(19));
    expect(fitted.text).toContain(request(18));
    expect(fitted.userCut).toBeGreaterThan(0);
    for (let i = 0; i < 20 - 2; i++) {
      expect(fitted.text).toContain(`Request ${i} starts here.`);
      expect(fitted.text).toContain(`Request ${i} ends here.`);
    }
  });
});
