/**
 * How much memory a huge request body leaves behind in `baton up`'s process (the gateway and the daemon it records
 * into): RSS and heap before, right after, and after a GC and a pause, for a few 50 MB bodies in a row. Not a
 * section of `npm run bench` (one process's RSS, no baseline to compare with in the same run): a script to run by
 * hand when the gateway's handling of bodies changes.
 *
 *   node --expose-gc --conditions=@baton/source --import tsx bench/body-memory.ts [MB] [bodies] [relayed|recorded]
 *
 * The agent is `curl` (its copy of the body is not this process's), the upstream a plain server that reads what it
 * is sent and answers a short completion. Recorded calls (the agent's tools in the body) and relayed ones (none).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryBus, BatonClient } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { AGENT_TOOLS } from './agent-conversation.ts';

const run = promisify(execFile);
const MB = Number(process.argv[2] ?? 50);
const BODIES = Number(process.argv[3] ?? 3);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const mib = (bytes: number): number => Math.round(bytes / 1048576);
/** RSS split into anonymous memory and mapped files (LMDB's data file, read through its map, counts in the latter). */
function memory(): { rss: number; anon: number; file: number; heap: number; external: number } {
  const m = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: mib(m.rss), anon: mib(kb('RssAnon')), file: mib(kb('RssFile') + kb('RssShmem')), heap: mib(m.heapUsed), external: mib(m.external) };
}
async function settled(): Promise<ReturnType<typeof memory>> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await sleep(1500);
  }
  return memory();
}

const completion = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
});
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion);
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;

const dataDir = await mkdtemp(join(tmpdir(), 'baton-body-memory-'));
const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
const bus = new MemoryBus();
const daemonTransport = bus.connect();
const clientTransport = bus.connect();
const daemon = BatonDaemon.start({ transport: daemonTransport, log, dataDir, poolSize: 2, model: { baseURL: upstreamURL, apiKey: 'k', maxRetries: 0, timeoutMs: 60_000 } });
const gateway = await BatonGateway.start({
  upstream: upstreamURL,
  client: new BatonClient(clientTransport),
  contextWindows: { 'gpt-4o': 100_000_000 },
  logger: (level, msg, data) => {
    if (level === 'warn' || level === 'error') console.log(level, msg, JSON.stringify(data));
  },
});
const origin = gateway.baseURL.replace(/\/v1$/, '');

async function post(sid: string, file: string): Promise<string> {
  const answer = join(dataDir, 'answer.txt');
  const headers = ['-H', 'content-type: application/json', '-H', 'authorization: Bearer sk-body-memory'];
  const { stdout } = await run('curl', ['-s', '-o', answer, '-w', '%{http_code}', ...headers, '--data-binary', `@${file}`, `${origin}/s/${sid}/v1/chat/completions`]);
  if (stdout !== '200') console.log(await readFile(answer, 'utf8'));
  return stdout;
}

try {
  const small = join(dataDir, 'small.json');
  await writeFile(small, JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tools: AGENT_TOOLS }));
  for (let i = 0; i < 20; i++) await post(`warm-${i}`, small);
  const base = await settled();
  console.log(`baseline (after 20 small calls): rss ${base.rss} MiB (anonymous ${base.anon}, mapped files ${base.file}), heap ${base.heap} MiB, external ${base.external} MiB`);
  const kinds: ('recorded' | 'relayed')[] = process.argv[4] === 'recorded' || process.argv[4] === 'relayed' ? [process.argv[4]] : ['relayed', 'recorded'];
  for (const kind of kinds) {
    for (let i = 0; i < BODIES; i++) {
      const file = join(dataDir, `big-${kind}-${i}.json`);
      const text = 'x'.repeat(MB * 1048576);
      await writeFile(file, JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `${i} ${text}` }], ...(kind === 'recorded' ? { tools: AGENT_TOOLS } : {}) }));
      const status = await post(`big-${kind}-${i}`, file);
      const now = memory();
      await rm(file);
      const after = await settled();
      console.log(
        `${kind} body ${i + 1} (${MB} MB, status ${status}): right after rss ${now.rss} MiB; after GC rss ${after.rss} MiB (+${after.rss - base.rss}): anonymous ${after.anon} MiB (+${after.anon - base.anon}), mapped files ${after.file} MiB (+${after.file - base.file}); heap ${after.heap} MiB, external ${after.external} MiB`,
      );
    }
  }
} finally {
  await gateway.close();
  await daemon.stop();
  await clientTransport.close();
  await daemonTransport.close();
  await log.close();
  upstream.close();
  await rm(dataDir, { recursive: true, force: true });
}
