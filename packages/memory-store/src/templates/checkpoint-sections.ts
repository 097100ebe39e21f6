/**
 * The 11 sections of `checkpoint.md`, a `## ` section parser and a structure check against the current template
 * (the structure part; `validator.ts` builds the full validation on top of it).
 */

/** One checkpoint section as the template defines it. */
export interface CheckpointSectionSpec {
  readonly number: number;
  readonly title: string;
  /** The header line, verbatim: `## §<number> <title>`. */
  readonly header: string;
}

const TITLES = [
  'Active intent',
  'Next concrete action',
  'Directives (this session)',
  'Task tree',
  'Current work',
  'Files and code sections',
  'Discovered knowledge (cross-task)',
  'Errors and fixes',
  'Live resources',
  'Design decisions and discussion outcomes',
  'Open notes',
] as const;

/** The 11 checkpoint sections, in template order. */
export const CHECKPOINT_SECTIONS: readonly CheckpointSectionSpec[] = TITLES.map((title, index) => ({
  number: index + 1,
  title,
  header: `## §${index + 1} ${title}`,
}));

/** One `## ` section of a markdown file. */
export interface ParsedSection {
  /** Header text without the leading `## ` (e.g. `§4 Task tree`). */
  readonly title: string;
  /** The header line without trailing whitespace (e.g. `## §4 Task tree`). */
  readonly header: string;
  /** The first non-blank line under the header when it is an `_…_` italic line, else the empty string. */
  readonly italic: string;
  /** Text after the italic line (after the header when there is none), blank lines around it removed. */
  readonly body: string;
  /** Offset of the header line's first character in the parsed text. */
  readonly start: number;
  /** Offset just past the section: the next header's start, or the text's length. */
  readonly end: number;
}

/** What kind of structure problem a {@link StructureIssue} is. */
export type StructureIssueKind =
  /** The title line differs from the template's. */
  | 'title'
  /** The italic line under the title was changed or removed. */
  | 'title-italic'
  /** A `## ` header the template does not have. */
  | 'unexpected'
  /** A template header appears more than once. */
  | 'duplicate'
  /** A template header comes after one that follows it in the template. */
  | 'order'
  /** The italic instruction line under a header is missing or changed. */
  | 'italic'
  /** A template header is absent. */
  | 'missing';

/** One structure problem, as data. */
export interface StructureIssue {
  readonly kind: StructureIssueKind;
  /** The header concerned (absent for the title kinds). */
  readonly header?: string;
  /** One human-readable sentence, the same as the matching entry of {@link StructureCheck.problems}. */
  readonly message: string;
}

/** Result of {@link checkCheckpointStructure}. */
export interface StructureCheck {
  readonly ok: boolean;
  /** One human-readable sentence per problem, naming the section concerned. */
  readonly problems: string[];
  /** The same problems as data, in the same order. */
  readonly issues: StructureIssue[];
}

interface Line {
  readonly text: string;
  readonly start: number;
}

/**
 * Splits markdown into its `## ` sections. Text before the first header is not a section. Lines inside fenced
 * code blocks never start a section, and anything a writer puts inside a body (lists, `###` sub-headings, quotes)
 * stays in that body. Both LF and CRLF line ends are accepted.
 */
export function parseSections(markdown: string): ParsedSection[] {
  const lines = splitLines(markdown);
  const headerIndexes: number[] = [];
  let fence: string | null = null;
  lines.forEach((line, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line.text)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return;
    }
    if (fence === null && line.text.startsWith('## ')) headerIndexes.push(index);
  });

  return headerIndexes.map((headerIndex, i) => {
    const headerLine = lines[headerIndex] as Line;
    const nextHeader = headerIndexes[i + 1];
    const end = nextHeader === undefined ? markdown.length : (lines[nextHeader] as Line).start;
    const header = headerLine.text.trimEnd();
    let bodyFrom = headerIndex + 1;
    let italic = '';
    const lastLine = nextHeader ?? lines.length;
    while (bodyFrom < lastLine && (lines[bodyFrom] as Line).text.trim() === '') bodyFrom += 1;
    const candidate = bodyFrom < lastLine ? (lines[bodyFrom] as Line).text.trim() : '';
    if (isItalicLine(candidate)) {
      italic = candidate;
      bodyFrom += 1;
    }
    const bodyStart = bodyFrom < lines.length ? (lines[bodyFrom] as Line).start : markdown.length;
    const body = markdown
      .slice(Math.min(bodyStart, end), end)
      .replace(/^(?:[ \t]*\r?\n)+/, '')
      .trimEnd();
    return { title: header.slice(3).trim(), header, italic, body, start: headerLine.start, end };
  });
}

/**
 * Checks that `markdown` keeps the structure of the checkpoint `template`: the same title line and top italic
 * line, every template section header present exactly once and in template order, no other `## ` header, and under
 * each header the template's italic line unchanged. Bodies are not inspected.
 */
export function checkCheckpointStructure(markdown: string, template: string): StructureCheck {
  const issues: StructureIssue[] = [];
  const report = (kind: StructureIssueKind, message: string, header?: string): void => {
    issues.push(header === undefined ? { kind, message } : { kind, header, message });
  };
  const expectedPreamble = preamble(template);
  const actualPreamble = preamble(markdown);
  if (actualPreamble.title !== expectedPreamble.title) {
    report(
      'title',
      `title line: expected ${JSON.stringify(expectedPreamble.title)}, found ${JSON.stringify(actualPreamble.title)}`,
    );
  }
  if (actualPreamble.italic !== expectedPreamble.italic) {
    report('title-italic', 'title: the italic line under the title was changed or removed');
  }

  const expected = parseSections(template);
  const actual = parseSections(markdown);
  const expectedHeaders = expected.map((section) => section.header);
  const found: number[] = [];
  for (const section of actual) {
    const index = expectedHeaders.indexOf(section.header);
    if (index === -1) {
      report(
        'unexpected',
        `unexpected header ${JSON.stringify(section.header)}: only the template's sections are allowed`,
        section.header,
      );
      continue;
    }
    if (found.includes(index)) {
      report('duplicate', `${section.header}: the section appears more than once`, section.header);
      continue;
    }
    const previous = found.at(-1);
    if (previous !== undefined && previous > index) {
      report('order', `${section.header}: out of order (found after ${expectedHeaders[previous] ?? '?'})`, section.header);
    }
    found.push(index);
    const want = expected[index]?.italic ?? '';
    if (section.italic !== want) {
      report(
        'italic',
        section.italic === ''
          ? `${section.header}: the italic instruction line is missing`
          : `${section.header}: the italic instruction line was changed`,
        section.header,
      );
    }
  }
  expectedHeaders.forEach((header, index) => {
    if (!found.includes(index)) report('missing', `${header}: the section is missing`, header);
  });
  return { ok: issues.length === 0, problems: issues.map((issue) => issue.message), issues };
}

function preamble(markdown: string): { title: string; italic: string } {
  const firstSection = parseSections(markdown)[0];
  const head = markdown.slice(0, firstSection?.start ?? markdown.length);
  const nonBlank = splitLines(head)
    .map((line) => line.text.trim())
    .filter((text) => text !== '');
  const title = nonBlank[0] ?? '';
  const italic = nonBlank.slice(1).find(isItalicLine) ?? '';
  return { title, italic };
}

function isItalicLine(text: string): boolean {
  return text.length >= 3 && text.startsWith('_') && text.endsWith('_') && !text.startsWith('__');
}

function splitLines(markdown: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start < markdown.length) {
    const newline = markdown.indexOf('\n', start);
    const stop = newline === -1 ? markdown.length : newline;
    lines.push({ text: markdown.slice(start, stop).replace(/\r$/, ''), start });
    start = stop + 1;
  }
  return lines;
}
