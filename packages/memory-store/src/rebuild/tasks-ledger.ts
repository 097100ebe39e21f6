import { loadPromptLabels } from '../templates/prompt-labels.ts';

/**
 * The tasks ledger of the rebuilt context: one line per top-level task and, under a task
 * with sub-tasks, one `Subtasks:` line with a status icon and the id of each.
 */

/** Status of a task, as the agent's task tool reports it. */
export type RebuildTaskStatus = 'open' | 'in_progress' | 'blocked' | 'done' | 'abandoned';

/** One task of the session's task tree (the shape of the protocol's `TaskItem`). */
export interface RebuildTask {
  readonly id: string;
  readonly parent_id?: string | undefined;
  readonly status: RebuildTaskStatus;
  readonly summary: string;
  readonly focus?: boolean | undefined;
}

const LABEL_KEYS = [
  'tasks_none',
  'subtasks',
  'focus',
  'icon_open',
  'icon_in_progress',
  'icon_blocked',
  'icon_done',
  'icon_abandoned',
] as const;

/**
 * The ledger body (without its heading), not yet fitted to a cap: `(none)` for an empty list, else per top-level
 * task (no `parent_id`) in list order `- <id> <status> — <summary>` (with a focus label when `focus` is set) and,
 * when it has sub-tasks, `  Subtasks: <icon><id> / …` listing its descendants depth-first in list order. A task
 * whose parent is not in the list (an orphan) is not shown, nor are its descendants.
 * Line breaks inside a summary are folded into spaces so that every task stays on one line.
 */
export function renderTasksLedger(tasks: readonly RebuildTask[]): string {
  const labels = loadPromptLabels('rebuild-labels', LABEL_KEYS);
  if (tasks.length === 0) return labels.tasks_none;
  const icon: Readonly<Record<RebuildTaskStatus, string>> = {
    open: labels.icon_open,
    in_progress: labels.icon_in_progress,
    blocked: labels.icon_blocked,
    done: labels.icon_done,
    abandoned: labels.icon_abandoned,
  };
  const children = new Map<string, RebuildTask[]>();
  for (const task of tasks) {
    if (task.parent_id === undefined) continue;
    const siblings = children.get(task.parent_id);
    if (siblings === undefined) children.set(task.parent_id, [task]);
    else siblings.push(task);
  }
  const lines: string[] = [];
  // A task id seen twice (a malformed tree) is shown once; this also rules out any cycle.
  const shown = new Set<string>();
  for (const task of tasks) {
    if (task.parent_id !== undefined || shown.has(task.id)) continue;
    shown.add(task.id);
    const focus = task.focus === true ? ` ${labels.focus}` : '';
    lines.push(`- ${oneLine(task.id)}${focus} ${task.status} — ${oneLine(task.summary)}`);
    const descendants: string[] = [];
    const visit = (parentId: string): void => {
      for (const child of children.get(parentId) ?? []) {
        if (shown.has(child.id)) continue;
        shown.add(child.id);
        descendants.push(`${icon[child.status]}${oneLine(child.id)}`);
        visit(child.id);
      }
    };
    visit(task.id);
    if (descendants.length > 0) lines.push(`  ${labels.subtasks} ${descendants.join(' / ')}`);
  }
  return lines.length > 0 ? lines.join('\n') : labels.tasks_none;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
