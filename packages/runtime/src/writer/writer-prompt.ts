import type { Task } from '@baton/actors';
import { loadPrompt, renderBudgetTable, renderPrompt, type Budgets, type MemoryPaths } from '@baton/memory-store';

const ICONS: Readonly<Record<Task['status'], string>> = { open: '🔵', in_progress: '🔄', blocked: '🟡', done: '✅', abandoned: '❌' };

/** Renders the parent session's task tree as indented lines (the same text the `task` tool returns). */
export function renderTaskTree(tasks: readonly Task[]): string {
  if (tasks.length === 0) return '(no tasks reported)';
  const ids = new Set(tasks.map((t) => t.id));
  const children = new Map<string | undefined, Task[]>();
  for (const t of tasks) {
    const parent = t.parent_id !== undefined && ids.has(t.parent_id) ? t.parent_id : undefined;
    children.set(parent, [...(children.get(parent) ?? []), t]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number): void => {
    for (const t of children.get(parent) ?? []) {
      lines.push(`${'  '.repeat(depth)}- ${ICONS[t.status]} ${t.id}: ${t.summary}${t.focus === true ? ' (focus)' : ''}`);
      walk(t.id, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

/** The writer task message (SPEC §2.3): our prompt text with the four absolute paths and the inlined task tree. */
export function composeWriterTask(options: {
  readonly paths: MemoryPaths;
  readonly tools: readonly string[];
  readonly tasks: readonly Task[];
  readonly boundary: string;
  readonly watermark: string | null;
  /** The SUBAGENT PROGRESS block (empty when no task journal changed). */
  readonly progress: string;
  readonly budgets: Budgets;
}): string {
  const { paths } = options;
  const range =
    `This checkpoint covers the conversation up to message ${options.boundary}` +
    (options.watermark !== null ? ` (the previous one covered up to ${options.watermark}).` : '.') +
    `\nPrevious checkpoint: ${paths.checkpoint}\nPrevious memory: ${paths.memory}\nRead both before writing.`;
  return renderPrompt('writer-task', {
    TOOLS: options.tools.join(', '),
    CHECKPOINT_PATH: paths.checkpoint,
    MEMORY_PATH: paths.memory,
    TASK_MEM_DIR: paths.tasksDir,
    NOTES_PATH: paths.notes,
    SUBAGENT_PROGRESS: options.progress,
    NOTES_TEMPLATE: loadPrompt('notes-template'),
    SECTION_BUDGETS: renderBudgetTable(options.budgets),
    TASK_TREE: renderTaskTree(options.tasks),
    RANGE: range,
  });
}

/** System prompt of a delta-mode writer, which does not fork the agent's prefix. */
export function deltaSystemPrompt(): string {
  return loadPrompt('writer-system').trimEnd();
}
