import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { viewOf, type Message, type ProviderApi } from '@baton/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HostedSession } from '../../src/host/session-host.ts';
import { FitDriver, turnMessages, type Step, type Turn, type WriterPolicy } from './fit-driver.ts';

/**
 * Every request an agent sends after its context was rebuilt fits the model's window, whatever the writers did:
 * random conversations (one user turn with up to 300 tool steps, several turns, parallel calls, outputs up to
 * 200 KB) in every provider API, windows of 32 000 to 200 000 tokens, writers that never finished, failed, still run
 * or succeeded long ago, and a provider that counts text and tool outputs 0.7 to 3 times as Baton does. The session
 * learns that count from the usage each reply reports; the rebuilt request is fitted by it.
 */

const API = fc.constantFrom<ProviderApi>('openai-chat', 'openai-responses', 'anthropic-messages');
const WINDOW = fc.constantFrom(32_000, 64_000, 128_000, 200_000);
const HISTORY = fc.constantFrom('none', 'failed', 'running', 'succeeded-long-ago');
const RATIOS = fc.record({ text: fc.double({ min: 0.7, max: 1.6, noNaN: true }), tool: fc.double({ min: 0.7, max: 3, noNaN: true }) });
/**
 * A conversation that fills `fill` times the window: one to three user turns of tool steps (up to 300 each, one to
 * three parallel calls), outputs mostly short, some long, and — in a `huge` plan — now and then 100 to 200 KB.
 */
const PLAN = fc.record({
  turns: fc.integer({ min: 1, max: 3 }),
  fill: fc.double({ min: 0.5, max: 4, noNaN: true }),
  huge: fc.boolean(),
  parallel: fc.integer({ min: 1, max: 3 }),
  longUser: fc.boolean(),
  seed: fc.integer({ min: 1, max: 2 ** 30 }),
});

function turnsOf(plan: { turns: number; fill: number; huge: boolean; parallel: number; longUser: boolean; seed: number }, window: number): Turn[] {
  let x = plan.seed;
  const next = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
  const perTurn = (plan.fill * window * 4) / plan.turns;
  return Array.from({ length: plan.turns }, () => {
    const steps: Step[] = [];
    let chars = 0;
    while (chars < perTurn && steps.length < 300) {
      const calls = Array.from({ length: 1 + next(plan.parallel) }, () => (next(2) === 0 ? 'exec_command' : 'web_search'));
      const outputs = calls.map(() => {
        const r = next(100);
        return plan.huge && r < 2 ? 100_000 + next(100_000) : r < 80 ? 200 + next(2_800) : 5_000 + next(15_000);
      });
      chars += outputs.reduce((a, b) => a + b, 0);
      steps.push({ calls, outputs });
    }
    return { user: plan.longUser ? 3_000 + next(9_000) : 20 + next(600), steps };
  });
}

const POLICIES: Record<string, WriterPolicy> = {
  // No writer ever finishes: each one a rebuild starts runs on, its wait runs out.
  none: () => 'running',
  failed: () => 'failure',
  // The first writer (a rung's) never finishes; the rebuilds wait for it and go on without it.
  running: () => 'running',
  // The first writer succeeded long ago: every later one (catch-up writers included) fails, the watermark stays old.
  'succeeded-long-ago': (_w, nth) => (nth === 1 ? 'success' : 'failure'),
};

/** Every tool result of a request answers a call made earlier in the same request. */
function toolPairsHold(request: readonly Message[]): boolean {
  const calls = new Set<string>();
  for (const m of request) {
    const view = viewOf(m);
    for (const r of view.toolResults) if (!calls.has(r.callId)) return false;
    for (const c of view.toolCalls) calls.add(c.id);
  }
  return true;
}

/** What the runs exercised, so the property cannot pass without rebuilds and fitting. */
const seen = { runs: 0, rebuilt: 0, fitted: 0, steps: new Map<string, number>(), worst: 0 };

async function run(api: ProviderApi, contextWindow: number, history: string, ratios: { text: number; tool: number }, turns: readonly Turn[], seed: number): Promise<void> {
  const memoryRoot = mkdtempSync(join(tmpdir(), 'baton-fit-'));
  try {
    const driver = new FitDriver({ api, contextWindow, ratios, memoryRoot, policy: POLICIES[history] ?? (() => 'failure'), ...(history === 'none' ? { thresholds: [] } : {}) });
    const originals = new Map<string, Message>();
    const usable = driver.session.context.input.usableWindow;
    let rebuildsSeen = 0;
    for (const [i, turn] of turns.entries()) {
      const chunks = turnMessages(api, turn, i, seed + i);
      for (const chunk of chunks.flat()) originals.set(chunk.id, chunk);
      // The user's prompt, then each step's results, are what the agent sends; the model answers with the next step's
      // calls (or, after the last step, a closing text).
      for (let c = 0; c < chunks.length; c++) {
        const sending = c === 0 ? (chunks[0] ?? []) : (chunks[c] ?? []).filter((m) => viewOf(m).role === 'tool');
        const next = chunks[c + 1];
        const replies = next !== undefined ? next.filter((m) => viewOf(m).role === 'assistant') : [closing(api, i)];
        await driver.agentStep(sending, replies);
        if (driver.rebuilds > rebuildsSeen) {
          rebuildsSeen = driver.rebuilds;
          // Right after a rebuild, the request is within the usable window by the session's own calibrated count.
          const sent = driver.sentAfterRebuild.at(-1);
          expect(sent?.calibrated ?? 0, `calibrated count after rebuild ${rebuildsSeen}`).toBeLessThanOrEqual(usable);
        }
      }
    }
    seen.runs++;
    if (driver.rebuilds > 0) seen.rebuilt++;
    let fitted = false;
    for (const r of driver.records) {
      if (r.type !== 'rebuild.rendered' && r.type !== 'rebuild.compacted') continue;
      for (const step of r.payload.fit?.steps ?? []) {
        fitted = true;
        seen.steps.set(step.step, (seen.steps.get(step.step) ?? 0) + 1);
      }
    }
    if (fitted) seen.fitted++;
    for (const sent of driver.sentAfterRebuild) seen.worst = Math.max(seen.worst, sent.provider / contextWindow);
    // Every request sent after the first rebuild: the provider accepts it, its tool results answer its calls, and its
    // user messages are the agent's own, word for word.
    for (const sent of driver.sentAfterRebuild) expect(sent.provider).toBeLessThanOrEqual(contextWindow);
    const context = await driver.context();
    expect(toolPairsHold(context)).toBe(true);
    for (const m of context) {
      if (viewOf(m).role !== 'user' || m.id.startsWith('baton-')) continue;
      expect(m.native ?? m.content, `user message ${m.id} kept verbatim`).toEqual(originals.get(m.id)?.native ?? originals.get(m.id)?.content);
    }
    // Replaying the log reproduces the same rebuilds: the same context, message for message, and the same state.
    const replayed = new HostedSession(driver.session.setup);
    for (const record of driver.records) replayed.fold(record);
    expect(replayed.contextIds()).toEqual(driver.session.contextIds());
    expect(JSON.stringify(replayed.context)).toBe(JSON.stringify(driver.session.context));
    expect(await replayed.resolve(replayed.contextIds(), driver.source)).toEqual(context);
  } finally {
    rmSync(memoryRoot, { recursive: true, force: true });
  }
}

function closing(api: ProviderApi, turn: number): Message {
  const text = `Done with turn ${turn}.`;
  if (api === 'openai-chat') return { id: `z${turn}`, role: 'assistant', content: text };
  if (api === 'openai-responses') return { id: `z${turn}`, role: 'assistant', content: null, native: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] } };
  return { id: `z${turn}`, role: 'assistant', content: null, native: { role: 'assistant', content: [{ type: 'text', text }] } };
}

describe('fitted rebuilds (property)', () => {
  it('every request after a rebuild fits the window by the calibrated count, keeps tool pairs and the user words, and replays the same', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(API, WINDOW, HISTORY, RATIOS, PLAN, async (api, window, history, ratios, plan) => {
        await run(api, window, history, ratios, turnsOf(plan, window), plan.seed);
      }),
      { numRuns: 30 },
    );
    console.log(`fitted rebuilds: ${seen.runs} runs, ${seen.rebuilt} rebuilt, ${seen.fitted} fitted (${[...seen.steps].map(([k, v]) => `${k} ${v}`).join(', ')}), largest request after a rebuild ${(seen.worst * 100).toFixed(1)} % of the window`);
    expect(seen.rebuilt).toBeGreaterThan(seen.runs / 2);
    expect(seen.fitted).toBeGreaterThan(0);
  });
});
