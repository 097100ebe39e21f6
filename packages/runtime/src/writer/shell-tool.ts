import type { WriterFiles } from '@baton/memory-store';
import { splitScript, type ShellCommand } from './shell-words.ts';

/** What the writer's shell understands, for the model to read when it asks for anything else. */
export const SHELL_HELP =
  "This shell only reads and writes the memory files: cat, cat -n, nl -ba, sed -n 'A,Bp', head [-n N], tail [-n N], wc -l, ls [DIR], grep/rg [-n] PATTERN [PATH], and cat > FILE <<'EOF' … EOF to write a whole file. Commands may be joined with && or ;.";

/** A command as an agent's shell tool sends it: a script, or an argv (`["bash", "-lc", "script"]` unwrapped). */
export function scriptOf(command: unknown): string {
  if (typeof command === 'string') return command;
  if (Array.isArray(command) && command.every((w) => typeof w === 'string')) {
    const argv = command;
    if (argv.length === 3 && /(^|\/)(ba)?sh$/.test(argv[0] as string) && /^-l?c$/.test(argv[1] as string)) return argv[2] as string;
    return argv.map((w) => (/^[\w./:=@%+-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`)).join(' ');
  }
  throw new Error('the command must be a string or a list of words');
}

const lines = (text: string): string[] => {
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all;
};
const numbered = (text: string, from = 1): string => lines(text).map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join('\n');

function count(arg: string | undefined, fallback: number): number {
  const n = Number(arg);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

/** Runs one command against the memory files; its output, or an Error for a command it does not run. */
async function run(cmd: ShellCommand, files: WriterFiles): Promise<string> {
  const [name, ...args] = cmd.words;
  const flags = args.filter((a) => a.startsWith('-'));
  const operands = args.filter((a) => !a.startsWith('-'));
  switch (name) {
    case 'cat': {
      const redirect = args.findIndex((a) => a === '>' || a.startsWith('>'));
      if (redirect >= 0) {
        const target = args[redirect] === '>' ? args[redirect + 1] : args[redirect]?.slice(1);
        if (target === undefined || cmd.heredoc === null) throw new Error("to write a file: cat > FILE <<'EOF' … EOF");
        const r = await files.write(target, cmd.heredoc);
        return `Wrote ${r.bytes} bytes to ${r.path}`;
      }
      const texts = await Promise.all(operands.map((f) => files.read(f)));
      return flags.includes('-n') ? numbered(texts.join('')) : texts.join('');
    }
    case 'nl':
      return numbered(await files.read(operands.at(-1) ?? ''));
    case 'sed': {
      const range = /^(\d+)(?:,(\d+|\$))?p$/.exec(operands[0] ?? '');
      if (!flags.includes('-n') || range === null) throw new Error("only sed -n 'A,Bp' FILE");
      const from = Number(range[1]);
      const to = range[2] === undefined ? from : range[2] === '$' ? Number.MAX_SAFE_INTEGER : Number(range[2]);
      return lines(await files.read(operands[1] ?? '')).slice(from - 1, to).join('\n');
    }
    case 'head':
    case 'tail': {
      const nIndex = args.indexOf('-n');
      const n = nIndex >= 0 ? count(args[nIndex + 1], 10) : count(flags.find((f) => /^-\d+$/.test(f))?.slice(1), 10);
      const file = args.filter((a, i) => !a.startsWith('-') && !(nIndex >= 0 && i === nIndex + 1)).at(-1) ?? '';
      const all = lines(await files.read(file));
      return (name === 'head' ? all.slice(0, n) : all.slice(Math.max(0, all.length - n))).join('\n');
    }
    case 'wc': {
      if (!flags.includes('-l')) throw new Error('only wc -l FILE');
      const counts = await Promise.all(operands.map(async (f) => `${lines(await files.read(f)).length} ${f}`));
      return counts.join('\n');
    }
    case 'ls': {
      const dir = (operands[0] ?? '.').replace(/\/$/, '');
      const r = await files.glob('*', dir);
      return r.files.map((f) => f.slice(f.lastIndexOf('/') + 1)).join('\n') || '(empty)';
    }
    case 'grep':
    case 'rg': {
      const [pattern, path] = operands;
      if (pattern === undefined) throw new Error(`${name} needs a pattern`);
      const r = await files.grep(pattern, path);
      return r.matches.length === 0 ? 'No matches.' : r.matches.join('\n');
    }
    case undefined:
      throw new Error('an empty command');
    default:
      throw new Error(`${name} is not available`);
  }
}

/**
 * The checkpoint writer's shell, for agents whose tools are a shell (Codex's `exec_command`, `bash`): it runs a small
 * set of read commands and a heredoc write against the sandboxed memory files — nothing is executed. A command it
 * does not know is answered with what it does know.
 */
export async function runShell(command: unknown, files: WriterFiles): Promise<string> {
  const commands = splitScript(scriptOf(command));
  const outputs: string[] = [];
  for (const cmd of commands) {
    try {
      outputs.push(await run(cmd, files));
    } catch (err) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}. ${SHELL_HELP}`);
    }
  }
  return outputs.join('\n');
}
