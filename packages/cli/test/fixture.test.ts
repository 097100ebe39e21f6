import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * Invariants of the demo's recorded session (fixtures/recorded-session.json). The demo replays it into a session, so
 * it must be a valid OpenAI-style conversation whose provider usage crosses every rung of the default ladder — each
 * at its own step — and the overflow point.
 */

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

interface Message {
  id: string;
  role: string;
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  finish_reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  created_at: number;
}

interface ToolDefinition {
  type: string;
  function: { name: string; parameters: { properties: Record<string, unknown>; required: string[] } };
}

interface Fixture {
  project_id: string;
  agent: string;
  model: { id: string; context_window: number; max_output_tokens: number };
  system: string;
  tools: ToolDefinition[];
  writer_tools: Record<string, { name: string; args: Record<string, string> }>;
  messages: Message[];
}

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/recorded-session.json', import.meta.url), 'utf8'),
) as Fixture;
const messages = fixture.messages;
const toolsByName = new Map(fixture.tools.map((tool) => [tool.function.name, tool]));

describe('recorded session fixture', () => {
  it('describes the demo project, model, system prompt and tools', () => {
    expect(fixture.project_id).toBe('demo-shop');
    expect(fixture.agent).toBe('demo-agent');
    expect(fixture.model).toEqual({ id: 'gpt-4o', context_window: 64000, max_output_tokens: 8000 });
    expect(fixture.system.length).toBeGreaterThan(1000);
    expect([...toolsByName.keys()]).toEqual(['read_file', 'write_file', 'edit_file', 'bash', 'grep']);
    for (const tool of fixture.tools) {
      expect(tool.type).toBe('function');
      for (const required of tool.function.parameters.required) {
        expect(tool.function.parameters.properties).toHaveProperty(required);
      }
    }
  });

  it('maps the writer tools onto existing agent tools and arguments', () => {
    expect(Object.keys(fixture.writer_tools).sort()).toEqual(['edit', 'read', 'write']);
    for (const [batonTool, mapping] of Object.entries(fixture.writer_tools)) {
      const tool = toolsByName.get(mapping.name);
      expect(tool, batonTool).toBeDefined();
      for (const agentArg of Object.values(mapping.args)) {
        expect(tool?.function.parameters.properties, `${batonTool}.${agentArg}`).toHaveProperty(agentArg);
      }
    }
  });

  it('has 60–90 messages with sequential unique ids, known roles and strictly increasing timestamps', () => {
    expect(messages.length).toBeGreaterThanOrEqual(60);
    expect(messages.length).toBeLessThanOrEqual(90);
    messages.forEach((message, index) => {
      expect(message.id).toBe(`m${String(index + 1).padStart(3, '0')}`);
      expect(['user', 'assistant', 'tool']).toContain(message.role);
      expect(Number.isInteger(message.created_at)).toBe(true);
      if (index > 0) expect(message.created_at).toBeGreaterThan(messages[index - 1]?.created_at ?? Infinity);
    });
    expect(messages[0]?.role).toBe('user');
    expect(messages.filter((message) => message.role === 'user').length).toBeGreaterThanOrEqual(4);
  });

  it('finishes every assistant message with a reason matching its tool calls, and usage that adds up', () => {
    for (const message of messages.filter((m) => m.role === 'assistant')) {
      const calls = message.tool_calls ?? [];
      expect(message.finish_reason, message.id).toBe(calls.length > 0 ? 'tool_calls' : 'stop');
      if (calls.length === 0) expect(message.content, message.id).toBeTruthy();
      const usage = message.usage;
      expect(usage, message.id).toBeDefined();
      expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? NaN) + (usage?.completion_tokens ?? NaN));
    }
  });

  it('answers every tool call exactly once, right after the assistant message that made it', () => {
    const seenCallIds = new Set<string>();
    let index = 0;
    while (index < messages.length) {
      const message = messages[index] as Message;
      expect(message.role, `${message.id} is a tool result without a preceding tool call`).not.toBe('tool');
      index += 1;
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) continue;
      const pending = new Set<string>();
      for (const call of calls) {
        expect(seenCallIds.has(call.id), `duplicate call id ${call.id}`).toBe(false);
        seenCallIds.add(call.id);
        pending.add(call.id);
        expect(call.type).toBe('function');
        const tool = toolsByName.get(call.function.name);
        expect(tool, `${message.id} calls unknown tool ${call.function.name}`).toBeDefined();
        const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
        for (const required of tool?.function.parameters.required ?? []) {
          expect(typeof args[required], `${message.id} ${call.function.name}.${required}`).toBe('string');
        }
        for (const key of Object.keys(args)) expect(tool?.function.parameters.properties).toHaveProperty(key);
      }
      while (pending.size > 0) {
        const result = messages[index];
        expect(result?.role, `${message.id} has unanswered tool calls`).toBe('tool');
        expect(pending.delete(result?.tool_call_id ?? ''), `${result?.id} answers no pending call`).toBe(true);
        expect(typeof result?.content).toBe('string');
        index += 1;
      }
    }
  });

  it('climbs from about 3 000 tokens past the overflow point, crossing each rung at its own step', () => {
    const totals = messages.flatMap((message) => (message.usage ? [message.usage.total_tokens] : []));
    for (let i = 1; i < totals.length; i += 1) expect(totals[i]).toBeGreaterThanOrEqual(totals[i - 1] ?? Infinity);
    expect(totals[0]).toBeGreaterThanOrEqual(2000);
    expect(totals[0]).toBeLessThanOrEqual(4000);

    // Usable window: context − output reserve − compaction reserve (both min(8000, max output) for this model).
    const { context_window: window, max_output_tokens: maxOutput } = fixture.model;
    const usable = window - Math.min(maxOutput, 20_000) - Math.min(maxOutput, 33_000);
    expect(usable).toBe(48_000);
    const last = totals.at(-1) ?? 0;
    expect(last).toBeGreaterThanOrEqual(usable);
    expect(last).toBeLessThan(window - maxOutput);

    const points = [0.2, 0.4, 0.6, 0.8, 1].map((fraction) => Math.round(usable * fraction));
    expect(points).toEqual([9600, 19200, 28800, 38400, 48000]);
    const crossingStep = points.map((point) => totals.findIndex((total) => total >= point));
    for (const step of crossingStep) expect(step).toBeGreaterThan(0);
    expect(new Set(crossingStep).size).toBe(points.length);
    // The overflow comes before the very end, so the session continues after a rebuild.
    expect(crossingStep.at(-1)).toBeLessThan(totals.length - 1);
  });

  it('carries the exact literals the user stated, for the writer to copy byte for byte', () => {
    const first = messages[0]?.content ?? '';
    expect(first).toContain('postgres://shop_test:shop_test@localhost:55432/shop_test');
    expect(first).toContain('port 8081');
    expect(first).toContain('migrations/');
  });
});
