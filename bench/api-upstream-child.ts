/**
 * The upstream of the `writers-api` and `instant-compaction` sections, in its own process: the loopback model
 * (`startLoopbackModel`) speaking OpenAI chat completions, the Responses API and Anthropic Messages, with its
 * simulated prompt caches (a prefix cache for the OpenAI APIs, a breakpoint cache for Anthropic). It shares no event
 * loop with the gateway, the daemon or the agents, as a real provider would not.
 *
 * Answers, in the request's own API:
 * - a daemon writer request (its task states a checkpoint path): the loopback's extractive writer;
 * - a request carrying `x-bench-reply` (base64url JSON of a `ReplySpec`): that reply. The agents plan their
 *   conversation (the tool call the model makes, the answer it gives) and say so with each call, so every API plays
 *   the same conversation;
 * - a request carrying `x-bench-summary`: the loopback's summarisation call — with no writer task in the request,
 *   its extractive model answers a summary of the conversation it was sent, in checkpoint form;
 * - anything else: a short text.
 * `x-bench-delay-ms` adds a delay before that one answer, on top of the configured latency.
 *
 * Messages: `ready { baseURL, url }`; `{ type: 'stats' }` → `stats { calls, promptTokens, cachedTokens, … }`;
 * `stopped`.
 */
import { extractiveStep, parseWriterPaths, startLoopbackModel, type RecordedRequest, type ScriptStep } from '@baton/testing';
import { childConfig, runChild, sendToParent, stopRequested, type ChildMessage } from './bench-process.ts';
import { DELAY_HEADER, REPLY_HEADER, SUMMARY_HEADER, decodeReply } from './planned-reply.ts';

export interface ApiUpstreamConfig {
  /** Delay before every answer (simulated model latency), ms. */
  readonly latencyMs: number;
}

/** Recorded requests kept by the loopback (it keeps every one, bodies included; a run sends thousands). */
const KEEP_REQUESTS = 64;

const headerText = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function isWriterRequest(req: RecordedRequest): boolean {
  return req.body.messages.some((m) => m.role === 'user' && typeof m.content === 'string' && parseWriterPaths(m.content) !== undefined);
}

function respond(req: RecordedRequest): ScriptStep {
  if (isWriterRequest(req)) return extractiveStep(req);
  let step: ScriptStep;
  const planned = headerText(req.headers[REPLY_HEADER]);
  if (headerText(req.headers[SUMMARY_HEADER]) !== undefined) step = extractiveStep(req);
  else if (planned !== undefined) step = { reply: decodeReply(planned) };
  else step = { reply: { content: 'Done.' } };
  const delay = Number(headerText(req.headers[DELAY_HEADER]) ?? 0);
  return delay > 0 ? { delayMs: delay, then: step } : step;
}

async function main(): Promise<void> {
  const config = childConfig<ApiUpstreamConfig>();
  const model = await startLoopbackModel({ mode: 'scripted', latencyMs: config.latencyMs });
  // The loopback's request list is live and only grows; trimming it keeps this process's heap (and its GC pauses)
  // flat over the run. Nothing here reads old entries.
  const requests = model.requests as RecordedRequest[];
  model.setResponder((req) => {
    if (requests.length > KEEP_REQUESTS * 2) requests.splice(0, requests.length - KEEP_REQUESTS);
    return respond(req);
  });
  process.on('message', (m: ChildMessage) => {
    if (m.type === 'stats') void sendToParent({ type: 'stats', ...model.stats() });
  });
  await sendToParent({ type: 'ready', baseURL: model.baseURL, url: model.url });
  await stopRequested();
  await model.close();
  await sendToParent({ type: 'stopped' });
  process.exit(0);
}

runChild(main);
