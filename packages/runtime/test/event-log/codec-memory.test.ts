import { describe, expect, it } from 'vitest';
import { createRecordPackr, encodeInputs } from '../../src/event-log/codec.ts';

describe('event-log codec memory after a huge record', () => {
  it('packs the next small record into a small buffer again, so the huge one can be freed once written', () => {
    const packr = createRecordPackr();
    const [huge] = encodeInputs(packr, 'session/s1', [{ type: 'messages.appended', at: 1, payload: { messages: [{ id: 'm1', role: 'tool', content: 'x'.repeat(8 * 1024 * 1024) }] } }]);
    expect(huge?.length).toBeGreaterThan(8 * 1024 * 1024);
    const [small] = encodeInputs(packr, 'session/s1', [{ type: 'writer.started', at: 2, payload: { writerId: 'w1' } }]);
    // msgpackr returns a view of the buffer it packed into: not the one the huge record needed.
    expect(small?.buffer.byteLength).toBeLessThan(1024 * 1024);
    expect(packr.unpack(small as Uint8Array)).toMatchObject({ type: 'writer.started', payload: { writerId: 'w1' } });
  });
});
