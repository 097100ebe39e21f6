export { MemoryStoreError, errnoCode } from './memory-errors.ts';
export type { MemoryStoreErrorCode, MemoryStoreErrorData } from './memory-errors.ts';
export { MEMORY_ID_PATTERN, memoryPaths } from './memory-paths.ts';
export type { MemoryIds, MemoryPaths } from './memory-paths.ts';
export { PROMPT_NAMES, loadPrompt, promptPlaceholders, renderPrompt } from './prompt-registry.ts';
export type { PromptName } from './prompt-registry.ts';
export { CHECKPOINT_SECTIONS, checkCheckpointStructure, parseSections } from './checkpoint-sections.ts';
export type { CheckpointSectionSpec, ParsedSection, StructureCheck, StructureIssue, StructureIssueKind } from './checkpoint-sections.ts';
export { bootstrapMemory, migrateLegacyMemory } from './bootstrap.ts';
export type { BootstrapResult } from './bootstrap.ts';
export { canonicalPath } from './canonical-path.ts';
export { createWriterFiles } from './writer-files.ts';
export type { EditResult, WriterReadOptions, WriteResult, WriterFiles } from './writer-files.ts';
export { writeFileAtomic, syncDir } from './atomic-file.ts';
export { HistoryStore, contentHash } from './history-store.ts';
export { MemoryCommitJournal } from './commit-journal.ts';
export type { CommitJournal, CommitRecord, CommitEntry, CommitEntryType, CommittedFile } from './commit-journal.ts';
export { commitFiles, recoverCommits, unappliedCommits, fileVersions, committedPaths, liveMatchesHistory } from './staged-commit.ts';
export type { CommitOptions, CommitStep, FileVersion } from './staged-commit.ts';
export { TOKEN_ENCODINGS, TokenCounter, defaultTokenCounter } from './token-counter.ts';
export type { TokenCounterOptions, TokenCounterStats, TokenEncoding } from './token-counter.ts';
export {
  BudgetConfigSchema,
  CHECKPOINT_BUDGET_KEYS,
  DEFAULT_BUDGETS,
  MEMORY_BUDGET_KEYS,
  renderBudgetTable,
  resolveBudgets,
} from './budgets.ts';
export type { BudgetConfig, Budgets, CheckpointBudgetKey, FileBudget, MemoryBudgetKey } from './budgets.ts';
export { decideValidation } from './violation.ts';
export type { ValidationDecision, Violation, ViolationRule, ViolationSeverity } from './violation.ts';
export { validateMemoryFiles } from './validator.ts';
export type { ValidateMemoryFilesInput } from './validator.ts';
export {
  INDEX_LINE_PATTERN,
  SPILLOVER_PREFIX,
  SPILLOVER_TOPIC_MAX_CHARS,
  isIndexLine,
  parseIndexLines,
  parseSpilloverName,
  validateSpillover,
} from './index-lines.ts';
export type { IndexLine, SpilloverOwner } from './index-lines.ts';
export { DISCOVERED_SECTION_TITLE, parseDiscoveredEntries } from './memory-entries.ts';
export type { MemoryEntry } from './memory-entries.ts';
export { renderExtractionReflection, renderValidationReflection } from './reflection.ts';
export type { ReflectionPaths } from './reflection.ts';
export { checkMemoryWrite, confineToMemoryRoot } from './write-guard.ts';
export type { ConfinedTarget, GuardDecision, MemoryWriteRequest } from './write-guard.ts';
export { MAX_TASK_DEPTH, TASK_ID_PATTERN, actorLabel, allowedWritePaths, evaluateWriteRules } from './write-rules.ts';
export type { MemoryActor, RuleVerdict, WriteRule } from './write-rules.ts';
export type { WriterFilesOptions } from './writer-files.ts';
export { GLOB_LIMIT, compileGlob, expandBraces, globFiles, listFiles, splitGlobBase } from './glob.ts';
export type { GlobOptions, GlobResult } from './glob.ts';
export { GREP_LIMIT, GREP_LINE_CHARS, compileGrepPattern, grepFiles } from './grep.ts';
export type { GrepResult } from './grep.ts';
export { applyChunks, parsePatch } from './apply-patch.ts';
export type { PatchChunk, PatchOperation } from './apply-patch.ts';
export { applyPatchTransaction } from './apply-patch-transaction.ts';
export type { ApplyPatchResult, PatchChange, PatchFileSystem } from './apply-patch-transaction.ts';
export { SECTION_CUT_MARKER, TRUNCATION_MARKER, readBudgeted, readSectionAware } from './budgeted-read.ts';
export type { TokenCount } from './budgeted-read.ts';
export {
  diffProgress,
  parseReconcileMarkers,
  parseWrittenAt,
  renderProgressBlock,
  stampWrittenAt,
} from './progress-reconcile.ts';
export type { DiffProgressOptions, ProgressItem } from './progress-reconcile.ts';
export { DEFAULT_REBUILD_CAPS, REBUILD_CAP_KEYS, RebuildCapsConfigSchema, resolveRebuildCaps } from './rebuild-caps.ts';
export type { RebuildCapKey, RebuildCaps, RebuildCapsConfig } from './rebuild-caps.ts';
export { REBUILD_SECTION_NAMES, REBUILD_SECTION_SEPARATOR, renderRebuildContext } from './rebuild-context.ts';
export type { ActiveWriter, RebuildContextInput, RebuildSection, RebuildSectionName, RenderedRebuildContext } from './rebuild-context.ts';
export { renderCheckpointIndex } from './checkpoint-index.ts';
export { renderTailReminder } from './rebuild-tail-reminder.ts';
export type { LastMessageInfo } from './rebuild-tail-reminder.ts';
export { RECENT_USER_SEPARATOR, selectRecentUserInput } from './recent-user-input.ts';
export type { RecentUserBudget, RecentUserEntry, RecentUserMessage } from './recent-user-input.ts';
export { renderTasksLedger } from './tasks-ledger.ts';
export type { RebuildTask, RebuildTaskStatus } from './tasks-ledger.ts';
export { isPushedMemoryKey, memoryKeysToList } from './memory-keys-index.ts';
export { prefixWithin, suffixWithin, truncateHeadTail } from './head-tail-truncate.ts';
export type { HeadTailCut } from './head-tail-truncate.ts';
export { DEFAULT_EXTRACTIVE_SUMMARY_CAP, extractiveSummary } from './extractive-summary.ts';
export type { ExtractiveSummaryOptions } from './extractive-summary.ts';
export type { ChatMessageLike } from './message-parts.ts';
