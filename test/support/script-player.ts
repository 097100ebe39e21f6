import { extractiveStep, type RecordedRequest, type ScriptStep } from '@baton/testing';

/**
 * The loopback model playing a real agent's model over a scripted task, in whatever API the agent speaks, while the
 * daemon's checkpoint writers (their own keys) get the loopback's extractive writer. Steps are found from what the
 * agent sent, never counted: a request carrying the result of call `<prefix>NN` asks for step NN + 1; one whose last
 * message ends with a prompt asks for that prompt's first step.
 */

/** One step of the agent's model: a call of one of the agent's own tools, or the answer that ends a prompt. */
export type ScriptAction =
  | { readonly tool: string; readonly args: Readonly<Record<string, unknown>> | string; readonly kind?: 'custom' }
  | { readonly text: string };

export interface ScriptPlayerOptions {
  /** Keys the daemon's writers call with: their requests get the extractive writer. */
  readonly writerKeys: readonly string[];
  /** Waits until the session's writers are idle (the agent's model is slower than a writer: see below). */
  readonly writersIdle: () => Promise<void>;
  readonly prompts: readonly string[];
  /** The step each prompt starts at. */
  readonly start: readonly number[];
  readonly script: readonly ScriptAction[];
  /** Call ids are `<idPrefix>NN` (NN the step, two digits). */
  readonly idPrefix: string;
}

/** The player: the steps the agent asked for (in order), the calls it made that were not the task's, and its answer function. */
export interface ScriptPlayer {
  readonly steps: readonly number[];
  /** Requests of the agent without tools (title, topic or summary calls): answered with a short text. */
  readonly sideCalls: readonly RecordedRequest[];
  /** The first request of the agent's task (its first turn), once it came. */
  readonly first: () => RecordedRequest | undefined;
  respond(request: RecordedRequest): Promise<ScriptStep>;
}

/** The credential a loopback request carried: a Bearer token (OpenAI SDKs) or `x-api-key` (Anthropic SDKs). */
export function keyOf(r: RecordedRequest): string {
  const bearer = String(r.headers.authorization ?? '');
  if (bearer.startsWith('Bearer ')) return bearer.slice(7);
  return String(r.headers['x-api-key'] ?? '');
}

export const stepId = (prefix: string, step: number): string => `${prefix}${String(step).padStart(2, '0')}`;

/** The model's answer at `step` of `script`. */
export function actionReply(script: readonly ScriptAction[], step: number, idPrefix: string): ScriptStep {
  const action = script[step];
  if (action === undefined) return { error: { status: 500, message: `the script has no step ${step}` } };
  if ('text' in action) return { reply: { content: action.text, finish_reason: 'stop' } };
  return { reply: { tool_calls: [{ id: stepId(idPrefix, step), name: action.tool, arguments: action.args, ...(action.kind !== undefined ? { kind: action.kind } : {}) }] } };
}

export function scriptPlayer(options: ScriptPlayerOptions): ScriptPlayer {
  const steps: number[] = [];
  const sideCalls: RecordedRequest[] = [];
  let first: RecordedRequest | undefined;
  let lastStep = -1;
  const ownCall = new RegExp(`^${options.idPrefix}(\\d+)$`);
  const stepOf = (request: RecordedRequest): number => {
    const last = request.conversation.items.at(-1);
    const result = ownCall.exec(last?.toolResults.at(-1)?.callId ?? '');
    if (result !== null) return Number(result[1]) + 1;
    if (last?.role === 'user') {
      const prompt = options.prompts.findIndex((p) => last.text.endsWith(p));
      if (prompt >= 0) return options.start[prompt] as number;
    }
    return lastStep + 1;
  };
  return {
    steps,
    sideCalls,
    first: () => first,
    async respond(request) {
      if (options.writerKeys.includes(keyOf(request))) return extractiveStep(request);
      if (request.conversation.tools.length === 0) {
        sideCalls.push(request);
        return { reply: { content: 'Scripted task', finish_reason: 'stop' } };
      }
      // A writer that started runs to its end before the agent's next answer, so each rung starts its own writer at
      // a known point of the task and the run does not depend on timing.
      await options.writersIdle();
      first ??= request;
      const step = stepOf(request);
      lastStep = step;
      steps.push(step);
      return actionReply(options.script, step, options.idPrefix);
    },
  };
}
