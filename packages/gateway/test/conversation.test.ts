import { describe, expect, it } from 'vitest';
import { anthropicApi } from '../src/anthropic-api.ts';
import { continues, messageDigest, messageId, splitHistory, systemPrompt } from '../src/conversation.ts';

const m = (role: string, content: unknown) => ({ role, content });

describe('conversation following', () => {
  it('splits leading system and developer messages from the history', () => {
    const { system, history } = splitHistory([m('system', 'a'), m('developer', 'b'), m('user', 'c'), m('system', 'd')]);
    expect(system).toHaveLength(2);
    expect(history.map((x) => x.content)).toEqual(['c', 'd']);
  });

  it('keeps a plain-text system prompt and refuses one fork mode could not reproduce', () => {
    expect(systemPrompt([m('system', 'a'), m('system', 'b')])).toEqual(['a', 'b']);
    expect(systemPrompt([m('system', [{ type: 'text', text: 'a' }])])).toBeNull();
    expect(systemPrompt([{ role: 'system', content: 'a', name: 'x' }])).toBeNull();
    expect(systemPrompt([m('developer', 'a')])).toBeNull();
  });

  it('gives a re-sent message the same id and an edited one another', () => {
    const a = m('user', 'fix the bug');
    expect(messageId(3, messageDigest(a))).toBe(messageId(3, messageDigest({ ...a })));
    expect(messageDigest(a)).not.toBe(messageDigest(m('user', 'fix the bugs')));
    // Key order is part of what the agent sent.
    expect(messageDigest({ role: 'user', content: 'x' })).not.toBe(messageDigest({ content: 'x', role: 'user' }));
  });

  it('tells a continuation from a rewritten history', () => {
    const history = Array.from({ length: 9 }, (_, i) => m(i % 2 === 0 ? 'user' : 'assistant', `turn ${i}`));
    const recorded = history.slice(0, 7).map(messageDigest);
    expect(continues(recorded, history)).toBe(true);
    expect(continues([], history)).toBe(true);
    expect(continues(recorded, history.slice(0, 5))).toBe(false);
    expect(continues(recorded, [m('user', 'summary of the conversation so far'), ...history.slice(1)])).toBe(false);
    const edited = [...history];
    edited[6] = m('user', 'changed');
    expect(continues(recorded, edited)).toBe(false);
  });

  it("follows a prompt sent as one marked text block and then, the breakpoint moved on, as a string (Claude Code)", () => {
    const canonical = anthropicApi.canonical;
    const prompt = 'Retitle the stock report.';
    const marked = m('user', [{ type: 'text', text: prompt, cache_control: { type: 'ephemeral' } }]);
    expect(messageDigest(canonical(marked))).toBe(messageDigest(canonical(m('user', prompt))));
    const recorded = [m('user', 'first'), m('assistant', 'ok'), marked].map((x) => messageDigest(canonical(x)));
    expect(continues(recorded, [m('user', 'first'), m('assistant', 'ok'), m('user', prompt), m('assistant', [{ type: 'text', text: 'done' }])], canonical)).toBe(true);
    // Re-sent as the block without its marker (as pi does), it is that message too; what is recorded is the block.
    expect(messageDigest(canonical(m('user', [{ type: 'text', text: prompt }])))).toBe(messageDigest(canonical(marked)));
    expect(canonical(marked)).toEqual(m('user', [{ type: 'text', text: prompt }]));
    // Two blocks, or a block with more than its text, are not that string.
    expect(messageDigest(m('user', [{ type: 'text', text: 'a' }, { type: 'text', text: prompt }]))).not.toBe(messageDigest(m('user', `a${prompt}`)));
    expect(messageDigest(m('user', [{ type: 'text', text: prompt, citations: [] }]))).not.toBe(messageDigest(m('user', prompt)));
  });
});
