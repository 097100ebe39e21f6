/** Test kit: a `nats-server` launcher and the loopback OpenAI-compatible model server. */

// NATS server
export { startNatsServer, freePort, type NatsServerHandle } from './nats-server.ts';

// Loopback model: the server, its scripting and recording types, and the writer-task parser tests script against
export { startLoopbackModel } from './loopback-model/start-loopback-model.ts';
export type { LoopbackModel, LoopbackModelOptions, LoopbackStats, RecordedRequest, ScriptStep } from './loopback-model/types.ts';
export type { ChatMessage } from './loopback-model/chat-request.ts';
export { parseWriterPaths } from './loopback-model/extractive/writer-task.ts';
