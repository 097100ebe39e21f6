/**
 * The upstream of the `gateway` section, in its own process: the loopback OpenAI-compatible model
 * (`startLoopbackModel`) playing a coding agent's model. It shares no event loop with the gateway or with the agents'
 * HTTP client, as a real provider would not.
 *
 * Answers: a daemon writer request (its task states a checkpoint path) goes to the loopback's extractive writer; an
 * agent request ending in a user message gets a `read_file` call, any other agent request a short text. Tool-call ids
 * depend only on the conversation (`call_<turn>`), so the same history sent through the gateway and sent directly
 * gets the same reply, byte for byte apart from the completion id and timestamp.
 *
 * A request carrying `x-bench-call: <tag>` keeps its raw body under that tag, so the parent can see what the gateway
 * forwarded (`{ type: 'body', tag }` → `{ type: 'body', rawBody }`). Messages: `ready { baseURL }`, `stopped`.
 */
import { extractiveStep, parseWriterPaths, startLoopbackModel, type RecordedRequest, type ScriptStep } from '@baton/testing';
import { childConfig, runChild, sendToParent, stopRequested, type ChildMessage } from './bench-process.ts';

export interface GatewayUpstreamConfig {
  /** Delay before every answer (simulated model latency), ms. */
  readonly latencyMs: number;
}

/** Recorded requests kept by the loopback (it keeps every one, bodies included; a run sends thousands). */
const KEEP_REQUESTS = 64;
/** Tagged bodies kept. */
const KEEP_TAGGED = 16;

function isWriterRequest(req: RecordedRequest): boolean {
  return req.body.messages.some((m) => m.role === 'user' && typeof m.content === 'string' && parseWriterPaths(m.content) !== undefined);
}

function respond(req: RecordedRequest): ScriptStep {
  if (isWriterRequest(req)) return extractiveStep(req);
  const turn = req.body.messages.filter((m) => m.role === 'user').length;
  if (req.body.messages.at(-1)?.role === 'user') {
    return { reply: { tool_calls: [{ id: `call_${turn}`, name: 'read_file', arguments: { file_path: `src/mod-${turn}.ts` } }] } };
  }
  return { reply: { content: `Read src/mod-${turn}.ts: the reducer double-counts refunds; I fixed it and kept the API on port 8080.` } };
}

async function main(): Promise<void> {
  const config = childConfig<GatewayUpstreamConfig>();
  const model = await startLoopbackModel({ mode: 'scripted', latencyMs: config.latencyMs });
  const tagged = new Map<string, string>();
  // The loopback's request list is live and only grows; trimming it keeps this process's heap (and its GC pauses)
  // flat over the run. Nothing here reads old entries.
  const requests = model.requests as RecordedRequest[];
  model.setResponder((req) => {
    if (requests.length > KEEP_REQUESTS * 2) requests.splice(0, requests.length - KEEP_REQUESTS);
    const tag = req.headers['x-bench-call'];
    if (typeof tag === 'string') {
      tagged.set(tag, req.rawBody);
      if (tagged.size > KEEP_TAGGED) tagged.delete(tagged.keys().next().value as string);
    }
    return respond(req);
  });
  process.on('message', (m: ChildMessage) => {
    if (m.type === 'body') void sendToParent({ type: 'body', rawBody: tagged.get(String(m['tag'])) ?? null });
  });
  await sendToParent({ type: 'ready', baseURL: model.baseURL });
  await stopRequested();
  await model.close();
  await sendToParent({ type: 'stopped' });
  process.exit(0);
}

runChild(main);
