/** Test kit: a `nats-server` launcher and the loopback OpenAI-compatible model server. */

// NATS server
export { startNatsServer, freePort, type NatsServerHandle } from './nats-server.ts';

// Loopback model: the server, its scripting and recording types, the writer-task parser tests script against, and the
// extractive writer a responder hands writer requests to (when it plays an agent's model itself)
export { startLoopbackModel } from './loopback-model/start-loopback-model.ts';
export type { LoopbackModel, LoopbackModelOptions, LoopbackStats, RecordedRequest, ScriptStep } from './loopback-model/types.ts';
export type { ChatMessage } from './loopback-model/chat-request.ts';
export { parseWriterPaths } from './loopback-model/extractive/writer-task.ts';
export { extractiveStep } from './loopback-model/extractive/extractive-writer.ts';
