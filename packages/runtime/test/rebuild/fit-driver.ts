import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { calibratedTokens, countsOfMessage, type SessionEffect, type WriterStartEffect } from '@baton/actors';
import { memoryPaths } from '@baton/memory-store';
import { SESSION_RECORDS, checkRecord, type StoredSessionRecord } from '@baton/log-schema';
import { viewOf, type Message, type OpenRequest, type ProviderApi } from '@baton/protocol';
import OpenAI from 'openai';
import { sessionSetupFor } from '../../src/daemon/session-setup.ts';
import { indexMessages } from '../../src/rebuild/message-index.ts';
import { HostedSession, overheadTokens, type MessageSource } from '../../src/host/session-host.ts';
import type { ModelClients } from '../../src/model/model-clients.ts';
import { compactConversation } from '../../src/host/compact-conversation.ts';
import { DEFAULT_FIT_OPTIONS } from '../../src/rebuild/fit-costs.ts';
import { renderRebuild } from '../../src/host/render-rebuild.ts';

/**
 * A session host driven as the daemon drives it, without the daemon: records are checked against their schema,
 * numbered and folded; the worker effects a rebuild asks for (render, compaction) run for real against the records'
 * bodies and a memory directory; writers are settled by a policy. What a provider counts for each request is
 * computed from Baton's own counts scaled by the provider's true ratios, so the session's calibration has something
 * real to learn from.
 */

/** What the provider really counts per Baton token: text, tool outputs. */
export interface ProviderRatios {
  readonly text: number;
  readonly tool: number;
}

/** How the writers of a run end: settle with an outcome now, or keep running. */
export type WriterPolicy = (writer: WriterStartEffect, nth: number) => 'success' | 'failure' | 'running';

const WORDS = ['the', 'reducer', 'state', 'fails', 'when', 'token', 'parser', 'config', 'retry', 'cache', 'index', 'writes', 'reads', 'module', 'error', 'test'];

/** Deterministic prose of about `chars` characters. */
export function prose(chars: number, seed: number): string {
  let x = seed >>> 0 || 1;
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = WORDS[(x >>> 8) % WORDS.length] ?? 'x';
    out.push(w);
    n += w.length + 1;
    if (out.length % 17 === 0) out.push('\n');
  }
  return out.join(' ');
}

/** One model step of a turn: parallel tool calls and their outputs' sizes (characters). */
export interface Step {
  readonly calls: readonly string[];
  readonly outputs: readonly number[];
}

export interface Turn {
  readonly user: number;
  readonly steps: readonly Step[];
}

const native = (id: string, role: Message['role'], form: Record<string, unknown>): Message => ({ id, role, content: null, native: form });

/** The messages of one user turn in `api`'s shape: the prompt, then per step the call(s) and the result(s). */
export function turnMessages(api: ProviderApi, t: Turn, turn: number, seed: number): Message[][] {
  const out: Message[][] = [];
  const userText = `Please fix it (turn ${turn}): ${prose(t.user, seed)}`;
  out.push([
    api === 'openai-chat'
      ? { id: `u${turn}`, role: 'user', content: userText }
      : api === 'openai-responses'
        ? native(`u${turn}`, 'user', { type: 'message', role: 'user', content: [{ type: 'input_text', text: userText }] })
        : native(`u${turn}`, 'user', { role: 'user', content: [{ type: 'text', text: userText }] }),
  ]);
  t.steps.forEach((s, j) => {
    const ids = s.calls.map((_, k) => `c${turn}_${j}_${k}`);
    const outputs = s.outputs.map((size, k) => `${prose(size, seed + j * 7 + k)} #${k}`);
    const step: Message[] = [];
    if (api === 'openai-chat') {
      step.push({ id: `a${turn}_${j}`, role: 'assistant', content: null, tool_calls: ids.map((id, k) => ({ id, type: 'function', function: { name: s.calls[k], arguments: `{"path":"src/m${j}.ts"}` } })) });
      ids.forEach((id, k) => step.push({ id: `t${id}`, role: 'tool', tool_call_id: id, content: outputs[k] ?? '' }));
    } else if (api === 'openai-responses') {
      ids.forEach((id, k) => step.push(native(`f${id}`, 'assistant', { type: 'function_call', call_id: id, name: s.calls[k], arguments: `{"path":"src/m${j}.ts"}` })));
      ids.forEach((id, k) => step.push(native(`o${id}`, 'tool', { type: 'function_call_output', call_id: id, output: outputs[k] ?? '' })));
    } else {
      step.push(native(`a${turn}_${j}`, 'assistant', { role: 'assistant', content: ids.map((id, k) => ({ type: 'tool_use', id, name: s.calls[k], input: { path: `src/m${j}.ts` } })) }));
      step.push(native(`t${turn}_${j}`, 'tool', { role: 'user', content: ids.map((id, k) => ({ type: 'tool_result', tool_use_id: id, content: outputs[k] ?? '' })) }));
    }
    out.push(step);
  });
  return out;
}

const TOOLS = [
  { type: 'function', function: { name: 'exec_command', description: 'Run a shell command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } },
  { type: 'function', function: { name: 'web_search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
];

export class FitDriver {
  readonly api: ProviderApi;
  readonly session: HostedSession;
  readonly records: StoredSessionRecord[] = [];
  readonly memoryRoot: string;
  readonly ratios: ProviderRatios;
  readonly contextWindow: number;
  /** What the provider counted for each request the agent sent after the first rebuild, and the calibrated count. */
  readonly sentAfterRebuild: { provider: number; calibrated: number }[] = [];
  rebuilds = 0;
  #seq = 0;
  #writers = 0;
  readonly #bodies = new Map<string, Message>();
  readonly #main: Message[] = [];
  readonly #policy: WriterPolicy;
  readonly #clients: ModelClients;

  constructor(options: { api: ProviderApi; contextWindow: number; ratios: ProviderRatios; memoryRoot: string; policy: WriterPolicy; thresholds?: string[] }) {
    this.api = options.api;
    this.ratios = options.ratios;
    this.contextWindow = options.contextWindow;
    this.memoryRoot = options.memoryRoot;
    this.#policy = options.policy;
    const request: OpenRequest = {
      project_id: 'p',
      model: { id: 'm', context_window: options.contextWindow },
      api: options.api,
      system: 'You are a coding agent. Work carefully and keep the user informed.',
      tools: TOOLS,
      ...(options.thresholds !== undefined ? { checkpoint: { thresholds: options.thresholds } } : {}),
    };
    const setup = sessionSetupFor(request, 's', {});
    this.session = new HostedSession(setup);
    this.#record('session.opened', { setup, encoding: 'json', request });
    // Requests nothing answers: a compaction's summary call fails at once and the summary is extractive.
    this.#clients = { openai: new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'none', maxRetries: 0 }), anthropic: null };
  }

  get source(): MessageSource {
    return {
      messages: (_sid, ids) => Promise.resolve(ids.flatMap((id) => (this.#bodies.has(id) ? [this.#bodies.get(id) as Message] : []))),
      recentMain: (_sid, limit) => Promise.resolve(this.#main.slice(-limit)),
    };
  }

  #record(type: string, payload: unknown): StoredSessionRecord {
    const record = checkRecord(SESSION_RECORDS, { v: 1, stream: 'session/s', seq: ++this.#seq, type, at: this.#seq, payload });
    this.records.push(record);
    return record;
  }

  /** Logs and folds an input; runs the worker effects it asks for and settles writers by the policy. */
  async input(type: string, payload: unknown): Promise<SessionEffect[]> {
    const { effects } = this.session.fold(this.#record(type, payload));
    const out = [...effects];
    for (const e of effects) out.push(...(await this.#run(e)));
    return out;
  }

  async #run(effect: SessionEffect): Promise<SessionEffect[]> {
    switch (effect.kind) {
      case 'writer.start': {
        const outcome = this.#policy(effect, ++this.#writers);
        if (outcome === 'running') return [];
        if (outcome === 'success') this.writeCheckpoint();
        return await this.input('writer.settled', {
          writerId: effect.writerId,
          outcome,
          ...(outcome === 'failure' ? { failure: { kind: 'validation', retryable: false, message: 'checkpoint-intent-unquoted' } } : {}),
        });
      }
      case 'rebuild.render': {
        this.rebuilds++;
        const payload = await renderRebuild(this.session, effect, { memoryRoot: this.memoryRoot, fit: DEFAULT_FIT_OPTIONS, source: this.source });
        return await this.input('rebuild.rendered', payload);
      }
      case 'rebuild.compact': {
        this.rebuilds++;
        const payload = await compactConversation(this.session, effect, { clients: this.#clients, model: 'm', timeoutMs: 2_000, source: this.source });
        return await this.input('rebuild.compacted', payload);
      }
      case 'timer.start':
        // A wait for a writer that is left running: it runs out (the rebuild goes on with what is on disk).
        return this.session.context.writer !== null ? await this.input('timer.fired', { timerId: effect.timerId }) : [];
      case 'writer.cancel':
      case 'publish':
      case 'reply':
      case 'timer.cancel':
      case 'rebuild.reply':
        // The main thread's part: nothing the session host needs to fold.
        return [];
    }
  }

  /** A checkpoint a writer committed: the 11 sections with a quote of the user. */
  writeCheckpoint(): void {
    const path = memoryPaths(this.memoryRoot, { projectId: 'p', sessionId: 's' }).checkpoint;
    mkdirSync(dirname(path), { recursive: true });
    const sections = Array.from({ length: 11 }, (_, i) => `## §${i + 1} Section ${i + 1}\n_What goes here._\n\n${i === 0 ? '> "Please fix it"\n' : prose(600, i)}`);
    writeFileSync(path, `# Session checkpoint\n\n${sections.join('\n\n')}\n`);
  }

  /** The agent's current request: the rebuilt context (Baton's boundary first) and what followed, as Baton resolves it. */
  async context(): Promise<Message[]> {
    return await this.session.resolve(this.session.contextIds(), this.source);
  }

  /** What the provider counts for the request the context makes (system prompt and tools included). */
  providerCount(context: readonly Message[]): number {
    const overhead = overheadTokens(this.session.setup);
    let text = overhead;
    let tool = 0;
    for (const entry of indexMessages([...context])) {
      const counts = countsOfMessage(entry);
      text += counts.text;
      tool += counts.tool;
    }
    return Math.ceil(text * this.ratios.text + tool * this.ratios.tool);
  }

  /** The session's own (calibrated) count of the request the context makes. */
  calibratedCount(context: readonly Message[]): number {
    const ctx = this.session.context;
    let total = calibratedTokens(ctx.calibration, { text: ctx.input.overheadTokens ?? 0, tool: 0, images: 0 });
    for (const entry of indexMessages([...context])) total += calibratedTokens(ctx.calibration, countsOfMessage(entry));
    return total;
  }

  /**
   * The agent sends the context plus `messages` and the model answers: if the last reported usage and the new messages
   * reach the usable window, a rebuild comes first (as the gateway asks for it); the reply is recorded with the usage
   * the provider reports for what was sent.
   */
  async agentStep(messages: readonly Message[], replies: readonly Message[]): Promise<void> {
    for (const m of messages) this.#remember(m);
    const before = this.session.context;
    const usable = before.input.usableWindow;
    const estimate = (before.lastPromptTokens ?? 0) + this.providerCount(messages) - overheadTokensOf(this);
    await this.input('messages.appended', { messages: [...messages] });
    if (usable > 0 && before.lastPromptTokens !== null && estimate >= usable) {
      await this.input('rebuild.requested', { requestId: `rb${this.rebuilds + 1}`, reason: 'overflow', waitMs: 1_000, inFlightWaitMs: 1_000, checkpointExists: this.checkpointExists() });
    }
    const sent = await this.context();
    const provider = this.providerCount(sent);
    if (this.rebuilds > 0) this.sentAfterRebuild.push({ provider, calibrated: this.calibratedCount(sent) });
    if (replies.length === 0) return;
    // The reply's usage rides on its last item (as the gateway records it on the agent's echo).
    const last = replies.at(-1) as Message;
    const answered = [...replies.slice(0, -1), { ...last, finish_reason: viewOf(last).toolCalls.length > 0 ? 'tool_calls' : 'stop', usage: { prompt_tokens: provider, completion_tokens: 30 } }];
    for (const m of answered) this.#remember(m);
    await this.input('messages.appended', { messages: answered });
  }

  #remember(m: Message): void {
    this.#bodies.set(m.id, m);
    this.#main.push(m);
  }

  checkpointExists(): boolean {
    return statSync(memoryPaths(this.memoryRoot, { projectId: 'p', sessionId: 's' }).checkpoint, { throwIfNoEntry: false })?.isFile() === true;
  }
}

function overheadTokensOf(driver: FitDriver): number {
  return Math.ceil(overheadTokens(driver.session.setup) * driver.ratios.text);
}
