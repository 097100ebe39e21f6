import { BatonGateway } from '@baton/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayRig, startRawUpstream, type GatewayRig, type RawUpstream } from './support/gateway-rig.ts';
import { rawRequest, type RawAnswer } from './support/raw-request.ts';

const KEY = 'sk-routes-0000000000';

/** A request sent with its target exactly as given (absolute-form, `//`, dot segments: nothing normalised on the way). */
function raw(port: number, method: string, target: string, body?: string): Promise<RawAnswer> {
  return rawRequest(port, method, target, { authorization: `Bearer ${KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body);
}

const CHAT = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f' } }] });

describe('gateway: only provider API paths are forwarded, and only to the upstream', () => {
  let rig: GatewayRig;
  /** Another server on the machine, which a forwarded request must never reach. */
  let victim: RawUpstream;
  /** An upstream named by its origin alone (`http://127.0.0.1:<port>`, as `https://api.anthropic.com` is). */
  let bare: RawUpstream;
  let bareGateway: BatonGateway;
  let passGateway: BatonGateway;
  beforeAll(async () => {
    rig = await startGatewayRig();
    victim = await startRawUpstream((_req, res) => {
      res.end('{"stolen":true}');
    });
    bare = await startRawUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[]}');
    });
    bareGateway = await BatonGateway.start({ upstream: bare.url.replace(/\/v1$/, ''), client: rig.client, ownerSecret: rig.ownerSecret });
    passGateway = await BatonGateway.start({ upstream: bare.url.replace(/\/v1$/, ''), client: rig.client, ownerSecret: rig.ownerSecret, passthrough: ['/v1/files'] });
  });
  afterAll(async () => {
    await passGateway.close();
    await bareGateway.close();
    await bare.close();
    await victim.close();
    await rig.stop();
  });

  const victimPort = (): number => Number(new URL(victim.url).port);
  /** The refused shapes: absolute-form targets, `//`, dot segments (plain and encoded), encoded slashes, backslashes. */
  const shapes = (): [string, string, string | undefined][] => {
    const v = `127.0.0.1:${victimPort()}`;
    return [
      ['GET', `http://${v}/x`, undefined],
      ['POST', `http://${v}/v1/chat/completions`, CHAT],
      ['GET', `//${v}/x`, undefined],
      ['GET', `//${v}/v1/models`, undefined],
      ['POST', `//${v}/v1/chat/completions`, CHAT],
      ['GET', `/s/task//${v}/x`, undefined],
      ['GET', '/v1/../../x', undefined],
      ['GET', '/v1/models/../../../x', undefined],
      ['POST', '/s/task/../v1/chat/completions', CHAT],
      ['GET', '/v1/./models', undefined],
      ['GET', '/v1/%2e%2e/%2E%2E/x', undefined],
      ['GET', '/v1/models/.%2e/x', undefined],
      ['GET', '/v1/models%2F..%2F..%2Fx', undefined],
      ['GET', `/%2F%2F${v}%2Fx`, undefined],
      ['GET', '/v1/models\\..\\x', undefined],
    ];
  };

  it.each(['with a path (/v1)', 'without a path'] as const)('refuses every shape with 400 before forwarding anything, upstream %s', async (kind) => {
    const gateway = kind === 'without a path' ? bareGateway : rig.gateway;
    const upstreamCalls = (): number => (kind === 'without a path' ? bare.requests.length : rig.tap.exchanges.length);
    const before = upstreamCalls();
    for (const [method, target, body] of shapes()) {
      expect(await raw(gateway.port, method, target, body), `${method} ${target}`).toEqual({ status: 400, code: 'invalid_request_target' });
    }
    expect(victim.requests).toHaveLength(0);
    expect(upstreamCalls()).toBe(before);
    // The same gateway forwards a provider API path, to its upstream and below its base path.
    expect((await raw(gateway.port, 'GET', '/v1/models')).status).toBe(200);
    expect(upstreamCalls()).toBe(before + 1);
    if (kind === 'without a path') expect(bare.requests.at(-1)?.path).toBe('/v1/models');
    else expect(rig.tap.exchanges.at(-1)?.path).toBe('/v1/models');
    expect(victim.requests).toHaveLength(0);
  });

  it('answers 404 with a Baton hint for another path or a bad session name, and forwards an explicit passthrough prefix', async () => {
    const before = bare.requests.length;
    expect(await raw(bareGateway.port, 'GET', '/v1/files')).toEqual({ status: 404, code: 'unknown_path' });
    expect(await raw(bareGateway.port, 'GET', '/admin')).toEqual({ status: 404, code: 'unknown_path' });
    expect(await raw(bareGateway.port, 'POST', '/s/bad.name/v1/chat/completions', CHAT)).toEqual({ status: 404, code: 'invalid_session_name' });
    expect(bare.requests.length).toBe(before);
    // With --passthrough /v1/files: that prefix (not a longer name) goes to the upstream, the rest stays refused.
    expect((await raw(passGateway.port, 'GET', '/v1/files/file-1?purpose=x')).status).toBe(200);
    expect(bare.requests.at(-1)?.path).toBe('/v1/files/file-1?purpose=x');
    expect(await raw(passGateway.port, 'GET', '/v1/filesystem')).toEqual({ status: 404, code: 'unknown_path' });
    expect(await raw(passGateway.port, 'GET', `//127.0.0.1:${victimPort()}/v1/files`)).toEqual({ status: 400, code: 'invalid_request_target' });
    expect(bare.requests.length).toBe(before + 1);
    expect(victim.requests).toHaveLength(0);
  });
});
