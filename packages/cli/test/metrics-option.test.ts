import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { parsePrometheusText, sampleSum, startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { childEnv, completion, spawnBaton } from './helpers/run-baton.ts';

/*
 * `--metrics <host:port>` as an operator uses it: `baton daemon` and `baton up` print where `/metrics` is and serve
 * Prometheus text there while they run; a malformed address is refused before anything starts.
 */

let nats: NatsServerHandle;
let model: LoopbackModel;
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-metrics-cli-'));
  dirs.push(dir);
  return dir;
}

/** Resolves with what `pattern`'s first group matched in a child's stdout once every pattern matched, so lines printed together are all seen. */
function stdoutMatches(child: ChildProcess, patterns: readonly RegExp[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer | string): void => {
      out += d.toString();
      const found = patterns.map((p) => p.exec(out)?.[1]);
      if (found.every((f) => f !== undefined)) {
        child.stdout?.off('data', onData);
        resolve(found);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`baton exited with ${String(code)}; output: ${out}`)));
  });
}

async function scrape(url: string): Promise<ReturnType<typeof parsePrometheusText>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

beforeAll(async () => {
  nats = await startNatsServer();
  model = await startLoopbackModel({ mode: 'scripted' });
}, 30_000);

afterAll(async () => {
  await model?.close();
  await nats?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('--metrics', { timeout: 60_000 }, () => {
  it('baton daemon serves its metrics: the requests it answered, the messages it appended, its sessions, the event loop', async () => {
    const child = spawnBaton(
      ['daemon', '--nats', nats.url, '--data-dir', tempDir(), '--pool-size', '1', '--prefix', 'metricscli', '--log-level', 'warn', '--metrics', '127.0.0.1:0'],
      childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' }),
    );
    const done = completion(child);
    try {
      const [url = ''] = await stdoutMatches(child, [/^baton daemon metrics: (\S+)$/m, /^(baton daemon ready) /m]);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const transport = await NatsTransport.connect({ servers: nats.url });
      try {
        const client = new BatonClient(transport, { prefix: 'metricscli' });
        const opened = await client.open({ project_id: 'metrics', model: { id: 'gpt-4o', context_window: 100_000 } });
        await client.append(opened.session_id, [
          { id: 'm1', role: 'user', content: 'hello' },
          { id: 'm2', role: 'user', content: 'and again' },
        ]);
        await client.append(opened.session_id, [{ id: 'm2', role: 'user', content: 'and again' }]);
      } finally {
        await transport.close();
      }
      const { samples, types } = await scrape(url);
      expect(sampleSum(samples, 'baton_requests_total', { verb: 'open', code: 'ok' })).toBe(1);
      expect(sampleSum(samples, 'baton_requests_total', { verb: 'append', code: 'ok' })).toBe(2);
      expect(sampleSum(samples, 'baton_request_duration_seconds_count', { verb: 'append' })).toBe(2);
      expect(sampleSum(samples, 'baton_appended_messages_total')).toBe(2);
      expect(sampleSum(samples, 'baton_duplicate_messages_total')).toBe(1);
      expect(sampleSum(samples, 'baton_sessions_logged')).toBe(1);
      expect(sampleSum(samples, 'baton_sessions_resident')).toBe(1);
      expect(sampleSum(samples, 'baton_pool_threads')).toBe(1);
      expect(sampleSum(samples, 'baton_log_bytes')).toBeGreaterThan(0);
      expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
      // The daemon alone: no gateway metrics.
      expect(samples.some((s) => s.name.startsWith('baton_gateway_'))).toBe(false);
    } finally {
      child.kill('SIGTERM');
    }
    expect((await done).code).toBe(0);
  });

  it('baton up serves the daemon and the gateway on one endpoint', async () => {
    const child = spawnBaton(
      ['up', '--data-dir', tempDir(), '--port', '0', '--log-level', 'warn', '--metrics', '127.0.0.1:0'],
      childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'writer-key' }),
    );
    const done = completion(child);
    try {
      const [baseURL = '', url = ''] = await stdoutMatches(child, [/base URL: (http:\/\/\S+\/v1)/, /^metrics: (\S+)$/m]);
      model.script({ reply: { content: 'Hello from the model.' } });
      const agent = new OpenAI({ baseURL: baseURL.replace(/\/v1$/, '/s/metrics-up/v1'), apiKey: 'agent-key', maxRetries: 0 });
      await agent.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
      });
      const { samples, types } = await scrape(url);
      expect(sampleSum(samples, 'baton_gateway_requests_total', { api: 'openai-chat', route: 'recorded', status: '200', rewritten: 'false' })).toBe(1);
      expect(sampleSum(samples, 'baton_gateway_upstream_duration_seconds_count', { api: 'openai-chat', status: '200' })).toBe(1);
      // The daemon's families are served by the same endpoint.
      for (const name of ['baton_requests_total', 'baton_writers_settled_total', 'baton_sessions_resident', 'baton_rebuilds_total']) expect(types.has(name), name).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect((await done).code).toBe(0);
  });

  it('refuses an address that is not <host:port>', async () => {
    const io = captureIo();
    const code = await main(['node', 'baton', 'daemon', '--metrics', '9464'], io, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_API_KEY: 'k' });
    expect(code).not.toBe(0);
    expect(io.stderr.join('\n')).toMatch(/--metrics <host:port>.*expected <host:port>/);
  });
});
