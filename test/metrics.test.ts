import type { PublishedEvent } from '@baton/protocol';
import { GatewayMetrics } from '@baton/gateway';
import { DaemonMetrics, processMetrics, startMetricsServer, type MetricsServer } from '@baton/runtime';
import { parsePrometheusText, sampleSum, type PrometheusSample } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';
import { SdkAgent, agentResponder, isWriterRequest } from './support/gateway-agent.ts';
import { GATEWAY_TOOLS, recordTypes, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

/** Counts of `key(item)` over `items`. */
function tally<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(key(item), (out.get(key(item)) ?? 0) + 1);
  return out;
}

/** The values of `name`'s samples, by the labels `keys` joined with `/` (zero-valued series left out). */
function byLabels(samples: readonly PrometheusSample[], name: string, keys: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name || s.value === 0) continue;
    const k = keys.map((key) => s.labels[key] ?? '').join('/');
    out.set(k, (out.get(k) ?? 0) + s.value);
  }
  return out;
}

describe('metrics: /metrics scraped during an end-to-end run through the gateway (real nats-server, LMDB, workers)', () => {
  let rig: GatewayRig;
  let server: MetricsServer;
  const daemonMetrics = new DaemonMetrics();
  const gatewayMetrics = new GatewayMetrics();
  beforeAll(async () => {
    // Usable window 37 036 − 4 629 − 7 407 = 25 000 tokens: threshold writers early on, then an overflow and a rebuild.
    rig = await startGatewayRig({ nats: true, gateway: { contextWindows: { 'gpt-4o': 37_036 }, metrics: gatewayMetrics }, daemon: { observer: daemonMetrics } });
    rig.model.setResponder(agentResponder);
    daemonMetrics.watch(rig.daemon);
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, registries: [processMetrics(), daemonMetrics.registry, gatewayMetrics.registry] });
  });
  afterAll(async () => {
    await server.close();
    await rig.stop();
  });

  it('counts appends, writers by outcome, rebuilds, sessions, cache tokens and gateway requests as they happened', { timeout: 240_000 }, async () => {
    const sid = 'metrics';
    const events: PublishedEvent[] = [];
    const stream = rig.client.events(sid);
    void (async () => {
      for await (const e of stream) events.push(e);
    })();
    const agent = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: 'sk-metrics-0000', system: 'You are a careful coding agent working in a TypeScript repository.' });
    // Turns until the conversation overflowed and was rebuilt, then two more on the rebuilt context.
    let after = -1;
    for (let turn = 1; after < 2; turn++) {
      await agent.turn();
      if (after >= 0 || recordTypes(rig.log, sid).includes('rebuild.rendered')) after++;
      if (turn > 40) throw new Error('no overflow in 40 turns');
    }
    // Every recorded call reaches the daemon, and every writer settles; the metrics endpoint keeps serving.
    await rig.gateway.close();
    expect(await rig.daemon.sessions.waitWritersIdle(120_000)).toBe(true);
    // A round trip on the same connections: every event the daemon published before it has reached the subscriber.
    await rig.client.status(sid);
    stream.stop();

    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { samples, types } = parsePrometheusText(await res.text());
    const value = (name: string, labels: Record<string, string> = {}): number => sampleSum(samples, name, labels);

    // What the log says happened.
    const sessionStreams = [...rig.log.streams('session/')];
    expect(sessionStreams).toEqual([`session/${sid}`]);
    const records = [...rig.log.read(`session/${sid}`)];
    const appendedRecords = records.filter((r) => r.type === 'messages.appended');
    const appendedMessages = appendedRecords.reduce((n, r) => n + (r.payload as { messages: unknown[] }).messages.length, 0);
    const rendered = records.filter((r) => r.type === 'rebuild.rendered').length;
    const compacted = records.filter((r) => r.type === 'rebuild.compacted').length;
    const settledRecords = records.filter((r) => r.type === 'writer.settled').map((r) => r.payload as { outcome: string; failure?: { kind: string } });
    const writerStarts = [...rig.log.streams('writer/')].map((s) => [...rig.log.read(s)][0]?.payload as { input: { mode: string }; trigger: string });

    // Appends: every accepted message counted once, one latency observation per append request.
    expect(appendedMessages).toBeGreaterThan(0);
    expect(value('baton_appended_messages_total')).toBe(appendedMessages);
    expect(value('baton_requests_total', { verb: 'append', code: 'ok' })).toBeGreaterThanOrEqual(appendedRecords.length);
    expect(value('baton_request_duration_seconds_count', { verb: 'append' })).toBe(value('baton_requests_total', { verb: 'append' }));
    expect(value('baton_requests_total', { verb: 'open', code: 'ok' })).toBe(1);
    expect(types.get('baton_request_duration_seconds')).toBe('histogram');

    // Rebuilds, by outcome, each timed.
    expect(rendered).toBeGreaterThanOrEqual(1);
    expect(value('baton_rebuilds_total', { outcome: 'rebuilt' })).toBe(rendered);
    expect(value('baton_rebuilds_total')).toBe(rendered + compacted);
    expect(value('baton_rebuild_duration_seconds_count')).toBe(rendered + compacted);
    expect(value('baton_rebuilds_total', { outcome: 'rebuilt' })).toBe(events.filter((e) => e.type === 'rebuild.completed' && e.outcome === 'rebuilt').length);

    // Writers: started by mode and trigger as their streams begin; settled by outcome and failure kind as the session
    // recorded; every settled writer that started in this daemon timed.
    expect(writerStarts.length).toBeGreaterThanOrEqual(2);
    expect(byLabels(samples, 'baton_writers_started_total', ['mode', 'trigger'])).toEqual(tally(writerStarts, (w) => `${w.input.mode}/${w.trigger}`));
    expect(byLabels(samples, 'baton_writers_settled_total', ['outcome', 'failure_kind'])).toEqual(tally(settledRecords, (s) => `${s.outcome}/${s.failure?.kind ?? 'none'}`));
    expect(value('baton_writers_settled_total', { outcome: 'success' })).toBeGreaterThanOrEqual(1);
    expect(value('baton_writer_duration_seconds_count')).toBe(settledRecords.length);
    expect(value('baton_thresholds_crossed_total')).toBe(events.filter((e) => e.type === 'threshold.crossed').length);

    // Writer cache figures: the tokens the settled writers reported, and one LLM call per writer request the model got.
    const perf = events.flatMap((e) => (e.type === 'writer.cache_perf' ? [e] : []));
    expect(perf).toHaveLength(settledRecords.length);
    expect(value('baton_writer_prompt_tokens_total')).toBe(perf.reduce((n, e) => n + e.total_input_tokens, 0));
    expect(value('baton_writer_cached_prompt_tokens_total')).toBe(perf.reduce((n, e) => n + e.cache_read_tokens, 0));
    expect(value('baton_writer_cached_prompt_tokens_total')).toBeGreaterThan(0);
    expect(value('baton_writer_llm_calls_total')).toBe(rig.model.requests.filter(isWriterRequest).length);

    // Gauges, read from the daemon at the scrape.
    const status = rig.daemon.runtimeStatus();
    expect(value('baton_sessions_logged')).toBe(1);
    expect(value('baton_sessions_resident')).toBe(status.sessions);
    expect(value('baton_writers_running')).toBe(0);
    expect(value('baton_writers_queued')).toBe(0);
    expect(value('baton_pool_threads')).toBe(2);
    expect(value('baton_log_streams')).toBe([...rig.log.streams()].length);
    expect(value('baton_log_bytes')).toBeGreaterThan(0);
    expect(samples.filter((s) => s.name === 'baton_daemon_info')).toEqual([{ name: 'baton_daemon_info', labels: { daemon_id: rig.daemon.id }, value: 1 }]);
    expect(types.get('baton_sessions_resident')).toBe('gauge');

    // Gateway: every agent call recorded and answered 200, those sent on the rebuilt context counted as rewritten; the
    // upstream timed once per request the gateway sent it.
    const agentCalls = rig.model.requests.filter((r) => !isWriterRequest(r));
    const boundaryFirst = (content: unknown): boolean => typeof content === 'string' && content.startsWith('## Checkpoint');
    const rewritten = agentCalls.filter((r) => boundaryFirst(r.body.messages[1]?.content)).length;
    expect(rewritten).toBeGreaterThanOrEqual(2);
    expect(value('baton_gateway_requests_total')).toBe(agentCalls.length);
    expect(value('baton_gateway_requests_total', { api: 'openai-chat', route: 'recorded', status: '200', rewritten: 'true' })).toBe(rewritten);
    expect(value('baton_gateway_requests_total', { api: 'openai-chat', route: 'recorded', status: '200', rewritten: 'false' })).toBe(agentCalls.length - rewritten);
    expect(value('baton_gateway_upstream_duration_seconds_count', { api: 'openai-chat', status: '200' })).toBe(rig.tap.exchanges.length);
    expect(value('baton_gateway_upstream_headers_seconds_count')).toBe(rig.tap.exchanges.length);

    // The process: event-loop delay and resident memory.
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(0);

    // Only /metrics is served, and only read.
    expect((await fetch(server.url.replace(/\/metrics$/, '/other'))).status).toBe(404);
    expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
  });
});

describe('metrics: each way the gateway handles a request', () => {
  let rig: GatewayRig;
  let server: MetricsServer;
  const gatewayMetrics = new GatewayMetrics();
  beforeAll(async () => {
    rig = await startGatewayRig({ gateway: { metrics: gatewayMetrics } });
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, registries: [gatewayMetrics.registry] });
  });
  afterAll(async () => {
    await server.close();
    await rig.stop();
  });

  async function scrape(): Promise<PrometheusSample[]> {
    const res = await fetch(server.url);
    return parsePrometheusText(await res.text()).samples;
  }

  it('counts passthrough, side calls, recorded calls, upstream errors, a refused credential and an abandoned call', { timeout: 60_000 }, async () => {
    const url = `${rig.sessionURL('routes')}/chat/completions`;
    const call = (key: string, body: object, signal?: AbortSignal): Promise<Response> =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal !== undefined ? { signal } : {}) });
    const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }];
    const withTools = { model: 'gpt-4o', messages, tools: GATEWAY_TOOLS };

    expect((await fetch(`${rig.origin}/v1/models`)).status).toBe(200);
    rig.model.script({ reply: { content: 'a title' } });
    expect((await call('sk-owner', { model: 'gpt-4o', messages })).status).toBe(200);
    rig.model.script({ reply: { content: 'Hello.' } });
    expect((await call('sk-owner', withTools)).status).toBe(200);
    expect((await call('sk-other', withTools)).status).toBe(403);
    rig.model.script({ error: { status: 500, message: 'upstream broke' } });
    expect((await call('sk-owner', withTools)).status).toBe(500);
    // The agent gives up on a call the upstream never answers.
    rig.model.script({ stall: true });
    const abandon = new AbortController();
    const before = rig.model.requests.length;
    const abandoned = call('sk-owner', withTools, abandon.signal).catch((err: unknown) => err);
    await until(() => rig.model.requests.length > before);
    abandon.abort();
    expect(await abandoned).toBeInstanceOf(Error);

    // Each request is counted once its connection closed on the gateway's side.
    let samples = await scrape();
    while (sampleSum(samples, 'baton_gateway_requests_total') < 6) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      samples = await scrape();
    }
    expect(byLabels(samples, 'baton_gateway_requests_total', ['api', 'route', 'status', 'rewritten'])).toEqual(
      new Map([
        ['none/passthrough/200/false', 1],
        ['openai-chat/side_call/200/false', 1],
        ['openai-chat/recorded/200/false', 1],
        ['openai-chat/forbidden/403/false', 1],
        ['openai-chat/recorded/500/false', 1],
        ['openai-chat/recorded/aborted/false', 1],
      ]),
    );
    // The upstream was timed for every request that got an answer from it (the abandoned one never did).
    const upstream = new Map([
      ['none/200', 1],
      ['openai-chat/200', 2],
      ['openai-chat/500', 1],
    ]);
    expect(byLabels(samples, 'baton_gateway_upstream_headers_seconds_count', ['api', 'status'])).toEqual(upstream);
    expect(byLabels(samples, 'baton_gateway_upstream_duration_seconds_count', ['api', 'status'])).toEqual(upstream);
  });
});

describe('metrics: writers that fail or are cancelled, requests that are refused (a daemon on a real nats-server)', () => {
  let h: Harness;
  let server: MetricsServer;
  const daemonMetrics = new DaemonMetrics();
  beforeAll(async () => {
    // A close waits 100 ms for the running writer, then cancels it.
    h = await startHarness({ poolSize: 1, mode: 'scripted', daemon: { observer: daemonMetrics, waits: { closeMs: 100 } } });
    daemonMetrics.watch(h.daemon);
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, registries: [daemonMetrics.registry] });
  });
  afterAll(async () => {
    await server.close();
    await h.stop();
  });

  async function scrape(): Promise<PrometheusSample[]> {
    return parsePrometheusText(await (await fetch(server.url)).text()).samples;
  }

  it('shows a running writer and a queued request, then counts settlements by outcome and failure kind and refusals by code', { timeout: 60_000 }, async () => {
    const open = (): Promise<string> =>
      h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, checkpoint: { thresholds: ['90%'] } }).then((o) => o.session_id);

    // A writer whose model call never returns, and a second request queued behind it.
    const stalled = await open();
    await h.client.append(stalled, conversation(3, { prefix: 's' }));
    h.model.script({ stall: true });
    expect((await h.client.checkpoint(stalled)).result).toBe('started');
    expect((await h.client.checkpoint(stalled)).result).toBe('queued');
    await until(() => h.model.requests.length === 1);
    let samples = await scrape();
    expect(sampleSum(samples, 'baton_writers_running')).toBe(1);
    expect(sampleSum(samples, 'baton_writers_queued')).toBe(1);
    expect(sampleSum(samples, 'baton_writers_started_total', { trigger: 'manual' })).toBe(1);
    // Closing waits for it, then cancels it.
    const cancelled = h.client.waitForEvent(stalled, (e) => e.type === 'writer.settled', 20_000);
    await h.client.close(stalled);
    expect(await cancelled).toMatchObject({ outcome: 'cancelled' });

    // Writers refused by the provider: a bad key, then an overloaded provider.
    const refused = await open();
    await h.client.append(refused, conversation(3, { prefix: 'r' }));
    for (const error of [
      { status: 401, message: 'bad key' },
      { status: 503, message: 'overloaded' },
    ]) {
      h.model.script({ error });
      const settled = h.client.waitForEvent(refused, (e) => e.type === 'writer.settled', 20_000);
      expect((await h.client.checkpoint(refused)).result).toBe('started');
      await settled;
    }
    // Requests the daemon refuses.
    await expect(h.client.append('no-such-session', conversation(1))).rejects.toMatchObject({ code: 'not_found' });
    await expect(h.client.append(stalled, conversation(1, { prefix: 'late' }))).rejects.toMatchObject({ code: 'conflict' });
    await h.client.status(refused);

    samples = await scrape();
    const settled = [...h.log.streams('session/')].flatMap((s) => [...h.log.read(s)].filter((r) => r.type === 'writer.settled').map((r) => r.payload as { outcome: string; failure?: { kind: string } }));
    expect(byLabels(samples, 'baton_writers_settled_total', ['outcome', 'failure_kind'])).toEqual(tally(settled, (s) => `${s.outcome}/${s.failure?.kind ?? 'none'}`));
    expect(sampleSum(samples, 'baton_writers_settled_total', { outcome: 'cancelled', failure_kind: 'cancelled' })).toBe(1);
    expect(sampleSum(samples, 'baton_writers_settled_total', { outcome: 'failure', failure_kind: 'auth' })).toBe(1);
    expect(sampleSum(samples, 'baton_writers_settled_total', { outcome: 'failure', failure_kind: 'transient' })).toBe(1);
    expect(sampleSum(samples, 'baton_writers_running')).toBe(0);
    expect(sampleSum(samples, 'baton_writers_queued')).toBe(0);
    expect(sampleSum(samples, 'baton_requests_total', { verb: 'append', code: 'not_found' })).toBe(1);
    expect(sampleSum(samples, 'baton_requests_total', { verb: 'append', code: 'conflict' })).toBe(1);
    expect(sampleSum(samples, 'baton_requests_total', { verb: 'checkpoint', code: 'ok' })).toBe(4);
    expect(sampleSum(samples, 'baton_requests_total', { verb: 'close', code: 'ok' })).toBe(1);
    // A closed session has left memory; both are in the log.
    expect(sampleSum(samples, 'baton_sessions_logged')).toBe(2);
    expect(sampleSum(samples, 'baton_sessions_resident')).toBe(h.daemon.runtimeStatus().sessions);
  });
});
