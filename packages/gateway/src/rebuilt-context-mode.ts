/**
 * What the rebuilt contexts an agent gets may refer to: `local`, the daemon's memory files by path (the agent reads
 * them with its own tools); `remote`, nothing outside the request (an agent on another machine than the daemon);
 * `auto`, `local` for an agent that connects over loopback and `remote` for any other.
 */
export type RebuiltContextMode = 'auto' | 'local' | 'remote';

export const REBUILT_CONTEXT_MODES: readonly RebuiltContextMode[] = ['auto', 'local', 'remote'];

/** Whether an agent connecting from `remoteAddress` gets self-contained rebuilt contexts under `mode`. */
export function isSelfContained(mode: RebuiltContextMode, remoteAddress: string | undefined): boolean {
  if (mode !== 'auto') return mode === 'remote';
  return remoteAddress === undefined || !isLoopbackAddress(remoteAddress);
}

/** Whether a peer address is this machine's loopback (IPv4 127/8, IPv6 ::1, or IPv4 loopback mapped into IPv6). */
function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}
