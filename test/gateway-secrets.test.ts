import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OWNER_SECRET_FILE, ownerDigest, type GatewayLogger } from '@baton/gateway';
import { verifySession, type DaemonLogger } from '@baton/runtime';
import OpenAI from 'openai';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SdkAgent, agentResponder, isWriterRequest } from './support/gateway-agent.ts';
import { GATEWAY_TOOLS, readChunks, recordTypes, recordedMessages, startGatewayRig, until } from './support/gateway-rig.ts';

const SECRET = 'sk-test-SECRET-0123456789';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';

/**
 * The secret as it could sit in a file: as text (UTF-8 and UTF-16), in hex, and in base64 / base64url at each of the
 * three alignments it could have inside a longer encoded string (the characters that do not depend on its neighbours).
 */
function encodings(secret: string | Buffer): Buffer[] {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  const needles = [bytes, Buffer.from(bytes.toString('hex')), Buffer.from(bytes.toString('hex').toUpperCase())];
  if (typeof secret === 'string') needles.push(Buffer.from(secret, 'utf16le'));
  for (let pad = 0; pad < 3; pad++) {
    const padded = Buffer.concat([Buffer.alloc(pad, 0x41), bytes, Buffer.alloc(3, 0x41)]);
    for (const encoding of ['base64', 'base64url'] as const) {
      const text = padded.toString(encoding);
      // Skip the characters that mix in the padding on either side.
      const from = Math.ceil((pad * 4) / 3) + 1;
      const to = Math.floor(((pad + bytes.length) * 4) / 3) - 1;
      needles.push(Buffer.from(text.slice(from, to)));
    }
  }
  return needles;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('gateway: API keys are never stored', () => {
  // `daemon`: writers use the daemon's own key; `agent` (`baton up --writer-key agent`): the agent's, held in memory.
  it.each(['daemon', 'agent'] as const)('leaves no trace of the agent\'s key (nor its base64 or hex) in the data dir, the LMDB log, or any log line (writers use the %s key)', { timeout: 120_000 }, async (writerKey) => {
    const logDir = await mkdtemp(join(tmpdir(), 'baton-gateway-logs-'));
    const logFile = join(logDir, 'baton.ndjson');
    const logger = pino({ level: 'trace', base: { svc: 'baton' } }, pino.destination({ dest: logFile, sync: true }));
    const captured: unknown[] = [];
    const daemonLogger: DaemonLogger = (level, msg, data) => {
      captured.push({ level, msg, data });
      if (data === undefined) logger[level](msg);
      else logger[level](data, msg);
    };
    const gatewayLogger: GatewayLogger = (level, msg, data) => {
      captured.push({ source: 'gateway', level, msg, data });
      logger[level]({ gateway: true, ...data }, msg);
    };
    // Usable window 8 001 tokens (11 852 − 1 481 output − 2 370 compaction): the conversation overflows, a writer runs in fork mode, the context is rebuilt.
    const rig = await startGatewayRig({ daemonLogger, gatewayLogger, gateway: { contextWindows: { 'gpt-4o': 11_852 } }, agentWriterKeys: writerKey === 'agent' });
    rig.model.setResponder(agentResponder);
    const stored: string[] = [];
    try {
      const sid = 'secret-session';
      // A streamed conversation until its requests are rewritten onto the rebuilt context.
      const agent = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: SECRET, system: SYSTEM, stream: true });
      do {
        await agent.turn();
      } while (rig.model.requests.filter((r) => !isWriterRequest(r)).at(-1)?.body.messages.length === agent.sentLength && agent.history.length < 40);
      expect(recordTypes(rig.log, sid)).toContain('rebuild.rendered');
      expect(rig.model.requests.some(isWriterRequest)).toBe(true);
      // The agent's key went upstream with its calls; the writers' calls carried the daemon's key, or the agent's when
      // the gateway hands it over.
      expect(rig.model.requests.filter((r) => !isWriterRequest(r)).every((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
      const writersKey = writerKey === 'agent' ? SECRET : 'daemon-writer-key';
      expect(rig.model.requests.filter(isWriterRequest).map((r) => r.headers.authorization)).toEqual(rig.model.requests.filter(isWriterRequest).map(() => `Bearer ${writersKey}`));

      // A writer's call refused with the key it carried echoed back, as providers do: its settlement (in the event log,
      // the events and the log lines) names the failure but not an agent's key.
      await rig.daemon.sessions.waitWritersIdle(30_000);
      rig.model.script((req) => ({ error: { status: 401, message: `Incorrect API key provided: ${(req.headers.authorization ?? '').replace(/^Bearer /, '')}.` } }));
      const refused = rig.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
      expect((await rig.client.checkpoint(sid)).result).toBe('started');
      const settlement = await refused;
      expect(settlement).toMatchObject({ outcome: 'failure', failure: { kind: 'auth' } });
      const recorded = [...rig.log.read(`session/${sid}`)].filter((r) => r.type === 'writer.settled').at(-1);
      expect(JSON.stringify(recorded?.payload)).toContain(`Incorrect API key provided: ${writerKey === 'agent' ? '[redacted key]' : 'daemon-writer-key'}`);
      // The writer consumed what its log holds: a replay of the session and its writers finds no divergence.
      await rig.daemon.sessions.flushDecisions();
      expect(verifySession(rig.log, sid).divergence).toBeNull();

      // A fingerprinted session (no session in the URL), non-streamed, the key in x-api-key as well.
      const plain = new SdkAgent({ baseURL: rig.gateway.baseURL, apiKey: SECRET, system: SYSTEM, headers: { 'x-api-key': SECRET } });
      await plain.turn();
      // A side call (no tools).
      await plain.sdk.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'A title, please.' }] });
      // The upstream refuses the key and echoes it, as providers do: the agent gets that answer; nothing keeps it.
      rig.model.script({ error: { status: 401, message: `Incorrect API key provided: ${SECRET}. You can find your API key at https://example.com.`, code: 'invalid_api_key' } });
      agent.history.push({ role: 'user', content: 'One more thing.' });
      await expect(agent.call()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      // Another credential on the session: 403 from the gateway, without either key in it.
      const stranger = await fetch(`${rig.sessionURL(sid)}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}-other`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], tools: GATEWAY_TOOLS }),
      });
      const strangerText = Buffer.concat(await readChunks(stranger)).toString('utf8');
      expect(stranger.status).toBe(403);
      expect(strangerText).not.toContain(SECRET);
      // The upstream cannot be reached: the gateway's 502 names no key either.
      await rig.tap.close();
      await expect(agent.call()).rejects.toBeInstanceOf(OpenAI.APIError);
      await until(() => recordedMessages(rig.log, sid).length > 0);
    } finally {
      await rig.stop({
        beforeRemove: async () => {
          for (const file of await filesUnder(rig.dataDir)) stored.push(file);
          const needles = encodings(SECRET);
          for (const file of [...stored, logFile]) {
            const bytes = await readFile(file);
            for (const needle of needles) expect(bytes.indexOf(needle), `${needle.toString()} in ${file}`).toBe(-1);
          }
          // The gateway's ownership secret is in its own file (owner-only) and nowhere else: neither its bytes nor its
          // text, in any of the encodings; the log holds only digests made with it.
          const secretFile = join(rig.dataDir, OWNER_SECRET_FILE);
          expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
          const ownerSecretText = (await readFile(secretFile, 'utf8')).trim();
          expect(ownerSecretText).toMatch(/^[0-9a-f]{64}$/);
          const ownerNeedles = [...encodings(Buffer.from(ownerSecretText, 'hex')), ...encodings(ownerSecretText)];
          for (const file of [...stored.filter((f) => f !== secretFile), logFile]) {
            const bytes = await readFile(file);
            for (const needle of ownerNeedles) expect(bytes.indexOf(needle), `the ownership secret in ${file}`).toBe(-1);
          }
          // The binding itself is in the log (a digest under that secret), so the search above looked where it would be.
          const events = stored.filter((f) => f.includes(`${join('events', '')}`));
          const lmdbBytes = Buffer.concat(await Promise.all(events.map((f) => readFile(f))));
          expect(lmdbBytes.indexOf(Buffer.from(ownerDigest(Buffer.from(ownerSecretText, 'hex'), SECRET)))).toBeGreaterThanOrEqual(0);
          // The search does see what is in those files: the conversation is in the LMDB log, the logs have lines.
          const lmdb = Buffer.concat(await Promise.all(events.map((f) => readFile(f))));
          expect(lmdb.indexOf(Buffer.from('Please look at src/mod-1.ts'))).toBeGreaterThanOrEqual(0);
          const lines = (await readFile(logFile, 'utf8')).split('\n').filter((l) => l !== '');
          expect(lines.some((l) => l.includes('"writer.started"'))).toBe(true);
          expect(lines.some((l) => l.includes('rebuilt the context on overflow'))).toBe(true);
          const text = JSON.stringify(captured);
          for (const needle of [...needles, ...ownerNeedles]) expect(text.includes(needle.toString('utf8'))).toBe(false);
        },
      });
      await rm(logDir, { recursive: true, force: true });
    }
    expect(stored.some((f) => f.endsWith('.mdb'))).toBe(true);
    expect(stored.some((f) => f.endsWith('.md'))).toBe(true);
  });
});
