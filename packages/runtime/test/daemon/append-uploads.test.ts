import { ProtocolError, type AppendReply, type Message } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { AppendUploads } from '../../src/daemon/append-uploads.ts';

/*
 * An append too large for one message, reassembled from its parts: in any order, appended once with the last part,
 * and bad parts refused with a stable code without appending anything.
 */

const STATE = { tokens: 0, usable_window: 1, next_threshold: null, watermark: null, writer: 'idle', overflow: false } as const;

function partsOf(body: unknown, size: number): string[] {
  const text = Buffer.from(JSON.stringify(body), 'utf8');
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.subarray(at, at + size).toString('base64'));
  return parts;
}

describe('AppendUploads', () => {
  it('appends the reassembled request once, with whichever part comes last', async () => {
    const uploads = new AppendUploads();
    const appended: (readonly Message[])[] = [];
    const append = (messages: readonly Message[]): Promise<Omit<AppendReply, 'ok'>> => {
      appended.push(messages);
      return Promise.resolve({ accepted: messages.length, duplicates: 0, state: STATE });
    };
    const message: Message = { id: 'm1', role: 'tool', content: 'x'.repeat(10_000), tool_call_id: 'c1' };
    const parts = partsOf({ messages: [message] }, 999);
    const order = [...parts.keys()].reverse();
    const replies = [];
    for (const index of order) replies.push(await uploads.part('s1', { upload: 'upload-0001', index, count: parts.length, data: parts[index] ?? '' }, append));
    expect(replies.slice(0, -1).map((r) => r.append)).toEqual(parts.slice(1).map(() => undefined));
    expect(replies.at(-1)).toEqual({ received: parts.length, append: { accepted: 1, duplicates: 0, state: STATE } });
    expect(appended).toEqual([[message]]);
  });

  it('refuses a part of another count, a body that is not JSON and one that is not an append request, appending nothing', async () => {
    const uploads = new AppendUploads();
    let appends = 0;
    const append = (): Promise<Omit<AppendReply, 'ok'>> => {
      appends++;
      return Promise.resolve({ accepted: 0, duplicates: 0, state: STATE });
    };
    await uploads.part('s1', { upload: 'upload-0002', index: 0, count: 2, data: Buffer.from('{"messa').toString('base64') }, append);
    await expect(uploads.part('s1', { upload: 'upload-0002', index: 1, count: 3, data: '' }, append)).rejects.toMatchObject({ code: 'bad_request' });
    const notJson = uploads.part('s1', { upload: 'upload-0003', index: 0, count: 1, data: Buffer.from('{"messages":[').toString('base64') }, append);
    await expect(notJson).rejects.toBeInstanceOf(ProtocolError);
    await expect(notJson).rejects.toMatchObject({ code: 'bad_request' });
    const notAppend = uploads.part('s1', { upload: 'upload-0004', index: 0, count: 1, data: Buffer.from('{"messages":[{"role":"nobody"}]}').toString('base64') }, append);
    await expect(notAppend).rejects.toMatchObject({ code: 'bad_request' });
    expect(appends).toBe(0);
  });
});
