/** `19200` → `19 200`: thousands separated by a space, as the demo and the timeline print token counts. */
export function groupDigits(n: number): string {
  const sign = n < 0 ? '-' : '';
  const digits = String(Math.trunc(Math.abs(n)));
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** `0.913` → `91%`. */
export function percent(ratio: number): string {
  return `${Math.round(ratio * 100)}%`;
}

/** Milliseconds as `+1.234s` relative to a start time. */
export function offset(at: number, start: number): string {
  return `+${((at - start) / 1000).toFixed(3)}s`;
}

/** A writer id shortened to its writer number when it belongs to the session (`<sid>-w2` → `…-w2`). */
export function shortWriterId(writerId: string, sessionId: string): string {
  return writerId.startsWith(`${sessionId}-`) ? `…${writerId.slice(sessionId.length)}` : writerId;
}

/** One-line excerpt of a text: whitespace collapsed, cut at `max` characters with an ellipsis. */
export function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
