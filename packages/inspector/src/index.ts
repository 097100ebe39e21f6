/** Baton's web inspector: a read-only page over a data directory's event log and memory history. */
export { startInspector, type InspectorOptions, type InspectorServer } from './inspector-server.ts';
export { InspectorData } from './inspector-data.ts';
export { InspectorError } from './inspector-error.ts';
export { API_ROUTES, answerApi } from './inspector-api.ts';
export type { SessionView } from './session-view.ts';
export type { WriterRunView } from './writer-runs.ts';
export type { RebuildMark } from './rebuild-marks.ts';
export type { RebuiltContextView, ContextMessageView } from './rebuilt-context.ts';
export type { CheckpointVersionView, CheckpointDiffView, DiffLine } from './checkpoint-history.ts';
