import { computeBoundaryIndex } from '@baton/actors';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indexMessages } from '../../src/rebuild/message-index.ts';
import type { Message } from '@baton/protocol';
import { clearableToolResults, preservedTail } from '../../src/rebuild/preserved-tail.ts';

const TOOL_NAMES = ['read_file', 'bash', 'write_file', 'search_web', 'Edit'];

/** A random agent conversation: user turns, assistant turns with parallel tool calls and their results. */
const conversationArb = fc
  .array(
    fc.record({
      user: fc.string({ minLength: 1, maxLength: 80, unit: 'grapheme' }),
      steps: fc.array(
        fc.record({ calls: fc.array(fc.constantFrom(...TOOL_NAMES), { minLength: 0, maxLength: 3 }), output: fc.string({ maxLength: 200 }) }),
        { minLength: 0, maxLength: 3 },
      ),
      answer: fc.string({ maxLength: 120 }),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((turns) => {
    const out: Message[] = [];
    let n = 0;
    turns.forEach((t, i) => {
      out.push({ id: `u${i}`, role: 'user', content: t.user });
      t.steps.forEach((s, j) => {
        const ids = s.calls.map((_, k) => `c${i}_${j}_${k}`);
        out.push({
          id: `a${i}_${j}`,
          role: 'assistant',
          content: null,
          ...(ids.length > 0 ? { tool_calls: ids.map((id, k) => ({ id, type: 'function', function: { name: s.calls[k], arguments: '{}' } })) } : {}),
          finish_reason: ids.length > 0 ? 'tool_calls' : 'stop',
          usage: { prompt_tokens: (n += 700), completion_tokens: 20 },
        });
        ids.forEach((id, k) => out.push({ id: `t${id}`, role: 'tool', tool_call_id: id, content: `${s.output} #${k}` }));
      });
      out.push({ id: `b${i}`, role: 'assistant', content: t.answer, finish_reason: 'stop', usage: { prompt_tokens: (n += 300), completion_tokens: 30 } });
    });
    return out;
  });

/** Every tool message answers a call of an earlier assistant message; no two tool messages answer the same call. */
function assertValidOpenAiSequence(context: readonly Message[]): void {
  const issued = new Set<string>();
  const answered = new Set<string>();
  for (const m of context) {
    if (m.role === 'tool') {
      expect(typeof m.tool_call_id).toBe('string');
      expect(issued.has(m.tool_call_id as string)).toBe(true);
      expect(answered.has(m.tool_call_id as string)).toBe(false);
      answered.add(m.tool_call_id as string);
    }
    for (const c of m.tool_calls ?? []) issued.add((c as { id: string }).id);
  }
  expect(context[0]?.role).toBe('user');
}

/**
 * The agent's context after a rebuild, as the session's host resolves it: Baton's boundary message, then the preserved
 * tail with cleared tool outputs replaced by the marker (the session machine keeps exactly these ids, in this order).
 */
function rebuiltContext(boundary: Message, tail: readonly Message[], cleared: readonly string[], clearedText: string): Message[] {
  const clear = new Set(cleared);
  return [boundary, ...tail.map((m) => (clear.has(m.id) ? { ...m, content: clearedText } : m))];
}

function rebuild(context: readonly Message[], watermark: string, seq: number): Message[] {
  const tail = preservedTail(context, watermark);
  const boundary: Message = { id: `baton-rebuild-s-${seq}`, role: 'user', content: `checkpoint ${seq}` };
  return rebuiltContext(boundary, tail, clearableToolResults(tail), '[cleared]');
}

describe('rebuilt context (property)', () => {
  it('is a valid OpenAI message sequence holding every user message after the watermark verbatim', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(conversationArb, fc.integer({ min: 0, max: 3 }), (messages, tailScale) => {
        const index = indexMessages(messages);
        const policy = { minTokens: 20 * (tailScale + 1), maxTokens: 200 * (tailScale + 1), minTextMessages: tailScale };
        const b = computeBoundaryIndex(index, policy);
        fc.pre(b >= 0);
        const watermark = index[b]!.id;
        const context = rebuild(messages, watermark, 1);
        assertValidOpenAiSequence(context);
        const after = messages.slice(messages.findIndex((m) => m.id === watermark) + 1);
        for (const m of after) if (m.role === 'user') expect(context.find((c) => c.id === m.id)?.content).toBe(m.content);
        // Nothing at or before the watermark survives in the tail.
        const covered = new Set(messages.slice(0, b + 1).map((m) => m.id));
        for (const m of context.slice(1)) expect(covered.has(m.id)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('a second rebuild with a watermark older than the first keeps the earlier tail and every newer message', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(conversationArb, conversationArb, (first, second) => {
        const index = indexMessages(first);
        const b = computeBoundaryIndex(index, { minTokens: 20, maxTokens: 200, minTextMessages: 1 });
        fc.pre(b >= 0);
        const watermark = index[b]!.id;
        const once = rebuild(first, watermark, 1);
        const more = second.map((m) => ({ ...m, id: `n-${m.id}`, ...(m.tool_call_id ? { tool_call_id: `n-${m.tool_call_id}` } : {}), ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, id: `n-${(c as { id: string }).id}` })) } : {}) }));
        const twice = rebuild([...once, ...more], watermark, 2);
        assertValidOpenAiSequence(twice);
        expect(twice.filter((m) => m.id.startsWith('baton-'))).toHaveLength(1);
        for (const m of [...once.slice(1), ...more]) if (m.role === 'user') expect(twice.find((c) => c.id === m.id)?.content).toBe(m.content);
      }),
      { numRuns: 200 },
    );
  });
});
