import { describe, expect, it } from 'vitest';
import type { Message } from '@baton/protocol';
import { clearableToolResults, isCompactableTool, preservedTail } from '../../src/rebuild/preserved-tail.ts';

const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '{}' } });

describe('preserved tail', () => {
  const context: Message[] = [
    { id: 'u1', role: 'user', content: 'go' },
    { id: 'a1', role: 'assistant', content: null, tool_calls: [call('c1', 'read_file'), call('c2', 'deploy')] },
    { id: 't1', role: 'tool', tool_call_id: 'c1', content: 'file body' },
    { id: 't2', role: 'tool', tool_call_id: 'c2', content: 'deployed' },
    { id: 'b1', role: 'assistant', content: 'done' },
    { id: 'u2', role: 'user', content: 'next' },
  ];

  it('starts after the watermark and drops tool results whose call it does not hold', () => {
    expect(preservedTail(context, 'a1').map((m) => m.id)).toEqual(['b1', 'u2']);
    expect(preservedTail(context, 'u1').map((m) => m.id)).toEqual(['a1', 't1', 't2', 'b1', 'u2']);
  });

  it('keeps everything but Baton boundary messages when the watermark left the context', () => {
    const rebuilt: Message[] = [{ id: 'baton-rebuild-s-1', role: 'user', content: 'checkpoint' }, ...context.slice(4)];
    expect(preservedTail(rebuilt, 'gone').map((m) => m.id)).toEqual(['b1', 'u2']);
  });

  it('clears only outputs of compactable tools', () => {
    expect(clearableToolResults(preservedTail(context, 'u1'))).toEqual(['t1']);
    expect(isCompactableTool('Read')).toBe(true);
    expect(isCompactableTool('str_replace')).toBe(true);
    expect(isCompactableTool('deploy')).toBe(false);
  });

  it('removes calls nobody answered from all but the last assistant message', () => {
    const dangling: Message[] = [
      { id: 'u1', role: 'user', content: 'go' },
      { id: 'a1', role: 'assistant', content: 'trying', tool_calls: [call('x', 'bash')] },
      { id: 'u2', role: 'user', content: 'stop that' },
      { id: 'a2', role: 'assistant', content: null, tool_calls: [call('y', 'bash')] },
    ];
    const tail = preservedTail(dangling, null);
    expect(tail.find((m) => m.id === 'a1')?.tool_calls).toBeUndefined();
    expect(tail.find((m) => m.id === 'a2')?.tool_calls).toHaveLength(1);
  });
});
