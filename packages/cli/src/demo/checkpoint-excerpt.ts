/**
 * The first `maxLines` non-empty lines of a checkpoint section, found by its heading marker (e.g. `§1`): the lines
 * after `## §1 …` up to the next `## ` heading. Empty when the section is missing or empty.
 */
export function sectionExcerpt(checkpoint: string, marker: string, maxLines: number): { heading: string | null; lines: string[] } {
  const lines = checkpoint.split('\n');
  const start = lines.findIndex((l) => /^#{2,3}\s/.test(l) && l.includes(marker));
  if (start < 0) return { heading: null, lines: [] };
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,2}\s/.test(line)) break;
    const trimmed = line.trim();
    // blank lines, comments and the template's italic guidance lines are not content
    if (trimmed === '' || trimmed.startsWith('<!--') || /^_.*_$/.test(trimmed)) continue;
    out.push(line);
    if (out.length >= maxLines) break;
  }
  return { heading: (lines[start] ?? '').replace(/^#+\s*/, ''), lines: out };
}
