import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { CustomTool, ResponseCustomToolCallInputDeltaEvent, ResponseInput } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';

/** A patch as Codex's `apply_patch` takes it: free-form text, not JSON. */
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello from a "custom" call\n*** End Patch\n';
const applyPatch: CustomTool = { type: 'custom', name: 'apply_patch', description: 'Edit files with a patch.' };

let server: LoopbackModel;

afterEach(async () => {
  await server.close();
});

describe('loopback model: custom tool calls (a Responses custom_tool_call, such as Codex apply_patch)', () => {
  it('answers a custom_tool_call item in a JSON reply; its output item reads back as a tool result', async () => {
    server = await startLoopbackModel({ mode: 'scripted' });
    server.script({ reply: { content: 'Patching.', tool_calls: [{ name: 'apply_patch', arguments: PATCH, kind: 'custom', id: 'call_p1' }] } });
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const res = await openai.responses.create({ model: 'm', input: 'Create hello.txt.', tools: [applyPatch], store: false });
    expect(res.output.map((o) => o.type)).toEqual(['message', 'custom_tool_call']);
    expect(res.output[1]).toEqual({ type: 'custom_tool_call', id: 'ctc_loopback_0_0', call_id: 'call_p1', name: 'apply_patch', input: PATCH, status: 'completed' });
    expect(res.status).toBe('completed');
    // Counted as output like any call: its name and its input.
    expect(res.usage?.output_tokens).toBeGreaterThan(20);

    // The agent sends the call back with its output (as Codex does): the neutral view reads a call and its result.
    server.script({ reply: { content: 'Done.' } });
    const input: ResponseInput = [
      { role: 'user', content: 'Create hello.txt.' },
      { type: 'custom_tool_call', id: 'ctc_loopback_0_0', call_id: 'call_p1', name: 'apply_patch', input: PATCH },
      { type: 'custom_tool_call_output', call_id: 'call_p1', output: 'Success. Updated the following files:\nA hello.txt\n' },
    ];
    const done = await openai.responses.create({ model: 'm', input, tools: [applyPatch], store: false });
    expect(done.output_text).toBe('Done.');
    const items = server.requests[1]?.conversation.items ?? [];
    expect(items.map((i) => [i.role, i.toolCalls, i.toolResults.map((r) => [r.callId, r.output])])).toEqual([
      ['user', [], []],
      ['assistant', [{ id: 'call_p1', name: 'apply_patch', arguments: PATCH }], []],
      ['tool', [], [['call_p1', 'Success. Updated the following files:\nA hello.txt\n']]],
    ]);
  });

  it('streams it as output_item.added, custom_tool_call_input deltas and done, output_item.done; the SDK accumulates the input', async () => {
    server = await startLoopbackModel({ mode: 'scripted' });
    server.script({ reply: { tool_calls: [{ name: 'apply_patch', arguments: PATCH, kind: 'custom' }, { name: 'read', arguments: { path: 'a' } }] } });
    const raw = await fetch(`${server.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'Go.', tools: [applyPatch], stream: true }),
    });
    const text = await raw.text();
    const events = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1] ?? '') as Record<string, unknown> & { type: string });
    const custom = events.filter((e) => e['output_index'] === 0);
    expect(custom.map((e) => e.type)).toEqual([
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
    ]);
    expect(custom[0]?.['item']).toEqual({ type: 'custom_tool_call', id: 'ctc_loopback_0_0', call_id: 'call_0_0', name: 'apply_patch', input: '', status: 'in_progress' });
    expect(custom.slice(1, 3).map((e) => e['delta']).join('')).toBe(PATCH);
    expect(custom[3]).toMatchObject({ item_id: 'ctc_loopback_0_0', output_index: 0, input: PATCH });
    expect(custom[4]?.['item']).toMatchObject({ type: 'custom_tool_call', input: PATCH, status: 'completed' });
    // The function call after it keeps its own events.
    expect(events.filter((e) => e['output_index'] === 1).map((e) => e.type)).toContain('response.function_call_arguments.done');
    const completed = events.at(-1) as { type: string; response: { output: { type: string }[] } };
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output.map((o) => o.type)).toEqual(['custom_tool_call', 'function_call']);

    // Through the openai SDK's stream helper: typed delta events, and the call whole in the final response.
    server.script({ reply: { tool_calls: [{ name: 'apply_patch', arguments: PATCH, kind: 'custom' }] } });
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const stream = openai.responses.stream({ model: 'm', input: 'Go.', tools: [applyPatch] });
    const deltas: ResponseCustomToolCallInputDeltaEvent[] = [];
    stream.on('response.custom_tool_call_input.delta', (e) => deltas.push(e));
    const final = await stream.finalResponse();
    expect(deltas.map((d) => d.delta).join('')).toBe(PATCH);
    const call = final.output[0];
    expect(call?.type === 'custom_tool_call' ? [call.name, call.input, call.call_id] : undefined).toEqual(['apply_patch', PATCH, 'call_1_0']);
  });

  it('chat and Anthropic, which have no custom calls, get a function call whose arguments are {input}', async () => {
    server = await startLoopbackModel({ mode: 'scripted' });
    const spec = { reply: { tool_calls: [{ name: 'apply_patch', arguments: PATCH, kind: 'custom' as const, id: 'call_c' }] } };
    server.script(spec, spec, spec);
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const tools = [{ type: 'function' as const, function: { name: 'apply_patch', parameters: { type: 'object', properties: { input: { type: 'string' } } } } }];
    const chat = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Go.' }], tools });
    const call = chat.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? [call.id, call.function.name, JSON.parse(call.function.arguments) as unknown] : undefined).toEqual(['call_c', 'apply_patch', { input: PATCH }]);
    const streamed = await openai.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'Go.' }], tools }).finalChatCompletion();
    const streamedCall = streamed.choices[0]?.message.tool_calls?.[0];
    expect(streamedCall?.type === 'function' ? JSON.parse(streamedCall.function.arguments) : undefined).toEqual({ input: PATCH });

    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Go.' }], tools: [{ name: 'apply_patch', input_schema: { type: 'object', properties: { input: { type: 'string' } } } }] });
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_c', name: 'apply_patch', input: { input: PATCH } }]);
  });
});
