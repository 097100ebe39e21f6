import type { EventLog } from '@baton/log-schema';
import { MAX_SESSIONS_PAGE, type RuntimeSession } from '@baton/protocol';
import { listSessions } from '@baton/runtime';

const NOTHING_LIVE = { resident: new Map(), quarantined: new Map() } as const;

/**
 * Every session in the log, ascending by id, as `baton sessions` lists one that is not in memory: its setup, the
 * state its newest decision recorded, whether it is closed and how its last writer settled.
 */
export function sessionRows(log: EventLog): RuntimeSession[] {
  const rows: RuntimeSession[] = [];
  let after: string | undefined;
  for (;;) {
    const page = listSessions(log, NOTHING_LIVE, { limit: MAX_SESSIONS_PAGE, ...(after !== undefined ? { after } : {}) });
    rows.push(...page.sessions);
    if (page.next === undefined) return rows;
    after = page.next;
  }
}
