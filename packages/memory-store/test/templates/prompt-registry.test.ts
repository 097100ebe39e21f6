import { describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import {
  CHECKPOINT_SECTIONS,
  checkCheckpointStructure,
  parseSections,
} from '../../src/templates/checkpoint-sections.ts';
import {
  PROMPT_NAMES,
  type PromptName,
  loadPrompt,
  promptPlaceholders,
  renderPrompt,
} from '../../src/templates/prompt-registry.ts';

describe('prompt registry', () => {
  it('loads every registered prompt as non-empty text, the same string on each call', () => {
    for (const name of PROMPT_NAMES) {
      const text = loadPrompt(name);
      expect(text.trim().length, name).toBeGreaterThan(0);
      expect(loadPrompt(name)).toBe(text);
    }
  });

  it('ships a checkpoint template that passes its own structure check and matches CHECKPOINT_SECTIONS', () => {
    const template = loadPrompt('checkpoint-template');
    expect(template.startsWith('# Session checkpoint\n')).toBe(true);
    expect(checkCheckpointStructure(template, template)).toEqual({ ok: true, problems: [], issues: [] });
    const sections = parseSections(template);
    expect(sections.map((section) => section.header)).toEqual(CHECKPOINT_SECTIONS.map((spec) => spec.header));
    for (const section of sections) {
      expect(section.italic, section.header).toMatch(/^_[^_].*_$/);
      expect(['(none yet)', '(none)'], section.header).toContain(section.body);
    }
  });

  it('ships a memory template with the four sections and a notes template with the entry heading format', () => {
    const memory = loadPrompt('memory-template');
    expect(memory.startsWith('# Project memory\n')).toBe(true);
    const sections = parseSections(memory);
    expect(sections.map((section) => section.header)).toEqual([
      '## Project context',
      '## Rules',
      '## Architecture decisions',
      '## Discovered durable knowledge',
    ]);
    for (const section of sections) {
      expect(section.italic).not.toBe('');
      expect(section.body).toBe('(none yet)');
    }
    const notes = loadPrompt('notes-template');
    expect(notes.startsWith('# Session notes\n')).toBe(true);
    expect(notes).toContain('## [turn N · YYYY-MM-DDTHH:MMZ]');
  });

  it('declares the writer task placeholders and the four path lines in their exact form', () => {
    expect(promptPlaceholders('writer-task')).toEqual([
      'TOOLS',
      'CHECKPOINT_PATH',
      'MEMORY_PATH',
      'TASK_MEM_DIR',
      'NOTES_PATH',
      'SUBAGENT_PROGRESS',
      'NOTES_TEMPLATE',
      'SECTION_BUDGETS',
      'TASK_TREE',
      'RANGE',
    ]);
    const vars = Object.fromEntries(promptPlaceholders('writer-task').map((key) => [key, `<${key.toLowerCase()}>`]));
    const text = renderPrompt('writer-task', { ...vars, CHECKPOINT_PATH: '/m/sessions/s1/checkpoint.md' });
    expect(text).toMatch(/^CHECKPOINT_PATH = \/m\/sessions\/s1\/checkpoint\.md$/m);
    expect(text).toMatch(/^MEMORY_PATH = <memory_path>$/m);
    expect(text).toMatch(/^TASK_MEM_DIR = <task_mem_dir>$/m);
    expect(text).toMatch(/^NOTES_PATH = <notes_path>$/m);
    expect(text.startsWith('<system-reminder>\n')).toBe(true);
    const afterReminder = text.slice(text.indexOf('</system-reminder>'));
    expect(afterReminder).toContain('Write the next checkpoint for this session.');
    expect(afterReminder).toContain('<range>');
    expect(afterReminder).toContain('CHECKPOINT_COMPLETE');
    expect(text).not.toMatch(/\{\{/);
  });

  it('substitutes in a single pass, keeping braces and $-patterns inside values literal', () => {
    const text = renderPrompt('tool-not-permitted', { TOOL: 'bash', ALLOWED: '{{TOOL}} $& read_file' });
    expect(text).toContain('"bash"');
    expect(text).toContain('{{TOOL}} $& read_file');
  });

  it('throws missing_prompt_var naming every missing placeholder', () => {
    const attempt = () => renderPrompt('validation-reflection', { DETAILS: '- x' });
    expect(attempt).toThrow(MemoryStoreError);
    expect(attempt).toThrow(/\{\{CHECKPOINT_PATH\}\}, \{\{MEMORY_PATH\}\}/);
    try {
      attempt();
    } catch (error) {
      expect((error as MemoryStoreError).code).toBe('missing_prompt_var');
      expect((error as MemoryStoreError).details).toMatchObject({ missing: ['CHECKPOINT_PATH', 'MEMORY_PATH'] });
    }
  });

  it('throws unknown_prompt for a name that is not registered', () => {
    expect(() => loadPrompt('no-such-prompt' as PromptName)).toThrow(/Unknown prompt "no-such-prompt"/);
    expect(() => renderPrompt('../package' as PromptName, {})).toThrow(MemoryStoreError);
  });
});
