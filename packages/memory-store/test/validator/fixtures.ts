import { DEFAULT_BUDGETS, TokenCounter, loadPrompt, parseSections } from '../../src/index.ts';
import type { ValidateMemoryFilesInput } from '../../src/validator/validator.ts';

/** Realistic memory files of a coding session, filled exactly as the templates ask. */

export const template = loadPrompt('checkpoint-template');
export const memoryTemplate = loadPrompt('memory-template');

export const CHECKPOINT_PATH = '/data/memory/sessions/ses_01/checkpoint.md';
export const MEMORY_PATH = '/data/memory/projects/prj_orders/MEMORY.md';

/** Spillovers that exist in the fixture's memory tree, with their text. */
export const SPILLOVERS: Readonly<Record<string, string>> = {
  'checkpoint-nats-debugging.md': [
    '# NATS reconnect investigation',
    '',
    '- nats-server 2.9.10 drops core publishes while the client reconnects.',
    '- JetStream publishes with a msgID are deduplicated on retry.',
    '- The reconnect takes about 1.6 s after a SIGKILL of the server.',
    '- Settled: use js.publish with msgID for anything that must not be lost.',
    '',
  ].join('\n'),
  'MEMORY-lmdb-tuning.md': [
    '# LMDB tuning',
    '',
    '- mapSize of 1 GiB is enough for 10 M events of 200 bytes.',
    '- noSync is never used: durability first.',
    '- Group commit batches appends within one event-loop turn.',
    '',
  ].join('\n'),
};

/** Replaces the body of every section named in `bodies` (keyed by header), keeping headers and italic lines. */
export function fillTemplate(base: string, bodies: Readonly<Record<string, string>>): string {
  const sections = parseSections(base);
  let out = base.slice(0, sections[0]?.start ?? base.length);
  sections.forEach((section, index) => {
    const body = bodies[section.header] ?? section.body;
    const last = index === sections.length - 1;
    out += `${section.header}\n${section.italic}\n\n${body}\n${last ? '' : '\n'}`;
  });
  return out;
}

export const CHECKPOINT_BODIES: Readonly<Record<string, string>> = {
  '## §1 Active intent': [
    '> "Fix the 500 on POST /orders and keep the service on port 8081. Don\'t touch the payment client, it belongs to another team."',
  ].join('\n'),
  '## §2 Next concrete action': [
    'Run the orders test suite after the null check in `src/orders/create.ts:88`, as the user asked:',
    '> "run the orders tests before you commit anything"',
  ].join('\n'),
  '## §3 Directives (this session)': [
    '- Answer in short paragraphs; the user reads on a phone.',
    '- Show the diff before each commit and wait for "ok".',
  ].join('\n'),
  '## §4 Task tree': [
    '- 🔄 T1: Fix the 500 on POST /orders (focus) (progress: tasks/T1/progress.md, last-reconciled-written-at: 1750000000000)',
    '  - ✅ T2: Reproduce the 500 with a failing test',
    '  - 🔵 T3: Add a regression test for an empty cart',
    '- 🟡 T4: Upgrade the ORM to 6.x (blocked on the payment team)',
  ].join('\n'),
  '## §5 Current work': [
    'The 500 comes from `createOrder` in `src/orders/create.ts:88`: `cart.items` is undefined when the cart was',
    'created by the mobile client before the v2 migration, and `cart.items.map` throws a TypeError that the error',
    'middleware turns into a 500. I added a guard that treats a missing `items` as an empty list and returns 422',
    '`{ "error": "empty_cart" }` for an empty cart.',
    '',
    'Commands run (verbatim):',
    '```sh',
    'PORT=8081 DATABASE_URL=postgres://orders:orders@127.0.0.1:5433/orders npm run dev',
    'curl -sS -X POST http://127.0.0.1:8081/orders -H "content-type: application/json" -d \'{"cartId":"c_legacy_42"}\'',
    'npm test -- --run src/orders',
    '```',
    'Last result: 41 passed, 1 failed (`create.test.ts > rejects an empty cart`: expected 422, got 400).',
  ].join('\n'),
  '## §6 Files and code sections': [
    '- `src/orders/create.ts` — `createOrder`, the handler that threw; guard added at line 88.',
    '- `src/orders/create.test.ts` — the failing test for the legacy cart, plus the new empty-cart test.',
    '- `src/http/error-middleware.ts` — maps thrown errors to status codes; a TypeError becomes 500.',
    '- `src/carts/legacy.ts` — the v1 cart shape without `items` (read only, to understand the data).',
    '- `docker-compose.yml` — Postgres on port 5433 for local runs.',
  ].join('\n'),
  '## §7 Discovered knowledge (cross-task)': [
    '- Carts created before the v2 migration have no `items` field; any code reading carts must default it.',
    '- The error middleware returns 400 for `ValidationError` and 500 for anything else.',
    '- `npm test -- --run <dir>` runs one directory without watch mode.',
  ].join('\n'),
  '## §8 Errors and fixes': [
    '- `TypeError: Cannot read properties of undefined (reading \'map\')` at `create.ts:88` → guard for a missing `items`.',
    '- `ECONNREFUSED 127.0.0.1:5432` → the database listens on 5433 in docker-compose; DATABASE_URL fixed.',
    '- See checkpoint-nats-debugging.md (4 items) — NATS reconnect investigation, settled',
  ].join('\n'),
  '## §9 Live resources': [
    '- Branch `fix/orders-500`, uncommitted: `src/orders/create.ts`, `src/orders/create.test.ts`.',
    '- `npm run dev` running in the background on port 8081 (pid 48211).',
    '- docker compose: `orders-db` up.',
  ].join('\n'),
  '## §10 Design decisions and discussion outcomes': [
    '- An empty cart is a client error (422 `empty_cart`), not a server error: the user agreed, because the mobile',
    '  client shows 4xx messages to the shopper and retries 5xx.',
    '- Legacy carts are fixed on read, not migrated: a migration needs a maintenance window the user cannot get this week.',
  ].join('\n'),
  '## §11 Open notes': [
    '- Open question: should the 422 body also carry the cart id? The user has not answered yet.',
  ].join('\n'),
};

export const MEMORY_BODIES: Readonly<Record<string, string>> = {
  '## Project context': 'Orders service of the shop: a Node 20 HTTP API over Postgres that turns carts into orders.',
  '## Rules': [
    '- The service listens on port 8081; never change it.',
    '- Never modify `src/payments/`: it belongs to the payments team.',
    '- Local database: `postgres://orders:orders@127.0.0.1:5433/orders`.',
  ].join('\n'),
  '## Architecture decisions': [
    '- Client errors are 4xx with a JSON body `{ "error": "<code>" }`; 5xx only for faults of the service. The mobile',
    '  client retries 5xx, so a client error reported as 5xx is retried forever.',
  ].join('\n'),
  '## Discovered durable knowledge': [
    '- **Legacy carts have no items**: carts created before the v2 migration lack the `items` field.',
    '  Why: the v1 mobile client stored items in a separate table.',
    '  How to apply: default `items` to `[]` wherever a cart is read.',
    '- **Tests by directory**: `npm test -- --run <dir>` runs one directory without watch mode.',
    '  Why: the default `npm test` starts vitest in watch mode and never exits.',
    '  How to apply: always pass `--run` in scripts and in CI.',
    '- See MEMORY-lmdb-tuning.md (3 entries) - LMDB tuning notes from the event store spike',
  ].join('\n'),
};

export function filledCheckpoint(overrides: Readonly<Record<string, string>> = {}): string {
  return fillTemplate(template, { ...CHECKPOINT_BODIES, ...overrides });
}

export function filledMemory(overrides: Readonly<Record<string, string>> = {}): string {
  return fillTemplate(memoryTemplate, { ...MEMORY_BODIES, ...overrides });
}

/** The committed MEMORY.md before this writer: the tests entry did not exist yet, the legacy-cart one said less. */
export const previousMemory = fillTemplate(memoryTemplate, {
  ...MEMORY_BODIES,
  '## Discovered durable knowledge': [
    '- **Legacy carts have no items**: old carts lack `items`.',
    '  Why: the v1 mobile client stored items elsewhere.',
    '  How to apply: default `items` to `[]`.',
    '- See MEMORY-lmdb-tuning.md (3 entries) - LMDB tuning notes from the event store spike',
  ].join('\n'),
});

/** One counter for the whole test run: the tokenizer loads once. */
export const counter = new TokenCounter();

/** A complete validator input over the filled fixtures; override any field. */
export function validInput(overrides: Partial<ValidateMemoryFilesInput> = {}): ValidateMemoryFilesInput {
  return {
    checkpointPath: CHECKPOINT_PATH,
    checkpoint: filledCheckpoint(),
    memoryPath: MEMORY_PATH,
    memory: filledMemory(),
    previousMemory,
    template,
    memoryTemplate,
    userRequestExists: true,
    spilloverExists: (fileName) => Object.hasOwn(SPILLOVERS, fileName),
    readSpillover: (fileName) => SPILLOVERS[fileName] ?? null,
    budgets: DEFAULT_BUDGETS,
    counter,
    ...overrides,
  };
}
