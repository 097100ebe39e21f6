import { describe, expect, it } from 'vitest';
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
});
