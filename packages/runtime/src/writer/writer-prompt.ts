import type { Task } from '@baton/actors';
import { fillLabel, loadPrompt, loadPromptLabels, renderBudgetTable, renderPrompt, type Budgets, type MemoryPaths } from '@baton/memory-store';

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

const GUIDANCE_KEYS = [
  'header',
  'checkpoint_intent_unquoted',
  'checkpoint_missing',
  'checkpoint_structure',
  'memory_structure',
  'memory_entry',
  'memory_duplicate_title',
  'index_line',
  'other',
] as const;

/** The guidance line for a validation rule a previous writer broke. */
function guidanceKey(rule: string): (typeof GUIDANCE_KEYS)[number] {
  if (rule === 'checkpoint-intent-unquoted') return 'checkpoint_intent_unquoted';
  if (rule === 'checkpoint-missing') return 'checkpoint_missing';
  if (rule === 'memory-duplicate-title') return 'memory_duplicate_title';
  if (rule.startsWith('checkpoint-')) return 'checkpoint_structure';
  if (rule.startsWith('memory-entry-')) return 'memory_entry';
  if (rule.startsWith('memory-')) return 'memory_structure';
  if (rule.startsWith('index-line-') || rule === 'nested-spillover') return 'index_line';
  return 'other';
}

/** What the previous writer's refused draft broke, and how to meet it (empty when it broke nothing). */
export function renderGuidance(rules: readonly string[]): string {
  if (rules.length === 0) return '';
  const labels = loadPromptLabels('writer-guidance', GUIDANCE_KEYS);
  const lines = [...new Set(rules.map((rule) => (guidanceKey(rule) === 'other' ? fillLabel(labels.other, { RULE: rule }) : labels[guidanceKey(rule)])))];
  return [labels.header, ...lines.map((l) => `- ${l}`)].join('\n');
}

/** The user's latest explicit requests as the writer is shown them (empty when there are none). */
export function renderUserRequests(requests: readonly string[]): string {
  if (requests.length === 0) return '';
  return renderPrompt('writer-user-requests', { REQUESTS: requests.map((r) => r.split('\n').map((line) => `> ${line}`).join('\n')).join('\n\n') }).trimEnd();
}

/** The writer task message: our prompt text with the four absolute paths and the inlined task tree. */
export function composeWriterTask(options: {
  readonly paths: MemoryPaths;
  readonly tools: readonly string[];
  readonly tasks: readonly Task[];
  readonly boundary: string;
  readonly watermark: string | null;
  /** The SUBAGENT PROGRESS block (empty when no task journal changed). */
  readonly progress: string;
  readonly budgets: Budgets;
  /** The user's latest explicit requests, verbatim, whether or not the covered range holds them. */
  readonly userRequests?: readonly string[];
  /** Rules the previous writer's refused draft broke. */
  readonly guidance?: readonly string[];
  /**
   * The checkpoint file holds a checkpoint this session's writers did not write (no watermark of its own yet): the one
   * of the session it continues. The writer is told to update it, not to start over.
   */
  readonly inherited?: boolean;
}): string {
  const { paths } = options;
  const range = [
    `This checkpoint covers the conversation up to message ${options.boundary}` +
      (options.watermark !== null ? ` (the previous one covered up to ${options.watermark}).` : '.') +
      `\nPrevious checkpoint: ${paths.checkpoint}\nPrevious memory: ${paths.memory}\nRead both before writing.`,
    options.inherited === true ? loadPrompt('writer-inherited').trimEnd() : '',
    renderUserRequests(options.userRequests ?? []),
    renderGuidance(options.guidance ?? []),
  ]
    .filter((part) => part !== '')
    .join('\n\n');
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
