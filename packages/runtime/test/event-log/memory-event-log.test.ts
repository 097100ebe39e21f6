import { expect, it } from 'vitest';
import type { EventLog } from '@baton/log-schema';
import { MemoryEventLog } from '../../src/event-log/memory-event-log.ts';
import { describeEventLogContract, rec } from './event-log-contract.ts';

describeEventLogContract('MemoryEventLog', () => ({
  open: () => new MemoryEventLog(),
  durable: false,
  failNextCommit: (log: EventLog) => (log as MemoryEventLog).failNextCommit(),
  dispose: () => {},
}));

it('MemoryEventLog does not share stored values with the caller', async () => {
  const log = new MemoryEventLog();
  const payload = { list: [1, 2] };
  await log.append('s', [rec('t', payload)]);
  payload.list.push(3);
  const [first] = [...log.read('s')];
  (first?.payload as { list: number[] }).list.push(4);
  expect([...log.read('s')].map((r) => r.payload)).toEqual([{ list: [1, 2] }]);
  await log.close();
});
