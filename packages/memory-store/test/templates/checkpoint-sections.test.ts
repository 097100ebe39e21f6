import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_SECTIONS,
  checkCheckpointStructure,
  parseSections,
} from '../../src/templates/checkpoint-sections.ts';
import { loadPrompt } from '../../src/templates/prompt-registry.ts';

const template = loadPrompt('checkpoint-template');

function sectionText(markdown: string, header: string): string {
  const section = parseSections(markdown).find((candidate) => candidate.header === header);
  if (section === undefined) throw new Error(`no section ${header}`);
  return markdown.slice(section.start, section.end);
}

describe('CHECKPOINT_SECTIONS', () => {
  it('numbers the 11 sections 1..11 with headers of the form "## §N <title>"', () => {
    expect(CHECKPOINT_SECTIONS).toHaveLength(11);
    CHECKPOINT_SECTIONS.forEach((spec, index) => {
      expect(spec.number).toBe(index + 1);
      expect(spec.header).toBe(`## §${index + 1} ${spec.title}`);
    });
  });
});

describe('parseSections', () => {
  it('keeps edited bodies (lists, ### headings, quotes, fenced "## " lines) inside their section', () => {
    const body = [
      '> "Fix the 500 on POST /orders, keep the service on port 8081"',
      '',
      '### Detail',
      '- item one',
      '```md',
      '## not a header: inside a fence',
      '```',
      '',
    ].join('\n');
    const edited = template.replace('(none yet)', body);
    const sections = parseSections(edited);
    expect(sections).toHaveLength(11);
    const first = sections[0];
    expect(first?.header).toBe('## §1 Active intent');
    expect(first?.body).toBe(body.trimEnd());
    expect(first?.italic).toBe(parseSections(template)[0]?.italic);
    expect(checkCheckpointStructure(edited, template).ok).toBe(true);
  });

  it('reports offsets that tile the file from the first header to the end', () => {
    const sections = parseSections(template);
    expect(template.slice(sections[0]?.start ?? -1)).toMatch(/^## §1 /);
    for (let i = 1; i < sections.length; i += 1) expect(sections[i]?.start).toBe(sections[i - 1]?.end);
    expect(sections.at(-1)?.end).toBe(template.length);
  });

  it('accepts CRLF line ends and a section without an italic line', () => {
    const crlf = '# T\r\n\r\n## A\r\n_role_\r\n\r\nbody a\r\n## B\r\nbody b\r\n';
    const [a, b] = parseSections(crlf);
    expect(a).toMatchObject({ header: '## A', title: 'A', italic: '_role_', body: 'body a' });
    expect(b).toMatchObject({ header: '## B', italic: '', body: 'body b' });
  });
});

describe('checkCheckpointStructure', () => {
  it('names a removed section', () => {
    const broken = template.replace(sectionText(template, '## §4 Task tree'), '');
    const result = checkCheckpointStructure(broken, template);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual(['## §4 Task tree: the section is missing']);
  });

  it('names a section moved out of order', () => {
    const s5 = sectionText(template, '## §5 Current work');
    const s6 = sectionText(template, '## §6 Files and code sections');
    const swapped = template.replace(s5 + s6, s6 + s5);
    const result = checkCheckpointStructure(swapped, template);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual(['## §5 Current work: out of order (found after ## §6 Files and code sections)']);
  });

  it('names a changed or removed italic line', () => {
    const italic = parseSections(template)[7]?.italic ?? '';
    const changed = template.replace(italic, '_Errors, whatever._');
    expect(checkCheckpointStructure(changed, template).problems).toEqual([
      '## §8 Errors and fixes: the italic instruction line was changed',
    ]);
    const removed = template.replace(`${italic}\n`, '');
    expect(checkCheckpointStructure(removed, template).problems).toEqual([
      '## §8 Errors and fixes: the italic instruction line is missing',
    ]);
  });

  it('names a wrong title line, a renamed header and a duplicated section', () => {
    const retitled = template.replace('# Session checkpoint', '# Checkpoint');
    expect(checkCheckpointStructure(retitled, template).problems).toEqual([
      'title line: expected "# Session checkpoint", found "# Checkpoint"',
    ]);
    const renamed = template.replace('## §9 Live resources', '## §9 Resources');
    expect(checkCheckpointStructure(renamed, template).problems).toEqual([
      'unexpected header "## §9 Resources": only the template\'s sections are allowed',
      '## §9 Live resources: the section is missing',
    ]);
    const s11 = sectionText(template, '## §11 Open notes');
    const duplicated = `${template}\n${s11}`;
    expect(checkCheckpointStructure(duplicated, template).problems).toEqual([
      '## §11 Open notes: the section appears more than once',
    ]);
  });

  it('names a legacy-style header bolted onto the template', () => {
    const hybrid = `${template}\n## Discovered\n- something\n`;
    const result = checkCheckpointStructure(hybrid, template);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual(['unexpected header "## Discovered": only the template\'s sections are allowed']);
  });
});
