/** Statuses providers answer a prompt longer than the model's window with. */
const STATUSES = new Set([400, 413, 422]);

/** Error codes for a prompt over the window (OpenAI and compatible servers). */
const CODES = new Set(['context_length_exceeded', 'context_window_exceeded', 'prompt_too_long']);

/** Wordings of the same error from providers that give no code (Anthropic, vLLM, llama.cpp, Ollama, …). */
const WORDING = /context[ _-]?(length|window)|maximum context|prompt is too long|too many (input )?tokens|exceeds? the (model's )?(maximum|context)/i;

/** Largest error body read to decide (a real one is a few hundred bytes). */
export const MAX_ERROR_BYTES = 64 * 1024;

/** Whether the upstream may be saying the prompt is too long: only then is its error body read before relaying it. */
export function mayBeContextOverflow(status: number): boolean {
  return STATUSES.has(status);
}

/**
 * Whether an upstream error says the prompt does not fit the model's context window — the provider's own overflow
 * signal, which the gateway answers with a rebuild when its estimate from reported usage missed it.
 */
export function isContextOverflowError(status: number, body: Buffer): boolean {
  if (!STATUSES.has(status)) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return WORDING.test(body.toString('utf8'));
  }
  const error = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? (parsed).error : parsed;
  if (typeof error === 'string') return WORDING.test(error);
  if (typeof error !== 'object' || error === null) return false;
  const { code, type, message } = error as { code?: unknown; type?: unknown; message?: unknown };
  if (typeof code === 'string' && CODES.has(code)) return true;
  if (typeof type === 'string' && CODES.has(type)) return true;
  return typeof message === 'string' && WORDING.test(message);
}

/** How providers say what they counted: OpenAI "resulted in N tokens", vLLM "(N in the messages", Anthropic "N tokens > M". */
const COUNTED = [/resulted in (\d+) tokens/i, /\((\d+) in the messages/i, /(\d+) tokens\s*>\s*\d+/i, /prompt(?: is)? (?:has )?(\d+) tokens/i];

/**
 * The prompt tokens a provider's too-long error says it counted, or null when it does not say. The session's
 * calibration learns from it: the rebuild that follows is then fitted by what the provider counts.
 */
export function refusedTokens(body: Buffer): number | null {
  const text = body.toString('utf8');
  for (const pattern of COUNTED) {
    const n = Number(pattern.exec(text)?.[1]);
    if (Number.isSafeInteger(n) && n > 0) return n;
  }
  return null;
}
