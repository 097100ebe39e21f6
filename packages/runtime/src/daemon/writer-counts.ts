/** Writer figures over the resident sessions' summaries (as their actors last reported them). */
import type { LoadedSession } from './loaded-session.ts';

/** Sessions whose writer slot is busy (`running`), and of those, ones with a request waiting behind it (`queued`). */
export function writerCountsOf(sessions: Iterable<LoadedSession>): { running: number; queued: number } {
  let running = 0;
  let queued = 0;
  for (const s of sessions) {
    if (s.summary.writer !== 'idle') running++;
    if (s.summary.writer === 'running+pending') queued++;
  }
  return { running, queued };
}

/** The writer each session runs now. */
export function runningWritersOf(sessions: Iterable<LoadedSession>): { sessionId: string; writerId: string }[] {
  const out: { sessionId: string; writerId: string }[] = [];
  for (const s of sessions) if (s.summary.writerId !== null) out.push({ sessionId: s.sessionId, writerId: s.summary.writerId });
  return out;
}
