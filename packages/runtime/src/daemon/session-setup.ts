import {
  DEFAULT_TAIL_POLICY,
  ThresholdError,
  defaultReserved,
  scaledTailPolicy,
  resolveThresholds,
  usableWindow,
  type SessionInput,
  type TailPolicy,
} from '@baton/actors';
import { MEMORY_ID_PATTERN } from '@baton/memory-store';
import type { SessionSetup } from '@baton/log-schema';
import { DEFAULT_PROVIDER_API, ProtocolError, type OpenRequest } from '@baton/protocol';
import { resolveToolMap } from '../writer/tool-map.ts';

/**
 * What a new session is set up with, from its `open` request: the usable window and threshold ladder (bad overrides
 * are a `bad_request` naming `checkpoint.thresholds`), fork mode when a writing tool maps onto the agent's tools,
 * the switches, and the agent's own prefix parts kept for fork mode.
 */
export function sessionSetupFor(req: OpenRequest, sessionId: string, options: { checkpointDisabled?: boolean; tail?: TailPolicy }): SessionSetup {
  if (!MEMORY_ID_PATTERN.test(req.project_id)) {
    throw new ProtocolError('bad_request', 'invalid request: project_id must match [A-Za-z0-9_-]{1,128}', [{ path: 'project_id', message: 'must match [A-Za-z0-9_-]{1,128}' }]);
  }
  const usable = usableWindow({
    contextWindow: req.model.context_window,
    ...(req.model.max_output_tokens !== undefined ? { maxOutputTokens: req.model.max_output_tokens } : {}),
    ...(req.model.input_limit !== undefined ? { inputLimit: req.model.input_limit } : {}),
  });
  // A small window gets reserves in proportion (see `defaultReserved`); an agent's own value is used as it is.
  const reserved = req.checkpoint?.reserved ?? defaultReserved(usable);
  let thresholds: number[];
  try {
    thresholds = resolveThresholds(usable, {
      ...(req.checkpoint?.thresholds !== undefined ? { overrides: req.checkpoint.thresholds } : {}),
      reserved,
    });
  } catch (err) {
    if (err instanceof ThresholdError) throw new ProtocolError('bad_request', `invalid request: ${err.message}`, [{ path: 'checkpoint.thresholds', message: err.message }]);
    throw err;
  }
  const tools = resolveToolMap(req.writer_tools ?? null, req.tools ?? null);
  const forkWanted = req.checkpoint?.fork !== false;
  const input: SessionInput = {
    sessionId,
    projectId: req.project_id,
    usableWindow: usable,
    thresholds,
    maxAllowed: usable - reserved,
    checkpointEnabled: req.checkpoint?.enabled !== false && options.checkpointDisabled !== true,
    memoryWriteDisabled: req.memory?.disable_write === true,
    fork: forkWanted && tools.forkPossible,
    forkUnavailableReason: forkWanted ? tools.reason : null,
    tail: scaledTailPolicy(options.tail ?? DEFAULT_TAIL_POLICY, usable),
    contextWindow: req.model.input_limit ?? req.model.context_window,
  };
  const api = req.api ?? DEFAULT_PROVIDER_API;
  if (Array.isArray(req.system) && req.system.some((s) => typeof s !== 'string') && api === 'openai-chat') {
    const message = 'objects (Anthropic system blocks, Responses system items) need api anthropic-messages or openai-responses';
    throw new ProtocolError('bad_request', `invalid request: system: ${message}`, [{ path: 'system', message }]);
  }
  return {
    input,
    projectId: req.project_id,
    model: req.model.id,
    ...(api !== DEFAULT_PROVIDER_API ? { api } : {}),
    system: req.system ?? null,
    tools: req.tools ?? null,
    writerTools: req.writer_tools ?? null,
    ...(req.params !== undefined ? { params: req.params } : {}),
    ...(req.headers !== undefined ? { headers: req.headers } : {}),
  };
}

