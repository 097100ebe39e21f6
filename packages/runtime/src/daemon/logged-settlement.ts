import { writerStream, type EventLog, type SessionInputRecord } from '@baton/log-schema';
import { refoldWriter } from '../replay/refold-writer.ts';

/**
 * The `writer.settled` input for writer `writerId` of a session loaded after a restart: the outcome its own stream
 * settled with, when the stream got that far before the previous process ended (its last records were durable, the
 * session's settlement was not yet), so recovery agrees with what replaying the stream gives; otherwise `cancelled`
 * (the writer died with the process).
 */
export function restartSettlement(log: EventLog, writerId: string): SessionInputRecord {
  const stream = writerStream(writerId);
  const refold = refoldWriter(writerId, stream, [...log.read(stream)]);
  const effect = refold.divergence === null ? refold.settle?.effect : undefined;
  if (effect !== undefined) {
    return {
      type: 'writer.settled',
      payload: {
        writerId,
        outcome: effect.outcome,
        ...(effect.failure !== null ? { failure: effect.failure } : {}),
        ...(effect.reason !== null ? { reason: effect.reason } : {}),
      },
    };
  }
  return {
    type: 'writer.settled',
    payload: { writerId, outcome: 'cancelled', failure: { kind: 'cancelled', retryable: true, message: 'daemon restarted while the writer ran' }, reason: 'daemon restarted' },
  };
}
