import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addMemoryRule } from '../../src/loopback-model/extractive/memory-rule.ts';

const template = readFileSync(new URL('../../../memory-store/prompts/memory-template.md', import.meta.url), 'utf8');

describe('addMemoryRule (the fake writer’s edit of MEMORY.md)', () => {
  it('replaces the Rules placeholder with the rule and appends later rules after it, leaving other sections alone', () => {
    const once = addMemoryRule(template, 'keep the API on port 8080');
    expect(once).toContain('## Rules\n_Hard constraints');
    expect(once).toMatch(/## Rules\n_[^\n]*_\n\n- keep the API on port 8080\n\n## Architecture decisions/);
    const twice = addMemoryRule(once, 'never push to main');
    expect(twice).toMatch(/\n- keep the API on port 8080\n- never push to main\n\n## Architecture decisions/);
    expect(twice.split('(none yet)')).toHaveLength(once.split('(none yet)').length);
    expect(addMemoryRule(twice, 'never push to main')).toBe(twice);
  });

  it('leaves a file without a Rules section unchanged', () => {
    expect(addMemoryRule('# Project memory\n', 'x')).toBe('# Project memory\n');
  });
});
