import { computeBoundaryIndex } from '@baton/actors';
import { providerMessages, userTextMessage, viewOf, withToolOutputs, type Message, type ProviderApi } from '@baton/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indexMessages } from '../../src/rebuild/message-index.ts';
import { clearableToolResults, preservedTail } from '../../src/rebuild/preserved-tail.ts';

const TOOL_NAMES = ['read_file', 'bash', 'write_file', 'search_web', 'Edit'];

interface Turn {
  readonly user: string;
  readonly steps: readonly { readonly calls: readonly string[]; readonly output: string; readonly think: boolean }[];
  readonly answer: string;
}

const turnsArb = fc.array(
  fc.record({
    user: fc.string({ minLength: 1, maxLength: 80, unit: 'grapheme' }),
    steps: fc.array(fc.record({ calls: fc.array(fc.constantFrom(...TOOL_NAMES), { minLength: 1, maxLength: 3 }), output: fc.string({ maxLength: 200 }), think: fc.boolean() }), { minLength: 0, maxLength: 3 }),
    answer: fc.string({ minLength: 1, maxLength: 120 }),
  }),
  { minLength: 1, maxLength: 12 },
);

const native = (id: string, role: Message['role'], form: Record<string, unknown>, extra: Partial<Message> = {}): Message => ({ id, role, content: null, native: form, ...extra });

/**
 * The same conversation in an API's own shapes, as a gateway would record it: Responses with one item per call (a
 * reasoning item before the calls when the model thought), results as output items; Anthropic with one assistant turn
 * per step (thinking, tool_use blocks) and one user turn carrying all its results.
 */
function conversationIn(api: Exclude<ProviderApi, 'openai-chat'>, turns: readonly Turn[]): Message[] {
  const out: Message[] = [];
  let n = 0;
  const finished = (): Partial<Message> => ({ finish_reason: 'stop', usage: { prompt_tokens: (n += 500), completion_tokens: 20 } });
  turns.forEach((t, i) => {
    if (api === 'openai-responses') out.push(native(`u${i}`, 'user', { type: 'message', role: 'user', content: [{ type: 'input_text', text: t.user }] }));
    else out.push(native(`u${i}`, 'user', { role: 'user', content: [{ type: 'text', text: t.user }] }));
    t.steps.forEach((s, j) => {
      const ids = s.calls.map((_, k) => `c${i}_${j}_${k}`);
      if (api === 'openai-responses') {
        if (s.think) out.push(native(`r${i}_${j}`, 'assistant', { type: 'reasoning', id: `rs${i}_${j}`, summary: [], encrypted_content: `enc${i}_${j}` }));
        ids.forEach((id, k) => out.push(native(`f${id}`, 'assistant', { type: 'function_call', call_id: id, name: s.calls[k], arguments: '{}' }, k === ids.length - 1 ? finished() : {})));
        ids.forEach((id, k) => out.push(native(`o${id}`, 'tool', { type: 'function_call_output', call_id: id, output: `${s.output} #${k}` })));
      } else {
        const thinking = s.think ? [{ type: 'thinking', thinking: 'plan', signature: `sig${i}_${j}` }] : [];
        out.push(native(`a${i}_${j}`, 'assistant', { role: 'assistant', content: [...thinking, ...ids.map((id, k) => ({ type: 'tool_use', id, name: s.calls[k], input: {} }))] }, finished()));
        out.push(native(`t${i}_${j}`, 'tool', { role: 'user', content: ids.map((id, k) => ({ type: 'tool_result', tool_use_id: id, content: `${s.output} #${k}` })) }));
      }
    });
    if (api === 'openai-responses') out.push(native(`b${i}`, 'assistant', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t.answer }] }, finished()));
    else out.push(native(`b${i}`, 'assistant', { role: 'assistant', content: [{ type: 'text', text: t.answer }] }, finished()));
  });
  return out;
}

/** A rebuild as the session host resolves it: Baton's boundary message, the tail with cleared outputs replaced. */
function rebuild(api: ProviderApi, context: readonly Message[], watermark: string, seq: number): Message[] {
  const tail = preservedTail(context, watermark);
  const cleared = new Set(clearableToolResults(tail));
  return [userTextMessage(api, `baton-rebuild-s-${seq}`, `checkpoint ${seq}`), ...tail.map((m) => (cleared.has(m.id) ? withToolOutputs(m, '[cleared]') : m))];
}

type Item = Record<string, unknown>;

/** A Responses input: every output answers an earlier call once; a reasoning item is followed by an assistant item. */
function assertValidResponsesInput(items: readonly Item[]): void {
  const issued = new Set<string>();
  const answered = new Set<string>();
  items.forEach((item, i) => {
    const type = item['type'];
    if (type === 'function_call') issued.add(String(item['call_id']));
    if (type === 'function_call_output') {
      const id = String(item['call_id']);
      expect(issued.has(id)).toBe(true);
      expect(answered.has(id)).toBe(false);
      answered.add(id);
    }
    if (type === 'reasoning') {
      const next = items[i + 1];
      expect(next !== undefined && (next['type'] === 'function_call' || next['role'] === 'assistant' || next['type'] === 'reasoning')).toBe(true);
    }
  });
  expect(items[0]?.['role']).toBe('user');
}

/**
 * Anthropic messages: roles alternate starting with the user; every tool_result answers a tool_use of the assistant
 * turn right before it, and every tool_use but those of the last turn is answered in the user turn right after it.
 */
function assertValidAnthropicMessages(messages: readonly Item[]): void {
  const blocks = (m: Item | undefined): Item[] => (Array.isArray(m?.['content']) ? (m['content'] as Item[]) : []);
  messages.forEach((m, i) => {
    expect(m['role']).toBe(i % 2 === 0 ? 'user' : 'assistant');
    const before = new Set(blocks(messages[i - 1]).flatMap((b) => (b['type'] === 'tool_use' ? [String(b['id'])] : [])));
    for (const b of blocks(m)) if (b['type'] === 'tool_result') expect(before.has(String(b['tool_use_id']))).toBe(true);
    if (m['role'] === 'assistant' && i < messages.length - 1) {
      const answers = new Set(blocks(messages[i + 1]).flatMap((b) => (b['type'] === 'tool_result' ? [String(b['tool_use_id'])] : [])));
      for (const b of blocks(m)) if (b['type'] === 'tool_use') expect(answers.has(String(b['id']))).toBe(true);
    }
  });
}

const VALIDATE: Record<Exclude<ProviderApi, 'openai-chat'>, (items: readonly Item[]) => void> = {
  'openai-responses': assertValidResponsesInput,
  'anthropic-messages': assertValidAnthropicMessages,
};

describe.each(['openai-responses', 'anthropic-messages'] as const)('rebuilt context in %s (property)', (api) => {
  // Hundreds of generated conversations: slow on a loaded machine, so the time limit is generous.
  it('is a valid request of that API holding every user message after the watermark verbatim', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(turnsArb, fc.integer({ min: 0, max: 3 }), (turns, tailScale) => {
        const messages = conversationIn(api, turns);
        const index = indexMessages(messages);
        const b = computeBoundaryIndex(index, { minTokens: 20 * (tailScale + 1), maxTokens: 200 * (tailScale + 1), minTextMessages: tailScale });
        fc.pre(b >= 0);
        const watermark = index[b]!.id;
        const context = rebuild(api, messages, watermark, 1);
        VALIDATE[api](providerMessages(context, api));
        if (api === 'openai-responses') {
          // A call the model reasoned about keeps its reasoning item right before it (encrypted reasoning round-trips).
          messages.forEach((m, i) => {
            const before = messages[i - 1];
            const at = context.findIndex((c) => c.id === m.id);
            if (at > 0 && viewOf(m).toolCalls.length > 0 && before !== undefined && viewOf(before).reasoning && !viewOf(messages[i - 2] ?? m).reasoning) {
              expect(context[at - 1]?.id).toBe(before.id);
            }
          });
        }
        const after = messages.slice(b + 1);
        for (const m of after) if (viewOf(m).role === 'user') expect(context.find((c) => c.id === m.id)?.native).toBe(m.native);
      }),
      { numRuns: 300 },
    );
  });

  it('stays valid through a second rebuild on top of the first', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(turnsArb, turnsArb, (first, second) => {
        const messages = conversationIn(api, first);
        const index = indexMessages(messages);
        const b = computeBoundaryIndex(index, { minTokens: 20, maxTokens: 200, minTextMessages: 1 });
        fc.pre(b >= 0);
        const once = rebuild(api, messages, index[b]!.id, 1);
        const more = conversationIn(api, second).map((m) => ({ ...m, id: `n-${m.id}`, native: JSON.parse(JSON.stringify(m.native).replace(/"(c\d+_\d+_\d+)"/g, '"n-$1"')) as Record<string, unknown> }));
        const all = [...once, ...more];
        const b2 = computeBoundaryIndex(indexMessages(all), { minTokens: 20, maxTokens: 200, minTextMessages: 1 });
        fc.pre(b2 >= 0);
        const twice = rebuild(api, all, all[b2]!.id, 2);
        VALIDATE[api](providerMessages(twice, api));
        expect(twice.filter((m) => m.id.startsWith('baton-'))).toHaveLength(1);
      }),
      { numRuns: 200 },
    );
  });
});
