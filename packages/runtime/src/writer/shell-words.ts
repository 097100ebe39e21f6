/** One command of a script: its words (quotes removed) and, for `cmd <<'EOF'`, the heredoc's text. */
export interface ShellCommand {
  readonly words: readonly string[];
  readonly heredoc: string | null;
}

/**
 * Splits a shell script into simple commands (separated by `&&`, `;`, `||` or newlines) and each command into words,
 * honouring single and double quotes and backslashes; a `<<'EOF'` / `<<EOF` redirection takes the following lines up
 * to its end marker as the command's input. Pipes, substitutions and other shell syntax are not supported: such a
 * command is returned as it is and refused by whoever runs it. Throws on an unterminated quote or heredoc.
 */
export function splitScript(script: string): ShellCommand[] {
  const out: ShellCommand[] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let heredocMarker: string | null = null;
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (heredoc: string | null = null): void => {
    endWord();
    if (words.length > 0) out.push({ words, heredoc });
    words = [];
  };
  let i = 0;
  while (i < script.length) {
    const c = script[i] as string;
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      word += script.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < script.length && script[j] !== '"'; j++) {
        if (script[j] === '\\' && j + 1 < script.length && '"\\$`'.includes(script[j + 1] as string)) j++;
        word += script[j];
      }
      if (j >= script.length) throw new Error('unterminated double quote');
      inWord = true;
      i = j + 1;
    } else if (c === '\\' && i + 1 < script.length) {
      if (script[i + 1] !== '\n') word += script[i + 1];
      inWord = inWord || script[i + 1] !== '\n';
      i += 2;
    } else if (c === '<' && script.startsWith('<<', i) && !inWord) {
      const m = /^<<-?\s*(['"]?)([A-Za-z0-9_]+)\1/.exec(script.slice(i));
      if (m === null) throw new Error('unreadable heredoc');
      heredocMarker = m[2] as string;
      i += m[0].length;
    } else if (c === '\n' || c === ';' || (c === '&' && script[i + 1] === '&') || (c === '|' && script[i + 1] === '|')) {
      if (heredocMarker !== null && c === '\n') {
        const lines = script.slice(i + 1).split('\n');
        const end = lines.findIndex((l) => l.trim() === heredocMarker);
        if (end < 0) throw new Error(`heredoc not terminated by ${heredocMarker}`);
        endCommand(lines.slice(0, end).join('\n') + '\n');
        heredocMarker = null;
        i += 1 + lines.slice(0, end + 1).join('\n').length;
        continue;
      }
      endCommand();
      i += c === '&' || c === '|' ? 2 : 1;
    } else if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (heredocMarker !== null) throw new Error(`heredoc not terminated by ${heredocMarker}`);
  endCommand();
  return out;
}
