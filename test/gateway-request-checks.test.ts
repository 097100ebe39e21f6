import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentResponder } from './support/gateway-agent.ts';
import { rawRequest, type RawAnswer } from './support/raw-request.ts';
import { GATEWAY_TOOLS, startGatewayRig, type GatewayRig } from './support/gateway-rig.ts';

const KEY = 'sk-request-checks-000000';
const CHAT = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Please look at src/a.ts.' }], tools: GATEWAY_TOOLS });

/** A POST of `body` to the gateway with exactly these headers (a browser's, a form's): status and error code. */
function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  return rawRequest(port, 'POST', path, { authorization: `Bearer ${KEY}`, ...headers }, body);
}

describe('gateway: what a loopback gateway answers before anything is forwarded', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig();
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  const json = { 'content-type': 'application/json' };

  it('refuses a Host that is not its loopback name and a page of another site, and answers a local one', async () => {
    const port = rig.gateway.port;
    const before = rig.tap.exchanges.length;
    // DNS rebinding: a name of the attacker's that resolves to 127.0.0.1.
    expect(await post(port, '/s/hosts/v1/chat/completions', { ...json, host: `evil.example:${port}` }, CHAT)).toEqual({ status: 403, code: 'forbidden_host' });
    // A page of another site posting from the user's browser (a text/plain form needs no preflight).
    expect(await post(port, '/s/hosts/v1/chat/completions', { ...json, origin: 'https://evil.example' }, CHAT)).toEqual({ status: 403, code: 'forbidden_host' });
    expect(await post(port, '/v1/models', { host: `evil.example:${port}` }, '')).toEqual({ status: 403, code: 'forbidden_host' });
    expect(rig.tap.exchanges).toHaveLength(before);
    // The agent's own SDK (no Origin), a page on this machine, and localhost by name all go through.
    expect((await post(port, '/s/hosts/v1/chat/completions', json, CHAT)).status).toBe(200);
    expect((await post(port, '/s/hosts-2/v1/chat/completions', { ...json, origin: 'http://localhost:5173' }, CHAT)).status).toBe(200);
    expect((await post(port, '/s/hosts-3/v1/chat/completions', { ...json, host: `localhost:${port}` }, CHAT)).status).toBe(200);
    expect(rig.tap.exchanges).toHaveLength(before + 3);
  });

  it('answers 415 to a body that is not declared JSON, and reads JSON with parameters', async () => {
    const port = rig.gateway.port;
    const before = rig.tap.exchanges.length;
    expect(await post(port, '/s/types/v1/chat/completions', { 'content-type': 'text/plain' }, CHAT)).toEqual({ status: 415, code: 'unsupported_media_type' });
    expect(await post(port, '/s/types/v1/chat/completions', { 'content-type': 'application/x-www-form-urlencoded' }, CHAT)).toEqual({ status: 415, code: 'unsupported_media_type' });
    expect(await post(port, '/s/types/v1/responses', {}, CHAT)).toEqual({ status: 415, code: 'unsupported_media_type' });
    expect(rig.tap.exchanges).toHaveLength(before);
    expect((await post(port, '/s/types/v1/chat/completions', { 'content-type': 'application/json; charset=utf-8' }, CHAT)).status).toBe(200);
  });

  it('takes a body sent after Expect: 100-continue (as curl sends a large one) and does not forward the header', async () => {
    const port = rig.gateway.port;
    const before = rig.tap.exchanges.length;
    expect((await post(port, '/s/expect/v1/chat/completions', { ...json, expect: '100-continue' }, CHAT)).status).toBe(200);
    expect(rig.tap.exchanges).toHaveLength(before + 1);
    expect(rig.tap.exchanges.at(-1)?.headers['expect']).toBeUndefined();
  });
});
