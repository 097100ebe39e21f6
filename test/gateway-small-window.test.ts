import { verifySession } from '@baton/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayRig, type GatewayRig } from './support/gateway-rig.ts';
import { TOOL_LOOP_MODELS, afterRewrite, runToolLoop, toolLoopModel } from './support/tool-loop-agents.ts';

/**
 * The agent never hits the wall, off the happy path: an agent whose tools Baton cannot write with (its writers run in
 * delta mode), writers whose every draft fails validation (the model never quotes the user), a provider that counts
 * tool outputs three times as heavy as Baton's tokenizer and refuses any prompt above its window — one user prompt and
 * thirty tool steps through `baton`'s gateway, in each provider API, with a 64 000- and a 32 000-token window. After
 * the first rewrite every request the gateway forwards is answered, and what the provider reports for it is below the
 * window; the agent finishes its task.
 */

const KEY = 'sk-small-window-0001';
const STEPS = 30;
const MODEL = TOOL_LOOP_MODELS;

let rig: GatewayRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

describe.each([64_000, 32_000])('a %i-token window, tool outputs counted three times as heavy, writers that always fail', (window) => {
  it.each(['openai-chat', 'openai-responses', 'anthropic-messages'] as const)('%s: thirty tool steps after one prompt, every forwarded request fits', { timeout: 300_000 }, async (api) => {
    rig = await startGatewayRig({
      model: { usageScale: { tool: 3 }, contextWindow: window },
      gateway: { contextWindows: { [MODEL[api]]: window } },
    });
    rig.model.setResponder(toolLoopModel(STEPS));
    const sid = `small-${api}-${window}`;
    const baseURL = api === 'anthropic-messages' ? `${rig.origin}/s/${sid}` : rig.sessionURL(sid);
    const result = await runToolLoop(api, baseURL, KEY, MODEL[api]);
    expect(result.steps).toBe(STEPS);
    expect(result.final).toMatch(/^Done: ran 30 commands/);

    // The agent's requests as the provider got them (writers' and summaries' requests are others).
    const { agentRequests, first, statuses, reported } = afterRewrite(rig.tap.exchanges);
    expect(first, 'a rewrite happened').toBeGreaterThan(0);
    expect(statuses, 'every request after the first rewrite is answered').toEqual(statuses.map(() => 200));
    const largest = Math.max(...reported.map((r) => r ?? Infinity));
    expect(largest, 'what the provider counted stays below the window').toBeLessThan(window);
    console.log(`${api}, window ${window}: ${agentRequests} agent requests, the first rewritten is #${first + 1}; after it the provider counted at most ${largest} tokens (${((100 * largest) / window).toFixed(1)} % of the window)`);

    // The session had a ladder, its writers ran and failed validation, every one (none failed as too long: their own
    // requests fit the window too); the log replays as it was decided.
    expect(await rig.daemon.sessions.waitWritersIdle(60_000)).toBe(true);
    const opened = [...rig.log.read(`session/${sid}`)].find((r) => r.type === 'session.opened')?.payload as { setup: { input: { thresholds: number[]; usableWindow: number } } };
    expect(opened.setup.input.thresholds.length).toBeGreaterThan(0);
    expect(opened.setup.input.usableWindow).toBeGreaterThan(0);
    const settled = [...rig.log.read(`session/${sid}`)].filter((r) => r.type === 'writer.settled').map((r) => r.payload as { outcome: string; failure?: { kind: string } });
    expect(settled.length).toBeGreaterThan(0);
    expect(settled.map((p) => `${p.outcome}/${p.failure?.kind ?? ''}`)).toEqual(settled.map(() => 'failure/validation'));
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });
});
