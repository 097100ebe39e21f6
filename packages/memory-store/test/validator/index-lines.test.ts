import { describe, expect, it } from 'vitest';
import {
  SPILLOVER_TOPIC_MAX_CHARS,
  isIndexLine,
  parseIndexLines,
  parseSpilloverName,
  validateSpillover,
} from '../../src/validator/index-lines.ts';
import { validateMemoryFiles } from '../../src/validator/validator.ts';
import { CHECKPOINT_BODIES, filledCheckpoint, validInput } from './fixtures.ts';

const ERRORS = '## §8 Errors and fixes';

function checkpointWithIndexLine(line: string): string {
  return filledCheckpoint({ [ERRORS]: `${CHECKPOINT_BODIES[ERRORS]?.split('\n')[0] ?? ''}\n${line}` });
}

describe('index lines', () => {
  it.each([
    '- See checkpoint-nats-debugging.md (4 items) — NATS reconnect investigation',
    '- See checkpoint-nats-debugging.md (1 item) — one entry',
    '- See checkpoint-nats-debugging.md (4 entries) — entries instead of items',
    '- See checkpoint-nats-debugging.md (4 items) - a plain hyphen',
    '- See checkpoint-nats-debugging.md (4 items) – an en dash',
    '  - See checkpoint-nats-debugging.md (4 items) — indented under a bullet',
  ])('accepts %j', (line) => {
    expect(validateMemoryFiles(validInput({ checkpoint: checkpointWithIndexLine(line) }))).toEqual([]);
  });

  it.each([
    ['- See checkpoint-nats-debugging.md (4 items)', 'no summary'],
    ['- See checkpoint-nats-debugging.md (4) — x', 'no unit'],
    ['- See checkpoint-nats-debugging.md (four items) — x', 'no digits'],
    ['- See `checkpoint-nats-debugging.md` (4 items) — x', 'backticks'],
    ['* See checkpoint-nats-debugging.md for the details', 'prose'],
  ])('reports %j as malformed (%s)', (line) => {
    expect(validateMemoryFiles(validInput({ checkpoint: checkpointWithIndexLine(line) })).map((v) => v.rule)).toEqual([
      'index-line-malformed',
    ]);
  });

  it.each([
    '- See packages/memory-store/README.md for the API',
    '- See docs/checkpoint-design.md for the format',
    '- `src/checkpoint-rules.ts` — see MEMORY-x.md notes',
  ])('leaves project files that are not spillovers alone: %j', (line) => {
    expect(validateMemoryFiles(validInput({ checkpoint: checkpointWithIndexLine(line) }))).toEqual([]);
  });

  it('recognises index lines as readers do and parses the well-formed ones', () => {
    expect(isIndexLine('   - See a.md (3')).toBe(true);
    expect(isIndexLine('See a.md (3 items)')).toBe(false);
    expect(parseIndexLines('x\n- See MEMORY-a.md (3 entries) - three\n')).toEqual([
      { line: 2, fileName: 'MEMORY-a.md', count: 3, summary: 'three' },
    ]);
  });

  it('names spillovers checkpoint-<topic>.md / MEMORY-<topic>.md with a topic of at most 80 characters', () => {
    expect(parseSpilloverName('checkpoint-nats_debugging-2.md')).toEqual({ owner: 'checkpoint', topic: 'nats_debugging-2' });
    expect(parseSpilloverName('MEMORY-lmdb.md')).toEqual({ owner: 'memory', topic: 'lmdb' });
    expect(parseSpilloverName(`checkpoint-${'a'.repeat(SPILLOVER_TOPIC_MAX_CHARS)}.md`)).not.toBeNull();
    for (const bad of [`checkpoint-${'a'.repeat(81)}.md`, 'memory-lmdb.md', 'checkpoint-.md', 'checkpoint-a b.md', 'notes-x.md']) {
      expect(parseSpilloverName(bad)).toBeNull();
    }
  });

  it('reports an 80-character topic as fine and an 81-character one as too long', () => {
    const exists = { spilloverExists: () => true, readSpillover: () => null };
    const ok = checkpointWithIndexLine(`- See checkpoint-${'a'.repeat(80)}.md (2 items) — x`);
    expect(validateMemoryFiles(validInput({ checkpoint: ok, ...exists }))).toEqual([]);
    const long = checkpointWithIndexLine(`- See checkpoint-${'a'.repeat(81)}.md (2 items) — x`);
    expect(validateMemoryFiles(validInput({ checkpoint: long, ...exists })).map((v) => v.rule)).toEqual([
      'index-line-topic-too-long',
    ]);
  });
});

describe('validateSpillover', () => {
  const file = '/data/memory/sessions/ses_01/checkpoint-nats-debugging.md';

  it('accepts a spillover without index lines', () => {
    expect(validateSpillover(file, '# NATS\n\n- a fact\n- See the server log for more\n')).toEqual([]);
  });

  it('reports each index line of a spillover as a nested spillover, naming the spillover', () => {
    const violations = validateSpillover(file, '# NATS\n- See checkpoint-more.md (2 items) — more\n- See MEMORY-x.md (1 entries) - x\n');
    expect(violations.map((v) => [v.rule, v.severity, v.file])).toEqual([
      ['nested-spillover', 'error', file],
      ['nested-spillover', 'error', file],
    ]);
    expect(violations[0]?.detail).toMatch(/^checkpoint-nats-debugging\.md line 2: a spillover may not point at another spillover/);
  });
});
