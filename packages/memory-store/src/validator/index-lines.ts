import path from 'node:path';
import type { Violation } from './violation.ts';

/**
 * Index lines and spillover files. When a section outgrows its budget the writer moves a
 * coherent topic into a spillover — `checkpoint-<topic>.md` beside checkpoint.md, `MEMORY-<topic>.md` beside
 * MEMORY.md — and leaves one index line in its place:
 *
 *     - See checkpoint-nats-debugging.md (4 items) — reconnect investigation, settled
 *
 * `entries` for `items` and a plain or en dash for the em dash are accepted too. Readers recognise an index line as
 * any trimmed line matching `- See <non-space>.md (<digits>` and keep it through section-aware truncation.
 */

/** Longest spillover topic, in characters (reference `TOPIC_MAX_CHARS`). */
export const SPILLOVER_TOPIC_MAX_CHARS = 80;

/** Which main file a spillover belongs to. */
export type SpilloverOwner = 'checkpoint' | 'memory';

/** File-name prefix of each owner's spillovers. */
export const SPILLOVER_PREFIX: Readonly<Record<SpilloverOwner, string>> = { checkpoint: 'checkpoint-', memory: 'MEMORY-' };

/** One well-formed index line. */
export interface IndexLine {
  /** 1-based line number in the file. */
  readonly line: number;
  /** The spillover's file name as written. */
  readonly fileName: string;
  /** The `N` of `(N items)`. */
  readonly count: number;
  readonly summary: string;
}

/** An index line as readers recognise it (reference `budgeted-read.ts`), tested on the trimmed line. */
export const INDEX_LINE_PATTERN = /^- See \S+\.md \(\d+/;

// The full form. The dash may be an em dash (the prompt's form), an en dash or one or two hyphens.
const WELL_FORMED = /^- See (\S+\.md) \((\d+) (?:items?|entries|entry)\) (?:—|–|--?) *(\S.*)$/u;

// A bullet that tries to point at a spillover, by its bare file name, without being a recognisable index line
// ("- See `checkpoint-x.md`", "* See MEMORY-x.md for details"): readers would not keep it through truncation, so it
// is reported as malformed. Case-sensitive and without directories, so "- See packages/memory-store/README.md" or
// "- See docs/checkpoint-design.md" (files of the project) are left alone.
const SPILLOVER_MENTION = /^[-*+]\s+See\s+[`"']?(?:checkpoint|MEMORY)-[^\s/\\`"']*\.md/;

const TOPIC_CHARS = /^[A-Za-z0-9_-]+$/;

const EXPECTED_FORM = '`- See <file> (N items) — <summary>`';

/** Whether the trimmed `line` is an index line as readers recognise it. */
export function isIndexLine(line: string): boolean {
  return INDEX_LINE_PATTERN.test(line.trim());
}

/** The well-formed index lines of `text`, in order. Malformed candidates are skipped (see {@link checkIndexLines}). */
export function parseIndexLines(text: string): IndexLine[] {
  const found: IndexLine[] = [];
  text.split('\n').forEach((raw, index) => {
    const match = WELL_FORMED.exec(raw.trim());
    if (match !== null) {
      found.push({ line: index + 1, fileName: match[1] ?? '', count: Number(match[2]), summary: (match[3] ?? '').trim() });
    }
  });
  return found;
}

/** A spillover file name split into its owner and topic, or null when it is not one. */
export function parseSpilloverName(fileName: string): { owner: SpilloverOwner; topic: string } | null {
  for (const owner of ['checkpoint', 'memory'] as const) {
    const prefix = SPILLOVER_PREFIX[owner];
    if (fileName.startsWith(prefix) && fileName.endsWith('.md')) {
      const topic = fileName.slice(prefix.length, -'.md'.length);
      if (topic.length > 0 && topic.length <= SPILLOVER_TOPIC_MAX_CHARS && TOPIC_CHARS.test(topic)) return { owner, topic };
    }
  }
  return null;
}

/**
 * Checks every index line of a main file (checkpoint.md or MEMORY.md at `file`): well formed, naming a spillover of
 * the right owner by its bare file name with a topic of at most {@link SPILLOVER_TOPIC_MAX_CHARS} characters, and
 * pointing at a spillover that exists. Existence is asked only for valid names. Returns the well-formed index
 * lines with valid names too, so the caller can look inside the spillovers.
 */
export function checkIndexLines(
  file: string,
  text: string,
  owner: SpilloverOwner,
  spilloverExists: (fileName: string) => boolean,
): { violations: Violation[]; spillovers: string[] } {
  const violations: Violation[] = [];
  const spillovers: string[] = [];
  const name = path.basename(file);
  const prefix = SPILLOVER_PREFIX[owner];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!INDEX_LINE_PATTERN.test(line) && !SPILLOVER_MENTION.test(line)) return;
    const where = `${name} line ${index + 1}`;
    const match = WELL_FORMED.exec(line);
    if (match === null) {
      violations.push({
        file,
        rule: 'index-line-malformed',
        severity: 'error',
        detail: `${where}: ${JSON.stringify(line)} is not a well-formed index line; write it as ${EXPECTED_FORM} with the bare file name, the number of moved entries and a one-line summary`,
      });
      return;
    }
    const fileName = match[1] ?? '';
    const topic = fileName.startsWith(prefix) ? fileName.slice(prefix.length, -'.md'.length) : '';
    if (fileName.includes('/') || fileName.includes('\\') || !fileName.startsWith(prefix) || !TOPIC_CHARS.test(topic)) {
      violations.push({
        file,
        rule: 'index-line-bad-name',
        severity: 'error',
        detail: `${where}: ${JSON.stringify(fileName)} is not a ${name} spillover; name it ${prefix}<topic>.md (the file name only, beside ${name}), with a topic of letters, digits, "-" and "_"`,
      });
      return;
    }
    if (topic.length > SPILLOVER_TOPIC_MAX_CHARS) {
      violations.push({
        file,
        rule: 'index-line-topic-too-long',
        severity: 'error',
        detail: `${where}: the topic of ${fileName} has ${topic.length} characters; use at most ${SPILLOVER_TOPIC_MAX_CHARS}`,
      });
      return;
    }
    if (!spilloverExists(fileName)) {
      violations.push({
        file,
        rule: 'index-line-missing-spillover',
        severity: 'error',
        detail: `${where}: the index line points at ${fileName}, which does not exist beside ${name}; write the spillover there or remove the line`,
      });
      return;
    }
    if (!spillovers.includes(fileName)) spillovers.push(fileName);
  });
  return { violations, spillovers };
}

/**
 * Checks a spillover file (`path` absolute): a spillover never points at another spillover, so any index line in
 * it is a `nested-spillover` error.
 */
export function validateSpillover(file: string, text: string): Violation[] {
  const name = path.basename(file);
  const violations: Violation[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!INDEX_LINE_PATTERN.test(line) && !SPILLOVER_MENTION.test(line)) return;
    violations.push({
      file,
      rule: 'nested-spillover',
      severity: 'error',
      detail: `${name} line ${index + 1}: a spillover may not point at another spillover (${JSON.stringify(line)}); put that content back into ${name} itself and remove the line`,
    });
  });
  return violations;
}

/**
 * Index-line violations of a file, plus, when `readSpillover` is given, the no-nested-spillover check of every
 * spillover its index lines point at (spillovers live beside the file).
 */
export function checkIndexAndSpillovers(
  file: string,
  text: string,
  owner: SpilloverOwner,
  spilloverExists: (fileName: string) => boolean,
  readSpillover: ((fileName: string) => string | null) | undefined,
): Violation[] {
  const index = checkIndexLines(file, text, owner, spilloverExists);
  const violations = [...index.violations];
  if (readSpillover !== undefined) {
    for (const fileName of index.spillovers) {
      const spillover = readSpillover(fileName);
      if (spillover !== null) violations.push(...validateSpillover(path.join(path.dirname(file), fileName), spillover));
    }
  }
  return violations;
}
