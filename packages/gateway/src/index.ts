/** Baton's gateway: agents point their model base URL at it and get checkpoints and rebuilds without code changes. */
export { BatonGateway, type GatewayOptions, type GatewayLogger } from './gateway.ts';
export { contextWindowOf } from './model-table.ts';
export { GatewayMetrics, type GatewayRoute, type RequestTrack } from './gateway-metrics.ts';
export { REBUILT_CONTEXT_MODES, type RebuiltContextMode } from './rebuilt-context-mode.ts';
export { loadOwnerSecret, ownerDigest, OWNER_SECRET_FILE } from './owner-secret.ts';
