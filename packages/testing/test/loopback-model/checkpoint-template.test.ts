import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CHECKPOINT_TEMPLATE,
  parseCheckpointTemplate,
  stripLineNumbers,
} from '../../src/loopback-model/extractive/checkpoint-template.ts';
import { TEST_TEMPLATE } from './conversation-fixture.ts';

describe('parseCheckpointTemplate', () => {
  it('copies the title, italic lines and headers verbatim', () => {
    const parsed = parseCheckpointTemplate(TEST_TEMPLATE);
    expect(parsed.preamble).toEqual(['# Session checkpoint', '', '_Test template: written by the checkpoint writer; edit only the bodies._']);
    expect(parsed.sections).toHaveLength(11);
    expect(parsed.sections[7]).toEqual({
      number: 8,
      header: '## §8 Errors and fixes',
      instruction: '_Test instruction for section 8._',
      blankBeforeBody: true,
    });
  });

  it('reads line-numbered read results and drops a wrapper before the title', () => {
    const numbered = `<file>\n${TEST_TEMPLATE}`
      .split('\n')
      .map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
      .join('\n');
    expect(parseCheckpointTemplate(numbered)).toEqual(parseCheckpointTemplate(TEST_TEMPLATE));
  });

  it('falls back to defaults for missing files and missing sections', () => {
    expect(parseCheckpointTemplate(undefined)).toBe(DEFAULT_CHECKPOINT_TEMPLATE);
    expect(parseCheckpointTemplate('Error: ENOENT: no such file')).toBe(DEFAULT_CHECKPOINT_TEMPLATE);
    const partial = parseCheckpointTemplate('# Session checkpoint\n\n## §2 Next step\n_Mine._\n(none yet)\n');
    expect(partial.sections.map((s) => s.header)).toEqual(
      DEFAULT_CHECKPOINT_TEMPLATE.sections.map((s) => (s.number === 2 ? '## §2 Next step' : s.header)),
    );
    expect(partial.sections[1]).toMatchObject({ instruction: '_Mine._', blankBeforeBody: false });
  });

  it('leaves text alone when only a few lines start with numbers', () => {
    const text = '# Plan\n1. first\nplain line\nanother plain line\nlast one';
    expect(stripLineNumbers(text)).toBe(text);
  });
});
