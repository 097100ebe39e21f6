import { describe, expect, it } from 'vitest';
import type { ChatTool } from '../../src/loopback-model/chat-request.ts';
import { callArguments, pickWriterTools } from '../../src/loopback-model/extractive/writer-tools.ts';
import { inlinedTaskTree, parseWriterPaths } from '../../src/loopback-model/extractive/writer-task.ts';

function tool(name: string, properties: Record<string, object>, required: string[] = []): ChatTool {
  return { type: 'function', function: { name, parameters: { type: 'object', properties, required } } };
}
const s = { type: 'string' };

describe('pickWriterTools', () => {
  it("binds Baton's own read/write tools", () => {
    const picked = pickWriterTools([tool('edit', { path: s, old_string: s, new_string: s }), tool('read', { path: s }), tool('write', { path: s, content: s })]);
    expect(picked.read).toEqual({ name: 'read', pathArg: 'path', contentArg: undefined, extra: {} });
    expect(picked.write).toEqual({ name: 'write', pathArg: 'path', contentArg: 'content', extra: {} });
  });

  it('binds Claude-style Read/Write and skips tools whose required arguments it cannot fill', () => {
    const picked = pickWriterTools([
      tool('TodoWrite', { todos: { type: 'array' } }, ['todos']),
      tool('NotebookWrite', { notebook_path: s, cell: s, content: s }, ['notebook_path', 'cell', 'content']),
      tool('Read', { file_path: s, offset: { type: 'number' } }, ['file_path']),
      tool('Write', { file_path: s, content: s }, ['file_path', 'content']),
    ]);
    expect(picked.read?.name).toBe('Read');
    expect(picked.write).toMatchObject({ name: 'Write', pathArg: 'file_path', contentArg: 'content' });
  });

  it('drives str_replace_editor through its command argument', () => {
    const editor = tool(
      'str_replace_editor',
      { command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] }, path: s, file_text: s, old_str: s },
      ['command', 'path'],
    );
    const picked = pickWriterTools([editor]);
    expect(picked.read === undefined ? undefined : callArguments(picked.read, '/m/c.md')).toEqual({ command: 'view', path: '/m/c.md' });
    expect(picked.write === undefined ? undefined : callArguments(picked.write, '/m/c.md', 'x')).toEqual({
      command: 'create',
      path: '/m/c.md',
      file_text: 'x',
    });
  });

  it('finds nothing usable in unrelated tools', () => {
    expect(pickWriterTools([tool('bash', { command: s }), tool('create_task', { title: s })])).toEqual({ read: undefined, write: undefined });
    expect(pickWriterTools(undefined)).toEqual({ read: undefined, write: undefined });
  });
});

describe('writer task parsing', () => {
  it('reads the four paths, tolerating spaces, list markers and backticks', () => {
    const text = 'intro\n  CHECKPOINT_PATH   =   /m/s/checkpoint.md  \n- `MEMORY_PATH` = `/m/p/MEMORY.md`\nTASK_MEM_DIR=/m/s/tasks\nNOTES_PATH = "/m/s/notes.md"';
    expect(parseWriterPaths(text)).toEqual({
      checkpoint: '/m/s/checkpoint.md',
      memory: '/m/p/MEMORY.md',
      taskMemDir: '/m/s/tasks',
      notes: '/m/s/notes.md',
    });
    expect(parseWriterPaths('no paths here; CHECKPOINT_PATH is mentioned')).toBeUndefined();
  });

  it('finds an inlined task tree, not a sentence mentioning §4', () => {
    const text = [
      'The §4 task tree section lists tasks.',
      '- not a task',
      '',
      'Task tree (from the task tool):',
      '',
      '- 🔄 T1 Fix it',
      '  - 🔵 T1.1 Sub',
      'Write the checkpoint.',
    ].join('\n');
    expect(inlinedTaskTree(text)).toEqual(['- 🔄 T1 Fix it', '  - 🔵 T1.1 Sub']);
    expect(inlinedTaskTree('nothing')).toEqual([]);
  });
});
