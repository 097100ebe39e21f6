import { MessageChannel, Worker } from 'node:worker_threads';
import { ERROR_CODES, ErrorReplySchema, ProtocolError, decodeReply, encodeReply, type ErrorCode } from '@baton/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorReplyOf } from '../../src/daemon/daemon.ts';
import { PortRpc, type PortSide } from '../../src/host/port-rpc.ts';

interface RaiseSide extends PortSide {
  readonly calls: { readonly raise: { request: { code: string; plain: boolean }; reply: never } };
  readonly notes: Record<string, never>;
}
interface NoSide extends PortSide {
  readonly calls: Record<string, never>;
  readonly notes: Record<string, never>;
}

/** What a client sees for an error raised in a worker: the daemon's reply path, encoded and decoded as on the wire. */
async function wireErrorOf(rpc: PortRpc<NoSide, RaiseSide>, code: string, plain: boolean): Promise<{ code: ErrorCode; message: string; details?: unknown }> {
  const err = await rpc.call('raise', { code, plain }).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  const reply = errorReplyOf(err);
  const viaMsgpack = ErrorReplySchema.parse(decodeReply(encodeReply(reply, 'msgpack'), 'msgpack'));
  const viaJson = ErrorReplySchema.parse(decodeReply(encodeReply(reply, 'json'), 'json'));
  expect(viaMsgpack).toEqual(viaJson);
  return viaJson.error;
}

describe('error codes survive the thread hop', () => {
  let worker: Worker;
  let rpc: PortRpc<NoSide, RaiseSide>;
  beforeAll(() => {
    const { port1, port2 } = new MessageChannel();
    worker = new Worker(new URL('./raise-worker.mjs', import.meta.url), { workerData: { port: port2 }, transferList: [port2] });
    rpc = new PortRpc<NoSide, RaiseSide>(port1, { calls: {}, notes: {} });
  });
  afterAll(async () => {
    rpc.close(new Error('test over'));
    await worker.terminate();
  });

  it.each([...ERROR_CODES])('%s raised inside a worker reaches the wire unchanged, with its details', async (code) => {
    const error = await wireErrorOf(rpc, code, false);
    expect(error).toEqual({ code, message: `raised ${code} in a worker`, details: { code, from: 'worker' } });
  });

  it.each([...ERROR_CODES])('%s on a plain error keeps its code too', async (code) => {
    expect((await wireErrorOf(rpc, code, true)).code).toBe(code);
  });

  it("keeps the thrown error's name and worker-side stack as the cause", async () => {
    for (const plain of [false, true]) {
      const err = await rpc.call('raise', { code: 'conflict', plain }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProtocolError);
      const cause = (err as ProtocolError).cause as Error;
      expect(cause).toBeInstanceOf(Error);
      expect(cause.name).toBe(plain ? 'Error' : 'ProtocolError');
      // the stack is the worker's: it names the worker script's frame
      expect(cause.stack).toContain('raise-worker.mjs');
      expect(cause.stack?.split('\n')[0]).toBe(`${cause.name}: ${plain ? 'plain conflict' : 'raised conflict in a worker'}`);
    }
  });

  it('a code that is not a protocol code becomes internal, with the message kept', async () => {
    expect(await wireErrorOf(rpc, 'ENOENT', true)).toEqual({ code: 'internal', message: 'plain ENOENT' });
  });
});
