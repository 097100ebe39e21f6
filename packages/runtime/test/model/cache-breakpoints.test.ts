import { describe, expect, it } from 'vitest';
import { placeBreakpoints } from '../../src/model/cache-breakpoints.ts';

type Msg = Record<string, unknown> & { content: Record<string, unknown>[] };

const marked = (messages: readonly Record<string, unknown>[]): string[] =>
  (messages as Msg[]).flatMap((m, i) => m.content.flatMap((b, j) => ('cache_control' in b ? [`${i}:${j}`] : [])));

describe('writer cache breakpoints (Anthropic)', () => {
  it('marks the end of the forked prefix and the newest block when the writer turn is a message of its own', () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'fix the reducer' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      { role: 'user', content: [{ type: 'text', text: 'writer task' }] },
    ];
    expect(marked(placeBreakpoints(messages, { message: 1, block: 0 }, 0))).toEqual(['1:0', '2:0']);
  });

  it("also marks the newest block when the writer's task joined the prefix's last user turn", () => {
    // The prefix ends with a user turn of tool results; the writer's task is a text block appended to that turn.
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'read src/a.ts' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { file_path: 'src/a.ts' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'export const a = 1;' }, { type: 'text', text: 'writer task' }] },
    ];
    const out = placeBreakpoints(messages, { message: 2, block: 0 }, 1);
    expect(marked(out)).toEqual(['2:0', '2:1']);
    // The input is not changed.
    expect(marked(messages)).toEqual([]);
  });

  it('marks one block when the prefix ends at the newest block', () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }];
    expect(marked(placeBreakpoints(messages, { message: 0, block: 0 }, 0))).toEqual(['0:0']);
  });

  it('drops older message breakpoints first to stay within four', () => {
    const mark = { type: 'ephemeral' };
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'a', cache_control: mark }] },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
      { role: 'user', content: [{ type: 'text', text: 'c', cache_control: mark }, { type: 'text', text: 'writer task' }] },
    ];
    // Two fixed breakpoints (system, tools) leave two: the prefix end and the newest block.
    expect(marked(placeBreakpoints(messages, { message: 2, block: 0 }, 2))).toEqual(['2:0', '2:1']);
  });
});
