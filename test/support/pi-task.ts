import { extractiveStep, type RecordedRequest, type ScriptStep } from '@baton/testing';

/**
 * pi's scripted task on a scratch "warehouse" project (three prompts, sixteen model steps with write, read, edit and
 * bash calls), and the loopback responder that plays pi's model over it in any API while the daemon's checkpoint
 * writers (their own key) get the loopback's extractive writer.
 */

export const PROMPTS = [
  'Set up the warehouse project: write src/inventory.ts and src/orders.ts, read the inventory module back, then count the lines with bash.',
  'Add src/report.ts with a stock report, retitle it with an edit, read it back and show the other modules with cat.',
  'Write docs/summary.md describing every module, show it next to the report, then add src/index.ts and list the project.',
] as const;

const WORDS = ['ledger', 'pallet', 'bin', 'shipment', 'carrier', 'invoice', 'stock', 'supplier', 'batch', 'order', 'shelf', 'route'];

/** A deterministic TypeScript module of `lines` functions (about 41 tokens a line). */
function moduleSource(name: string, lines: number): string {
  const out = [`// ${name}: generated for the pi end-to-end test`, `export const MODULE = '${name}';`];
  for (let i = 0; i < lines; i++) {
    const a = WORDS[i % WORDS.length] as string;
    const b = WORDS[(i * 7 + name.length) % WORDS.length] as string;
    out.push(`export function ${name}${a[0]?.toUpperCase()}${a.slice(1)}${i}(items: readonly number[]): number { /* ${b} rule ${i} of ${name} */ return items.reduce((s, x) => s + x * ${i + 1}, ${i % 5}); }`);
  }
  return `${out.join('\n')}\n`;
}

/** File contents, sized so each step lands clear of the rungs and the window. */
export const SOURCES = {
  inventory: moduleSource('inventory', 80),
  orders: moduleSource('orders', 50),
  report: `${moduleSource('report', 100)}export const TITLE = 'Stock report';\n`,
  summary: moduleSource('summary', 70).replace(/^/gm, '    '),
  index: moduleSource('index', 80),
};

/** `src/report.ts` after the task's edit. */
export const EDITED_REPORT = SOURCES.report.replace("'Stock report'", "'Warehouse stock report'");

type Action =
  | { readonly tool: 'write'; readonly path: string; readonly content: string }
  | { readonly tool: 'read'; readonly path: string }
  | { readonly tool: 'edit'; readonly path: string; readonly oldText: string; readonly newText: string }
  | { readonly tool: 'bash'; readonly command: string }
  | { readonly text: string };

/** pi's model, step by step: prompt i starts at `START[i]`; each later step answers the tool result of the one before. */
export const SCRIPT: readonly Action[] = [
  { tool: 'write', path: 'src/inventory.ts', content: SOURCES.inventory },
  { tool: 'write', path: 'src/orders.ts', content: SOURCES.orders },
  { tool: 'read', path: 'src/inventory.ts' },
  { tool: 'bash', command: 'wc -l src/*.ts && cat src/orders.ts' },
  { text: 'Wrote src/inventory.ts and src/orders.ts (82 and 52 lines); the inventory module reads back as written.' },
  { tool: 'write', path: 'src/report.ts', content: SOURCES.report },
  { tool: 'edit', path: 'src/report.ts', oldText: "'Stock report'", newText: "'Warehouse stock report'" },
  { tool: 'read', path: 'src/report.ts' },
  { tool: 'bash', command: 'cat src/inventory.ts src/orders.ts src/report.ts' },
  { text: 'Added src/report.ts titled "Warehouse stock report"; the other two modules are unchanged.' },
  { tool: 'write', path: 'docs/summary.md', content: SOURCES.summary },
  { tool: 'bash', command: 'cat src/report.ts docs/summary.md' },
  { tool: 'read', path: 'docs/summary.md' },
  { tool: 'write', path: 'src/index.ts', content: SOURCES.index },
  { tool: 'bash', command: 'ls -la src docs && wc -c src/*.ts docs/*.md' },
  { text: 'Wrote docs/summary.md and src/index.ts; the project now has four modules and one document.' },
];
export const START = [0, 5, 10] as const;

/** The stop reason pi reports for each step's answer. */
export const STOP_REASONS = SCRIPT.map((a) => ('text' in a ? 'stop' : 'toolUse'));

export const callId = (step: number): string => `call_s${String(step).padStart(2, '0')}`;

/**
 * The model's answer at `step`; with `thinking`, preceded by a reasoning item (Responses) or a thinking block with
 * its signature (Anthropic), which pi sends back with its history.
 */
export function stepReply(step: number, options: { thinking?: boolean } = {}): ScriptStep {
  const action = SCRIPT[step];
  if (action === undefined) return { error: { status: 500, message: `pi's script has no step ${step}` } };
  const thinking = options.thinking === true ? { thinking: { text: `Step ${step}: what the task needs next.`, signature: `sig-step-${step}` } } : {};
  if ('text' in action) return { reply: { content: action.text, finish_reason: 'stop', ...thinking } };
  const { tool, ...args } = action;
  const call = tool === 'edit' ? { path: action.path, edits: [{ oldText: action.oldText, newText: action.newText }] } : args;
  return { reply: { tool_calls: [{ id: callId(step), name: tool, arguments: call }], ...thinking } };
}

/** The credential a loopback request carried: a Bearer token (OpenAI SDKs, and Baton's Anthropic writers) or `x-api-key` (pi's Anthropic SDK). */
export function keyOf(r: RecordedRequest): string {
  const bearer = String(r.headers.authorization ?? '');
  if (bearer.startsWith('Bearer ')) return bearer.slice(7);
  return String(r.headers['x-api-key'] ?? '');
}

/** Which step of the script a request of pi asks for: the one after the call whose result it carries, or a prompt's first. */
function stepOf(request: RecordedRequest, lastStep: number): number {
  const last = request.conversation.items.at(-1);
  const result = last?.toolResults.at(-1)?.callId ?? '';
  if (/^call_s\d+$/.test(result)) return Number(result.slice(6)) + 1;
  if (last?.role === 'user') {
    const prompt = PROMPTS.indexOf(last.text as (typeof PROMPTS)[number]);
    if (prompt >= 0) return START[prompt] as number;
  }
  return lastStep + 1;
}

/** The loopback model playing pi's model and the daemon's writers; `steps` lists the steps pi asked for, in order. */
export interface PiModelPlayer {
  readonly steps: readonly number[];
  respond(request: RecordedRequest): Promise<ScriptStep>;
}

/**
 * Answers the daemon's writers (key `writerKey`) with the extractive writer and pi with its script. Before each of
 * pi's answers it waits for `writersIdle`: pi's model is slower than a checkpoint writer, so a writer that started runs
 * to its end before pi's next answer, each rung starts its own writer at a known point of the task, and the run does
 * not depend on timing. A request without tools (a title or summary call) gets a short text.
 */
export function piModelPlayer(options: { writerKey: string; writersIdle: () => Promise<void>; thinking?: boolean }): PiModelPlayer {
  const steps: number[] = [];
  let lastStep = -1;
  return {
    steps,
    async respond(request) {
      if (keyOf(request) === options.writerKey) return extractiveStep(request);
      await options.writersIdle();
      if (request.conversation.tools.length === 0) return { reply: { content: 'no summary today', finish_reason: 'stop' } };
      const step = stepOf(request, lastStep);
      lastStep = step;
      steps.push(step);
      return stepReply(step, { thinking: options.thinking ?? false });
    },
  };
}
