/**
 * A realistic, deterministic coding conversation for the benchmarks: user asks → read_file or bash → a TypeScript file
 * or test output → answer, with provider usage counted in real o200k tokens. The agent's system prompt and tools are
 * the integration tests' own (`test/support/conversation.ts`).
 */
import { countTokens } from 'gpt-tokenizer';
import { type Message } from '@baton/protocol';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS } from '../test/support/conversation.ts';

export { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS };

/** Deterministic PRNG (LCG): `next(n)` in [0, n). */
export function prng(seed: number): (n: number) => number {
  let x = (seed * 2654435761) >>> 0 || 1;
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
}

const NOUNS = ['order', 'invoice', 'customer', 'refund', 'payment', 'cart', 'shipment', 'ledger', 'coupon', 'stock', 'price', 'account'];
const VERBS = ['create', 'update', 'load', 'validate', 'apply', 'cancel', 'reserve', 'compute', 'merge', 'settle', 'resolve', 'sync'];
const TYPES = ['string', 'number', 'boolean', 'Date', 'readonly string[]', 'Money', 'OrderLine[]', 'Record<string, number>'];
const MODULES = ['../db/pool.ts', '../lib/money.ts', '../lib/errors.ts', './repository.ts', '../http/router.ts', '../lib/clock.ts', 'zod', 'node:crypto'];

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** A TypeScript module of about `bytes` bytes: imports, interfaces, functions with bodies, unique to `seed`. */
function codeFile(seed: number, bytes: number): string {
  const next = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[next(xs.length)] as T;
  const ident = (): string => `${pick(VERBS)}${cap(pick(NOUNS))}${next(2) === 0 ? cap(pick(NOUNS)) : ''}${next(100)}`;
  const parts: string[] = [];
  for (let i = 0, n = 3 + next(4); i < n; i++) parts.push(`import { ${ident()}, ${ident()} } from '${pick(MODULES)}';`);
  parts.push('');
  let size = parts.join('\n').length;
  while (size < bytes) {
    let chunk: string;
    if (next(3) === 0) {
      const name = `${cap(pick(NOUNS))}${cap(pick(NOUNS))}${next(1000)}`;
      const fields = Array.from({ length: 3 + next(6) }, () => `  readonly ${pick(NOUNS)}${cap(pick(NOUNS))}${next(2) === 0 ? '?' : ''}: ${pick(TYPES)};`);
      chunk = `/** ${cap(pick(NOUNS))} as stored by the ${pick(NOUNS)} service (${next(50)} fields before migration ${next(900)}). */\nexport interface ${name} {\n${fields.join('\n')}\n}\n`;
    } else {
      const fn = ident();
      const a = pick(NOUNS);
      const b = pick(NOUNS);
      const lines = [
        `export async function ${fn}(${a}: ${cap(a)}, ${b}Id: string, options: { retries?: number } = {}): Promise<${cap(b)} | null> {`,
        `  const row = await db.query<${cap(b)}Row>('SELECT * FROM ${b}s WHERE id = $1 AND ${a}_id = $2', [${b}Id, ${a}.id]);`,
        `  if (row === undefined) throw new NotFoundError(\`${b} \${${b}Id} not found for ${a} \${${a}.id}\`);`,
        `  const total = row.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, ${next(100)});`,
        `  if (total > ${1000 + next(90_000)} && (options.retries ?? ${next(5)}) > 0) {`,
        `    logger.warn({ ${a}: ${a}.id, ${b}: ${b}Id, total }, '${pick(VERBS)} ${b}: total above the limit');`,
        `    return await ${ident()}(${a}, ${b}Id, { retries: (options.retries ?? 1) - 1 });`,
        '  }',
        `  return { ...row, total: Math.round(total * 100) / 100, ${pick(NOUNS)}At: clock.now() } satisfies ${cap(b)};`,
        '}',
        '',
      ];
      chunk = lines.join('\n');
    }
    parts.push(chunk);
    size += chunk.length + 1;
  }
  return parts.join('\n');
}

/** Output of a failing test run (a bash tool result). */
function testOutput(seed: number, bytes: number): string {
  const next = prng(seed);
  const lines = [`> vitest run test/${NOUNS[next(NOUNS.length)]}.test.ts`, ''];
  let size = 0;
  while (size < bytes) {
    const noun = NOUNS[next(NOUNS.length)] as string;
    const line =
      next(4) === 0
        ? ` FAIL  test/${noun}.test.ts > ${VERBS[next(VERBS.length)]} ${noun} > rejects a ${noun} of ${next(1000)}\nAssertionError: expected ${next(10_000)} to be ${next(10_000)} // Object.is equality\n    at test/${noun}.test.ts:${next(400)}:${next(60)}`
        : ` ✓ test/${noun}.test.ts > ${VERBS[next(VERBS.length)]} ${noun} ${next(100)} (${next(300)} ms)`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push('', ` Test Files  ${1 + next(4)} failed | ${next(40)} passed`, `      Tests  ${1 + next(9)} failed | ${next(400)} passed`);
  return lines.join('\n');
}

/** One agent turn: user → tool call → tool result → answer, the two assistant messages carrying their usage. */
export type Turn = [Message, Message, Message, Message];

export interface CodingConversation {
  readonly turns: Turn[];
  /** Provider usage (prompt + completion) after each turn. */
  readonly usageAfter: number[];
  readonly tokens: number;
  readonly bytes: number;
}

export interface CodingConversationOptions {
  /** Seed of the text and of the message ids (`s<seed>t<turn>…`). */
  readonly seed: number;
  /** Stops after the turn for which this returns true (given the usage so far and the turn index). */
  readonly until: (usage: number, turn: number) => boolean;
  /** Size of a read_file result: `[min, max)` bytes of TypeScript (bash results are about half). */
  readonly codeBytes?: readonly [number, number];
}

/**
 * A coding conversation (user asks → read_file or bash → a TypeScript file or test output → answer). Usage is the
 * real o200k count of what the agent sent (system + tools + messages) plus the reply, so it crosses rungs where a
 * provider would. Deterministic and unique to `seed`.
 */
export function codingConversation(options: CodingConversationOptions): CodingConversation {
  const { seed } = options;
  const [minCode, maxCode] = options.codeBytes ?? [3_000, 5_000];
  const next = prng(seed);
  let sent = countTokens(SYSTEM_PROMPT) + countTokens(JSON.stringify(AGENT_TOOLS));
  let bytes = 0;
  const turns: Turn[] = [];
  const usageAfter: number[] = [];
  const measure = (m: Message): number => {
    const text = (typeof m.content === 'string' ? m.content : '') + (m.tool_calls ? JSON.stringify(m.tool_calls) : '');
    bytes += text.length;
    return countTokens(text) + 4;
  };
  for (let turn = 0; ; turn++) {
    const p = `s${seed}t${turn}`;
    const noun = NOUNS[next(NOUNS.length)] as string;
    const file = `src/${noun}s/${VERBS[next(VERBS.length)]}-${noun}-${turn}.ts`;
    const bash = turn % 3 === 2;
    const user: Message = {
      id: `${p}u`,
      role: 'user',
      content:
        turn === 0
          ? `The ${noun} endpoint returns a 500 when the ${NOUNS[next(NOUNS.length)]} is empty (session ${seed}). Find the cause in ${file}, fix it and keep the API on port ${8000 + next(1000)}.`
          : `Good. Next, look at ${file}: ${VERBS[next(VERBS.length)]} must not ${VERBS[next(VERBS.length)]} the ${noun} twice. Run the tests after the change.`,
    };
    const callArgs = bash ? { command: `npx vitest run test/${noun}.test.ts` } : { file_path: file };
    const call: Message = {
      id: `${p}a`,
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `${p}c`, type: 'function', function: { name: bash ? 'bash' : 'read_file', arguments: JSON.stringify(callArgs) } }],
      finish_reason: 'tool_calls',
    };
    const size = minCode + next(Math.max(1, maxCode - minCode));
    const result: Message = {
      id: `${p}r`,
      role: 'tool',
      tool_call_id: `${p}c`,
      content: bash ? testOutput(seed * 1000 + turn, size >> 1) : codeFile(seed * 1000 + turn, size),
    };
    const answer: Message = {
      id: `${p}b`,
      role: 'assistant',
      content: `I changed ${file}: the ${noun} was ${VERBS[next(VERBS.length)]}d before the lock was taken, so a retry could ${VERBS[next(VERBS.length)]} it twice. We decided to keep the ${NOUNS[next(NOUNS.length)]} cache and add a guard; ${next(40)} tests pass now.`,
      finish_reason: 'stop',
    };
    sent += measure(user);
    const callTokens = measure(call);
    call.usage = { prompt_tokens: sent, completion_tokens: callTokens };
    sent += callTokens + measure(result);
    const answerTokens = measure(answer);
    answer.usage = { prompt_tokens: sent, completion_tokens: answerTokens };
    sent += answerTokens;
    turns.push([user, call, result, answer]);
    usageAfter.push(sent);
    if (options.until(sent, turn)) return { turns, usageAfter, tokens: sent, bytes };
  }
}
