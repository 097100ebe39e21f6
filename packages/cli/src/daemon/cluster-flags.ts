import type { Durability } from '@baton/runtime';

/** `baton daemon`'s cluster flags as parsed. */
export interface ClusterFlags {
  readonly cluster?: boolean;
  readonly durability?: Durability;
  readonly replicas?: number;
  readonly leaseMs?: number;
  readonly forgetDeadMs?: number;
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
export function clusterSettingsOf(flags: ClusterFlags): ClusterSettings | null {
  const tuned = (['durability', 'replicas', 'leaseMs', 'forgetDeadMs'] as const).filter((k) => flags[k] !== undefined);
  const flag = { durability: '--durability', replicas: '--replicas', leaseMs: '--lease-ms', forgetDeadMs: '--forget-dead-ms' } as const;
  if (flags.cluster !== true) {
    if (tuned.length > 0) throw new Error(`${tuned.map((k) => flag[k]).join(', ')} needs --cluster`);
    return null;
  }
  return {
    ...(flags.durability !== undefined ? { durability: flags.durability } : {}),
    ...(flags.replicas !== undefined ? { replicas: flags.replicas } : {}),
    ...(flags.leaseMs !== undefined ? { leaseMs: flags.leaseMs } : {}),
    ...(flags.forgetDeadMs !== undefined ? { forgetDeadMs: flags.forgetDeadMs } : {}),
  };
}
