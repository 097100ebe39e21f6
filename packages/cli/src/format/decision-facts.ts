import { groupDigits, shortWriterId } from './numbers.ts';

/** Facts of one session effect, as recorded in a `decision` (plain data read back from the log). */
export function effectFacts(effect: Record<string, unknown>, sessionId: string): string | null {
  const w = (id: unknown): string => shortWriterId(String(id), sessionId);
  switch (effect['kind']) {
    case 'writer.start':
      return `✎ start writer ${w(effect['writerId'])} (${String(effect['mode'])} mode, covers up to ${String(effect['boundary'])}, trigger ${String(effect['trigger'])})`;
    case 'reply':
      return `reply to request ${String(effect['requestId']).slice(0, 8)}`;
    case 'publish': {
      const event = (effect['event'] ?? {}) as Record<string, unknown>;
      switch (event['type']) {
        case 'threshold.crossed':
          return `⟶ threshold ${groupDigits(Number(event['threshold']))} crossed at ${groupDigits(Number(event['tokens']))} tokens`;
        case 'writer.settled': {
          const failure = event['failure'] as { kind?: string } | undefined;
          const watermark = event['watermark'] ?? '–';
          return `✓ writer ${w(event['writer_id'])} settled: ${String(event['outcome'])}${failure?.kind !== undefined ? ` (${failure.kind})` : ''}, watermark ${String(watermark)}`;
        }
        case 'writer.queued':
          return 'writer queued';
        case 'status':
          return event['text'] === '' ? 'status idle' : `status "${String(event['text'])}"`;
        case 'writer.started':
          return null; // the writer.start effect next to it says the same
        default:
          return `publish ${String(event['type'])}`;
      }
    }
    default:
      return `effect ${String(effect['kind'])}`;
  }
}

/** Facts of a `decision` record: the input it answers, the resulting state, and its effects. */
export function decisionFacts(payload: Record<string, unknown>, sessionId: string): string {
  const state = (payload['state'] ?? {}) as Record<string, unknown>;
  const parts = [`for #${String(payload['for'])}: tokens ${groupDigits(Number(state['tokens'] ?? 0))}, writer ${String(state['writer'])}`];
  if (state['watermark'] !== null && state['watermark'] !== undefined) parts[0] += `, watermark ${String(state['watermark'])}`;
  if (state['overflow'] === true) parts[0] += ', OVERFLOW';
  if (state['closed'] === true) parts[0] += ', closed';
  const effects = Array.isArray(payload['effects']) ? (payload['effects'] as Record<string, unknown>[]) : [];
  for (const effect of effects) {
    const fact = effectFacts(effect, sessionId);
    if (fact !== null) parts.push(fact);
  }
  return parts.join('; ');
}
