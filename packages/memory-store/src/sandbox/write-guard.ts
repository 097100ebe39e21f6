import path from 'node:path';
import { canonicalPath } from '../canonical-path.ts';
import { MemoryStoreError, errnoCode } from '../memory-errors.ts';
import { MEMORY_ID_PATTERN } from '../memory-paths.ts';
import {
  type MemoryActor,
  TASK_ID_PATTERN,
  type WriteRule,
  actorLabel,
  allowedWritePaths,
  evaluateWriteRules,
} from './write-rules.ts';

/** One write the guard is asked about. */
export interface MemoryWriteRequest {
  /** The memory root (`<data>/memory`), absolute. */
  readonly root: string;
  /** The target exactly as the tool received it: possibly relative, with `..`, `//` or symlinks. */
  readonly target: string;
  readonly actor: MemoryActor;
  /** `memory.disable_write`: when true every memory write is refused (reads still work). */
  readonly disableWrite: boolean;
}

/** The guard's answer. On success, operate on `canonical`, never on the raw target. */
export type GuardDecision =
  | { readonly allowed: true; readonly canonical: string }
  | {
      readonly allowed: false;
      /** Stable rule id ({@link WriteRule}). */
      readonly rule: WriteRule;
      /** Model-facing text: target, why, the rule id and the allowed absolute paths. */
      readonly message: string;
      /** What this actor may write, for its parent session and current project. */
      readonly allowed_paths: string[];
      /** The canonical target, when it got that far. */
      readonly canonical?: string;
    };

/** Linux `PATH_MAX` and `NAME_MAX`, in bytes. */
const MAX_PATH_BYTES = 4096;
const MAX_SEGMENT_BYTES = 255;

/** A target confined to the memory root, or why it is not. */
export type ConfinedTarget =
  | { readonly ok: true; readonly canonical: string; readonly canonicalRoot: string; readonly segments: string[] }
  | { readonly ok: false; readonly rule: WriteRule; readonly why: string; readonly canonical?: string };

/**
 * Canonicalises `target` ({@link canonicalPath}: resolve, fold `..` and `//`, realpath of the deepest existing
 * ancestor, symlinks followed) and checks the result lies under the canonical memory root. Refuses NUL bytes,
 * relative targets, segments over 255 bytes and paths over 4096 bytes (on the raw and the canonical form), symlink
 * loops and unresolvable paths. Shared by the write guard and by every read-side operation (read, glob, grep).
 *
 * @throws MemoryStoreError `invalid_argument` when `root` is not absolute; fs errors while resolving the root.
 */
export async function confineToMemoryRoot(root: string, target: string): Promise<ConfinedTarget> {
  if (!path.isAbsolute(root)) {
    throw new MemoryStoreError('invalid_argument', `The memory root must be absolute, got ${JSON.stringify(root)}`, {
      root,
    });
  }
  if (target.includes('\0')) return { ok: false, rule: 'nul-byte', why: 'the path contains a NUL byte' };
  if (!path.isAbsolute(target)) {
    return {
      ok: false,
      rule: 'absolute-path',
      why: 'paths must be absolute; use the paths given in the task verbatim',
    };
  }
  const lexical = lengthProblem(path.resolve(target));
  if (lexical !== null) return lexical;

  const canonicalRoot = await canonicalPath(root);
  let canonical: string;
  try {
    canonical = await canonicalPath(target);
  } catch (error) {
    if (error instanceof MemoryStoreError) return { ok: false, rule: 'symlink-loop', why: 'too many symbolic links' };
    return { ok: false, rule: 'unresolvable-path', why: `it cannot be resolved (${errnoCode(error) ?? 'error'})` };
  }
  const resolvedLength = lengthProblem(canonical);
  if (resolvedLength !== null) return { ...resolvedLength, canonical };
  const relative = path.relative(canonicalRoot, canonical);
  // `path.relative` rather than `startsWith(root)`: `<root>-evil` is a sibling, not a child.
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    return { ok: false, rule: 'memory-root', why: `it is outside the memory tree ${root}`, canonical };
  }
  return { ok: true, canonical, canonicalRoot, segments: relative === '' ? [] : relative.split(path.sep) };
}

function lengthProblem(absolute: string): { ok: false; rule: WriteRule; why: string } | null {
  if (Buffer.byteLength(absolute, 'utf8') > MAX_PATH_BYTES) {
    return { ok: false, rule: 'path-too-long', why: `the path is longer than ${MAX_PATH_BYTES} bytes` };
  }
  const long = absolute.split(path.sep).find((segment) => Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES);
  if (long !== undefined) {
    return { ok: false, rule: 'segment-too-long', why: `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes` };
  }
  return null;
}

/**
 * Decides whether `request.actor` may write `request.target`.
 * The target is canonicalised **first** and every rule runs on the canonical path. Rules, in order:
 * `memory-write-disabled`, `invalid-actor`, then {@link confineToMemoryRoot}'s (`nul-byte`, `absolute-path`,
 * `path-too-long`, `segment-too-long`, `symlink-loop`, `unresolvable-path`, `memory-root`), then the per-actor rules
 * of {@link evaluateWriteRules}:
 * - writer: only the parent session's `checkpoint.md`, `checkpoint-<topic>.md`, `notes.md` and the current
 *   project's `MEMORY.md`, `MEMORY-<topic>.md` (topic `[A-Za-z0-9_-]{1,80}`, exact case);
 * - main agent: its session's `notes.md` and free keys `sessions/<sid>/<key>.md` (not writer-owned, never `tasks/`);
 * - subagent bound to `T<n>`: `.md` files under `sessions/<sid>/tasks/T<n>/`, at most 3 levels deep.
 *
 * Never throws for a bad target: every refusal is a decision naming the rule and listing the allowed paths.
 *
 * @throws MemoryStoreError `invalid_argument` when `root` is not absolute; fs errors while resolving the root.
 */
export async function checkMemoryWrite(request: MemoryWriteRequest): Promise<GuardDecision> {
  const { root, target, actor } = request;
  const allowed = actorIsValid(actor) ? allowedWritePaths(path.resolve(root), actor) : [];
  const deny = (rule: WriteRule, why: string, canonical?: string, heading = true): GuardDecision => {
    const resolved = canonical !== undefined && canonical !== target ? ` (resolves to ${canonical})` : '';
    const list = heading && allowed.length > 0
      ? `\n${actorLabel(actor)} may write only:\n${allowed.map((entry) => `  ${entry}`).join('\n')}`
      : '';
    const message = `Refused ${JSON.stringify(target)}${resolved}: ${why} [rule: ${rule}].${list}`;
    return {
      allowed: false,
      rule,
      message,
      allowed_paths: heading ? allowed : [],
      ...(canonical === undefined ? {} : { canonical }),
    };
  };

  if (request.disableWrite) {
    return deny(
      'memory-write-disabled',
      'memory writing is turned off by the configuration key memory.disable_write, so every memory path is ' +
        'refused; existing memory can still be read. Set memory.disable_write to false to allow writes again',
      undefined,
      false,
    );
  }
  if (!actorIsValid(actor)) {
    return deny('invalid-actor', `the actor's ids are malformed (${JSON.stringify(actor)})`, undefined, false);
  }
  const confined = await confineToMemoryRoot(root, target);
  if (!confined.ok) return deny(confined.rule, confined.why, confined.canonical);
  const verdict = evaluateWriteRules(confined.segments, actor);
  if (!verdict.ok) return deny(verdict.rule, verdict.why, confined.canonical);
  return { allowed: true, canonical: confined.canonical };
}

function actorIsValid(actor: MemoryActor): boolean {
  if (!MEMORY_ID_PATTERN.test(actor.sessionId) || !MEMORY_ID_PATTERN.test(actor.projectId)) return false;
  return actor.kind !== 'subagent' || TASK_ID_PATTERN.test(actor.taskId);
}
