import { truncateHeadTail } from '@baton/memory-store';
import type { Message } from '@baton/protocol';

/** Counts tokens of a text. */
export interface TextCounter {
  count(text: string): number;
}

/** How a message is cut: the counter, the marker left where text was cut, the text that stands for a removed image. */
export interface ShrinkOptions {
  readonly counter: TextCounter;
  /** The line left in place of the cut middle of a text, given how many tokens were cut. */
  readonly marker: (elided: number) => string;
  /** What an image is replaced with. */
  readonly imageNote: string;
  /** What the provider counts for a message (its images included), by the session's calibration. */
  readonly measure: (m: Message) => number;
  /** Provider tokens per Baton token of this message's text (its kind's ratio), to turn an excess into a cut. */
  readonly ratio: number;
}

/** A text of the message that may be cut: its current value and how to put a shorter one in its place. */
interface Slot {
  readonly get: () => string;
  readonly set: (text: string) => void;
}

const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);
/** A slot never cut below this many tokens (the marker alone takes about as many). */
const MIN_SLOT_TOKENS = 40;
const MAX_ROUNDS = 8;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A text slot on `obj[key]`. */
const slot = (obj: Obj, key: string): Slot => ({ get: () => (typeof obj[key] === 'string' ? obj[key] : ''), set: (text) => void (obj[key] = text) });

/**
 * Tool-call arguments are JSON: a cut one would not parse, so its cut text is wrapped in a small JSON object instead
 * (`{"truncated_arguments": "…"}`; for an Anthropic `tool_use`, whose input is an object, `{"truncated_input": "…"}`).
 */
const argumentsSlot = (obj: Obj, key: string): Slot => ({
  get: () => {
    const value = obj[key];
    return typeof value === 'string' ? value : JSON.stringify(value ?? {});
  },
  set: (text) => void (obj[key] = typeof obj[key] === 'string' ? JSON.stringify({ truncated_arguments: text }) : { truncated_input: text }),
});

/** The text slots found in a message, and how many images were replaced by their note on the way. */
interface Slots {
  readonly slots: Slot[];
  images: number;
}

/** The text slots of a content value (a string, or parts), images replaced by `imageNote` on the way. */
function contentSlots(holder: Obj, key: string, imageNote: string, textType: string, out: Slots): void {
  const content = holder[key];
  if (typeof content === 'string') {
    out.slots.push(slot(holder, key));
    return;
  }
  if (!Array.isArray(content)) return;
  content.forEach((part: unknown, i: number) => {
    if (!isObj(part)) return;
    const type = typeof part['type'] === 'string' ? part['type'] : '';
    if (IMAGE_PARTS.has(type)) {
      content[i] = { type: textType, text: imageNote };
      out.images += 1;
      return;
    }
    if (TEXT_PARTS.has(type) && typeof part['text'] === 'string') out.slots.push(slot(part, 'text'));
    else if (type === 'tool_result') contentSlots(part, 'content', imageNote, 'text', out);
    else if (type === 'tool_use') out.slots.push(argumentsSlot(part, 'input'));
  });
}

/** The slots of a message (a deep copy the slots write into) and how many of its images were replaced. */
function slotsOf(m: Message, imageNote: string): Slots {
  const out: Slots = { slots: [], images: 0 };
  const native = m.native;
  if (native === undefined) {
    contentSlots(m, 'content', imageNote, 'text', out);
    for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      const fn = isObj(call) ? (call['function'] ?? call['custom']) : undefined;
      if (isObj(fn) && 'arguments' in fn) out.slots.push(argumentsSlot(fn, 'arguments'));
      else if (isObj(fn) && typeof fn['input'] === 'string') out.slots.push(slot(fn, 'input'));
    }
    return out;
  }
  const type = typeof native['type'] === 'string' ? native['type'] : 'message';
  switch (type) {
    case 'message':
      contentSlots(native, 'content', imageNote, native['role'] === 'assistant' ? 'output_text' : 'input_text', out);
      break;
    case 'function_call':
      out.slots.push(argumentsSlot(native, 'arguments'));
      break;
    case 'custom_tool_call':
      if (typeof native['input'] === 'string') out.slots.push(slot(native, 'input'));
      break;
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'local_shell_call_output':
      contentSlots(native, 'output', imageNote, 'input_text', out);
      break;
    default:
      // Reasoning (encrypted or signed), hosted tool calls: nothing Baton may rewrite.
      break;
  }
  // An Anthropic message (no `type`): its blocks were read by the `message` case above.
  return out;
}

/**
 * `m` with its images replaced by a note and its longest texts cut (head and tail kept around a marker), until
 * `measure` gives at most `maxTokens` for it — or as far as it goes when it cannot be cut that far (every text down to
 * its marker). `m` itself when it fits already; null when nothing of it can be cut (reasoning items, hosted tool
 * calls). Tool-call arguments stay valid JSON. `known` is what `measure` gives for `m`, when the caller has it.
 */
export function shrinkMessage(m: Message, maxTokens: number, o: ShrinkOptions, known?: number): Message | null {
  const original = known ?? o.measure(m);
  if (original <= maxTokens) return m;
  const copy = structuredClone(m);
  const { slots, images } = slotsOf(copy, o.imageNote);
  // Measuring a large message is a full count: the first round reuses `original` unless an image was replaced.
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const tokens = round === 0 && images === 0 ? original : o.measure(copy);
    if (tokens <= maxTokens) return copy;
    const sized = slots.map((s) => ({ s, tokens: o.counter.count(s.get()) })).sort((a, b) => b.tokens - a.tokens);
    const largest = sized[0];
    if (largest === undefined || largest.tokens <= MIN_SLOT_TOKENS) break;
    // Cut the largest text by the whole excess (and a little more: the marker and the JSON around it count too).
    const keep = Math.max(MIN_SLOT_TOKENS, largest.tokens - Math.ceil((tokens - maxTokens) / Math.max(o.ratio, 0.1)) - 16);
    const cut = truncateHeadTail(largest.s.get(), keep, o.marker, o.counter);
    largest.s.set(cut?.text ?? o.marker(largest.tokens));
  }
  return o.measure(copy) < original ? copy : null;
}
