import { describe, expect, it } from 'vitest';
import { resolveToolMap } from '../../src/writer/tool-map.ts';

const fn = (name: string, props: string[]) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])) } } });

describe('writer tool map', () => {
  it('uses the declared writer_tools with their argument names', () => {
    const r = resolveToolMap({ write: { name: 'save', args: { path: 'where', content: 'what' } } }, [fn('save', ['where', 'what'])]);
    expect(r.forkPossible).toBe(true);
    expect(r.map.get('save')).toEqual({ tool: 'write', args: { where: 'path', what: 'content' } });
  });

  it('detects common coding-agent schemas when nothing is declared', () => {
    const r = resolveToolMap(null, [fn('Read', ['file_path', 'offset', 'limit']), fn('Write', ['file_path', 'content']), fn('Edit', ['file_path', 'old_string', 'new_string', 'replace_all']), fn('Bash', ['command']), fn('Grep', ['pattern', 'path', 'include'])]);
    expect(r.forkPossible).toBe(true);
    expect(r.map.get('Read')).toEqual({ tool: 'read', args: { file_path: 'path', offset: 'offset', limit: 'limit' } });
    expect(r.map.get('Write')).toEqual({ tool: 'write', args: { file_path: 'path', content: 'content' } });
    expect(r.map.get('Edit')?.tool).toBe('edit');
    expect(r.map.get('Grep')?.tool).toBe('grep');
    expect(r.map.has('Bash')).toBe(false);
    const camel = resolveToolMap(null, [fn('write_file', ['filePath', 'text'])]);
    expect(camel.map.get('write_file')).toEqual({ tool: 'write', args: { filePath: 'path', text: 'content' } });
  });

  it('falls back to delta mode with a reason when no writing tool maps', () => {
    const r = resolveToolMap(null, [fn('read_file', ['file_path']), fn('write_file', ['destination'])]);
    expect(r.forkPossible).toBe(false);
    expect(r.reason).toMatch(/declared no writer_tools.*no writing tool/);
    const declaredMissing = resolveToolMap({ write: { name: 'nope' } }, [fn('bash', ['command'])]);
    expect(declaredMissing.forkPossible).toBe(false);
    expect(declaredMissing.reason).toMatch(/declared writer_tools/);
  });
});

describe('writer tool map for shell agents', () => {
  it("maps a Codex-like agent's shell and free-form apply_patch (no read tool), never an agent's shell beside its read tool", () => {
    const codex = resolveToolMap(null, [
      { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
      { type: 'custom', name: 'apply_patch', format: { type: 'grammar' } },
    ]);
    expect(codex.forkPossible).toBe(true);
    expect(codex.map.get('exec_command')).toEqual({ tool: 'shell', args: { cmd: 'command' } });
    expect(codex.map.get('apply_patch')).toEqual({ tool: 'apply_patch', args: { input: 'patch' } });
    const anthropic = resolveToolMap(null, [
      { name: 'read', input_schema: { type: 'object', properties: { path: {} } } },
      { name: 'bash', input_schema: { type: 'object', properties: { command: {} } } },
      { name: 'write', input_schema: { type: 'object', properties: { path: {}, content: {} } } },
    ]);
    expect(anthropic.map.get('read')?.tool).toBe('read');
    expect(anthropic.map.has('bash')).toBe(false);
  });
});
