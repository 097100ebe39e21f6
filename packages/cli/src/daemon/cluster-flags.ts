import type { Durability } from '@baton/runtime';
import type { DaemonFlags } from '../flags/command-flags.ts';

/** `baton daemon`'s cluster flags as parsed (durations in milliseconds). */
export type ClusterFlags = Pick<DaemonFlags, 'cluster' | 'durability' | 'replicas' | 'lease' | 'forgetDead'>;

/** How the command line spelled the duration flags (`--lease` or the older `--lease-ms`), for the refusal below. */
export interface ClusterFlagSpelling {
  readonly lease?: string;
  readonly forgetDead?: string;
}

/** The cluster settings a daemon starts with (the connection is added by the command). */
export interface ClusterSettings {
  readonly durability?: Durability;
  readonly replicas?: number;
  readonly leaseMs?: number;
  readonly forgetDeadMs?: number;
}

/**
 * Cluster mode when `--cluster` is given, with the flags that tune it; null without it. A tuning flag without
 * `--cluster` is refused (a daemon that would silently run alone is worse than one that does not start).
 */
export function clusterSettingsOf(flags: ClusterFlags, spelled: ClusterFlagSpelling = {}): ClusterSettings | null {
  const tuned = (['durability', 'replicas', 'lease', 'forgetDead'] as const).filter((k) => flags[k] !== undefined);
  const flag = { durability: '--durability', replicas: '--replicas', lease: spelled.lease ?? '--lease', forgetDead: spelled.forgetDead ?? '--forget-dead' } as const;
  if (flags.cluster !== true) {
    if (tuned.length > 0) throw new Error(`${tuned.map((k) => flag[k]).join(', ')} needs --cluster`);
    return null;
  }
  return {
    ...(flags.durability !== undefined ? { durability: flags.durability } : {}),
    ...(flags.replicas !== undefined ? { replicas: flags.replicas } : {}),
    ...(flags.lease !== undefined ? { leaseMs: flags.lease } : {}),
    ...(flags.forgetDead !== undefined ? { forgetDeadMs: flags.forgetDead } : {}),
  };
}
