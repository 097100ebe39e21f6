/**
 * A `BatonClient` that notes how long each `append` and `rebuild` takes, per session. Handed to the gateway by the
 * `gateway` section, it shows where a recorded call's time goes on the daemon's side without touching the gateway.
 */
import { BatonClient, type CallOptions } from '@baton/client';
import type { AppendReply, Message, RebuildReply, RebuildRequest } from '@baton/protocol';

export interface TimedOp {
  readonly op: 'append' | 'rebuild';
  readonly sessionId: string;
  /** `performance.now()` when the call was made. */
  readonly start: number;
  readonly ms: number;
}

export class TimedBatonClient extends BatonClient {
  readonly ops: TimedOp[] = [];

  override async append(sessionId: string, messages: readonly Message[], options?: CallOptions): Promise<AppendReply> {
    const start = performance.now();
    const reply = await super.append(sessionId, messages, options);
    this.ops.push({ op: 'append', sessionId, start, ms: performance.now() - start });
    return reply;
  }

  override async rebuild(sessionId: string, req: RebuildRequest, options?: CallOptions): Promise<RebuildReply> {
    const start = performance.now();
    const reply = await super.rebuild(sessionId, req, options);
    this.ops.push({ op: 'rebuild', sessionId, start, ms: performance.now() - start });
    return reply;
  }

  /** The ops noted from `from` on (an index into `ops`). */
  since(from: number): TimedOp[] {
    return this.ops.slice(from);
  }
}
