import path from 'node:path';

/**
 * Who asks to write into the memory tree. `sessionId` is always the **parent** (user-facing) session: the
 * checkpoint writer runs in a child session but writes its parent's files.
 */
export type MemoryActor =
  | { readonly kind: 'writer'; readonly sessionId: string; readonly projectId: string }
  | { readonly kind: 'main'; readonly sessionId: string; readonly projectId: string }
  | {
      readonly kind: 'subagent';
      readonly sessionId: string;
      readonly projectId: string;
      /** The task the subagent is bound to, `T<n>(.<n>)*`. */
      readonly taskId: string;
    };

/** Task ids as the task tool allocates them: `T1`, `T4.2`, `T4.2.1`. */
export const TASK_ID_PATTERN = /^T\d+(?:\.\d+)*$/;

/**
 * Stable ids of the write rules, in the order the guard applies them. Callers and tests branch on these ids;
 * an id never changes meaning.
 */
export type WriteRule =
  /** `memory.disable_write` is on: every memory write is refused. */
  | 'memory-write-disabled'
  /** The actor's session, project or task id is malformed. */
  | 'invalid-actor'
  /** The target contains a NUL byte. */
  | 'nul-byte'
  /** The target is not an absolute path. */
  | 'absolute-path'
  /** The target is longer than 4096 bytes (raw or canonical). */
  | 'path-too-long'
  /** A path segment is longer than 255 bytes. */
  | 'segment-too-long'
  /** Resolving the target's symbolic links did not terminate. */
  | 'symlink-loop'
  /** The target could not be resolved (permission denied on an ancestor, …). */
  | 'unresolvable-path'
  /** The canonical target is outside the memory root (directly, via `..`, or through a symlink). */
  | 'memory-root'
  /** Under the root but not in `global/`, `projects/<pid>/` or `sessions/<sid>/`. */
  | 'unknown-scope'
  /** `global/` is the user's memory: read-only for every agent. */
  | 'global-read-only'
  /** A project other than the actor's current project. */
  | 'other-project'
  /** A session other than the actor's (parent) session. */
  | 'other-session'
  /** `sessions/<sid>/tasks/` belongs to task-bound subagents. */
  | 'tasks-reserved'
  /** A subagent writing into another task's directory. */
  | 'other-task'
  /** A task file nested deeper than {@link MAX_TASK_DEPTH} levels, or the task directory itself. */
  | 'task-depth'
  /** The file name does not end in `.md`. */
  | 'not-markdown'
  /** The name differs from an allowed one only by letter case (`Checkpoint.md`, `MEMORY.MD`, `NOTES.md`). */
  | 'name-case'
  /** The writer's target is none of its five allowed shapes. */
  | 'writer-allowlist'
  /** A non-writer targeting a file only the checkpoint writer may write. */
  | 'writer-owned-file'
  /** The main agent outside its session's direct `<key>.md` files. */
  | 'main-session-only'
  /** A subagent outside its task directory. */
  | 'subagent-task-only'
  /** A key or directory name with characters outside `[A-Za-z0-9_-]` (dots, spaces, leading dot, …). */
  | 'invalid-key';

/** Outcome of {@link evaluateWriteRules}. */
export type RuleVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly rule: WriteRule; readonly why: string };

/** Deepest nesting below `tasks/<TID>/` a subagent may write: `a.md`, `d/a.md`, `d/e/a.md`. */
export const MAX_TASK_DEPTH = 3;

// Spillover topics and free keys: short, and made of characters that cannot form a path or a hidden file.
const TOPIC = '[A-Za-z0-9_-]{1,80}';
const SESSION_FILE = new RegExp(`^(?:checkpoint\\.md|notes\\.md|checkpoint-${TOPIC}\\.md)$`);
const PROJECT_FILE = new RegExp(`^(?:MEMORY\\.md|MEMORY-${TOPIC}\\.md)$`);
const SESSION_FILE_ANY_CASE = new RegExp(SESSION_FILE.source, 'i');
const PROJECT_FILE_ANY_CASE = new RegExp(PROJECT_FILE.source, 'i');
const KEY = new RegExp(`^${TOPIC}$`);
const TASK_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,79}$/;

const refuse = (rule: WriteRule, why: string): RuleVerdict => ({ ok: false, rule, why });
const OK: RuleVerdict = { ok: true };

/**
 * Applies the per-actor write rules to a canonical target given as its segments relative to the
 * canonical memory root (so `..`, `//` and symlinks are already gone). Pure: touches nothing on disk.
 *
 * Case rules: names are compared **case-sensitively** (`checkpoint.md`, `notes.md`, `MEMORY.md`, the `checkpoint-`
 * and `MEMORY-` prefixes, the lower-case `.md` extension, the `T` of task ids). A name that matches an allowed one
 * only when case is ignored is refused with `name-case`, never silently accepted: on a case-insensitive filesystem
 * it would alias the real file, on a case-sensitive one it would be a file nobody reads. For the same reason the
 * main agent's free keys may not be any case variant of a writer-owned name.
 */
export function evaluateWriteRules(segments: readonly string[], actor: MemoryActor): RuleVerdict {
  const [scope, owner, ...rest] = segments;
  if (scope === 'global') return refuse('global-read-only', 'global memory is read-only for agents');
  if ((scope !== 'projects' && scope !== 'sessions') || owner === undefined || rest.length === 0) {
    return refuse('unknown-scope', 'memory files live under projects/<project>/ or sessions/<session>/');
  }
  if (scope === 'projects') {
    if (owner !== actor.projectId) {
      return refuse('other-project', `it belongs to project ${owner}, not the current project ${actor.projectId}`);
    }
    return projectRules(rest, actor);
  }
  if (owner !== actor.sessionId) {
    return refuse('other-session', `it belongs to session ${owner}, not this session ${actor.sessionId}`);
  }
  return sessionRules(rest, actor);
}

function projectRules(rest: readonly string[], actor: MemoryActor): RuleVerdict {
  const name = rest.join('/');
  if (actor.kind === 'subagent') {
    return refuse('subagent-task-only', 'a task-bound subagent writes only in its task directory');
  }
  if (actor.kind === 'main') {
    if (rest.length === 1 && /^memory/i.test(name)) {
      return refuse('writer-owned-file', 'project memory is written only by the checkpoint writer');
    }
    return refuse('main-session-only', "the main agent writes only its own session's files");
  }
  if (rest.length !== 1) return refuse('writer-allowlist', 'no subdirectories are allowed in the project directory');
  return fileName(name, PROJECT_FILE, PROJECT_FILE_ANY_CASE);
}

function sessionRules(rest: readonly string[], actor: MemoryActor): RuleVerdict {
  const [first = '', ...below] = rest;
  if (first.toLowerCase() === 'tasks' && below.length > 0) {
    if (actor.kind !== 'subagent') {
      return refuse('tasks-reserved', 'tasks/ holds the journals of task-bound subagents; only they write there');
    }
    return taskRules(below, actor.taskId);
  }
  if (actor.kind === 'subagent') {
    return refuse('subagent-task-only', `a subagent bound to ${actor.taskId} writes only under tasks/${actor.taskId}/`);
  }
  if (rest.length !== 1) {
    return actor.kind === 'writer'
      ? refuse('writer-allowlist', 'no subdirectories are allowed in the session directory')
      : refuse('main-session-only', "the main agent writes only files directly in its session's directory");
  }
  if (actor.kind === 'writer') return fileName(first, SESSION_FILE, SESSION_FILE_ANY_CASE);
  return mainSessionFile(first);
}

function mainSessionFile(name: string): RuleVerdict {
  const extension = markdownExtension(name);
  if (!extension.ok) return extension;
  if (name === 'notes.md') return OK;
  const lower = name.toLowerCase();
  if (lower === 'notes.md') return refuse('name-case', 'the scratchpad is notes.md, in lower case');
  if (lower.startsWith('checkpoint')) {
    return refuse('writer-owned-file', 'checkpoint files are written only by the checkpoint writer');
  }
  if (!KEY.test(name.slice(0, -'.md'.length))) {
    return refuse('invalid-key', 'a memory key is 1–80 characters from A–Z, a–z, 0–9, "_" and "-", then .md');
  }
  return OK;
}

function taskRules(below: readonly string[], taskId: string): RuleVerdict {
  const [task = '', ...inside] = below;
  if (task !== taskId) return refuse('other-task', `this subagent is bound to ${taskId}, not ${task}`);
  if (inside.length === 0 || inside.length > MAX_TASK_DEPTH) {
    return refuse('task-depth', `name a .md file inside tasks/${taskId}/, at most ${MAX_TASK_DEPTH} levels deep`);
  }
  if (!inside.every((segment) => TASK_SEGMENT.test(segment))) {
    return refuse('invalid-key', 'task file and directory names use A–Z, a–z, 0–9, "_", "-" and "." (not leading)');
  }
  return markdownExtension(inside.at(-1) ?? '');
}

function fileName(name: string, exact: RegExp, anyCase: RegExp): RuleVerdict {
  const extension = markdownExtension(name);
  if (!extension.ok) return extension;
  if (exact.test(name)) return OK;
  if (anyCase.test(name)) return refuse('name-case', 'file names are case-sensitive');
  return refuse('writer-allowlist', 'it is not one of the files the checkpoint writer owns');
}

function markdownExtension(name: string): RuleVerdict {
  if (name.endsWith('.md')) return OK;
  if (name.toLowerCase().endsWith('.md')) return refuse('name-case', 'the extension must be a lower-case .md');
  return refuse('not-markdown', 'memory files are markdown and end in .md');
}

/**
 * The absolute paths (and `<topic>`/`<key>` patterns) `actor` may write, computed for its parent session and
 * current project under `root`. Shown in every refusal so the model can correct itself.
 */
export function allowedWritePaths(root: string, actor: MemoryActor): string[] {
  const session = path.join(root, 'sessions', actor.sessionId);
  const project = path.join(root, 'projects', actor.projectId);
  switch (actor.kind) {
    case 'writer':
      return [
        path.join(session, 'checkpoint.md'),
        path.join(session, 'checkpoint-<topic>.md'),
        path.join(session, 'notes.md'),
        path.join(project, 'MEMORY.md'),
        path.join(project, 'MEMORY-<topic>.md'),
      ];
    case 'main':
      return [path.join(session, 'notes.md'), path.join(session, '<key>.md')];
    case 'subagent': {
      const task = path.join(session, 'tasks', actor.taskId);
      return [path.join(task, 'progress.md'), path.join(task, '<name>.md'), path.join(task, '<dir>', '<name>.md')];
    }
  }
}

/** How refusals name the actor: "The checkpoint writer", "The main agent", "A subagent bound to T4". */
export function actorLabel(actor: MemoryActor): string {
  switch (actor.kind) {
    case 'writer':
      return 'The checkpoint writer';
    case 'main':
      return 'The main agent';
    case 'subagent':
      return `A subagent bound to ${actor.taskId}`;
  }
}
