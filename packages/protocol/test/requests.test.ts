import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { IssueDetail } from '../src/error-reply.ts';
import { parseRequest } from '../src/parse-request.ts';
import { ProtocolError } from '../src/protocol-error.ts';
import {
  AppendRequestSchema,
  CheckpointRequestSchema,
  CloseRequestSchema,
  OpenRequestSchema,
  RebuildRequestSchema,
  RuntimeDrainRequestSchema,
  RuntimeStatusRequestSchema,
  StatusRequestSchema,
  TasksRequestSchema,
} from '../src/requests.ts';

/** Parses and returns the failing paths (throws if the value was accepted). */
function failingPaths(schema: z.ZodType, value: unknown): string[] {
  try {
    parseRequest(schema, value);
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError);
    const error = err as ProtocolError;
    expect(error.code).toBe('bad_request');
    return (error.details as IssueDetail[]).map((d) => d.path);
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

const model = { id: 'gpt-4o', context_window: 128_000 };
const msg = (over: Record<string, unknown> = {}) => ({ id: 'm1', role: 'user', content: 'hi', ...over });

describe('open request', () => {
  it.each([
    ['minimal', { project_id: 'p', model }],
    [
      'everything',
      {
        session_id: 'sess_01-A',
        project_id: '/home/me/repo',
        agent: 'coder',
        model: { ...model, max_output_tokens: 16_000, input_limit: 100_000 },
        system: ['part one', 'part two'],
        tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
        checkpoint: { enabled: true, fork: false, thresholds: ['20%', '100K', '1.5M', 50_000], reserved: 13_000 },
        memory: { disable_write: true },
        writer_tools: {
          write: { name: 'write_file', args: { path: 'file_path', content: 'text' } },
          read: { name: 'read_file' },
          task: { name: 'todo', args: { operation: 'op' } },
        },
      },
    ],
    ['system as a string', { project_id: 'p', model, system: 'You are helpful.' }],
  ])('accepts %s', (_name, value) => {
    expect(parseRequest(OpenRequestSchema, value)).toEqual(value);
  });

  it.each([
    ['missing project_id', { model }, ['project_id']],
    ['empty project_id', { project_id: '', model }, ['project_id']],
    ['missing model', { project_id: 'p' }, ['model']],
    ['model id empty', { project_id: 'p', model: { ...model, id: '' } }, ['model.id']],
    ['context_window not an int', { project_id: 'p', model: { ...model, context_window: 1.5 } }, ['model.context_window']],
    ['context_window as a string', { project_id: 'p', model: { ...model, context_window: '128000' } }, ['model.context_window']],
    ['context_window zero', { project_id: 'p', model: { ...model, context_window: 0 } }, ['model.context_window']],
    ['bad session id', { session_id: 'a.b', project_id: 'p', model }, ['session_id']],
    ['session id too long', { session_id: 'x'.repeat(129), project_id: 'p', model }, ['session_id']],
    ['system of numbers', { project_id: 'p', model, system: [1] }, ['system']],
    ['tools not objects', { project_id: 'p', model, tools: ['read'] }, ['tools.0']],
    ['fork not a bool', { project_id: 'p', model, checkpoint: { fork: 'yes' } }, ['checkpoint.fork']],
    ['threshold negative', { project_id: 'p', model, checkpoint: { thresholds: [-5] } }, ['checkpoint.thresholds.0']],
    ['reserved fractional', { project_id: 'p', model, checkpoint: { reserved: 0.5 } }, ['checkpoint.reserved']],
    ['typo in memory options', { project_id: 'p', model, memory: { disable_writes: true } }, ['memory.disable_writes']],
    ['unknown top-level field', { project_id: 'p', model, colour: 'red' }, ['colour']],
    ['unknown Baton tool', { project_id: 'p', model, writer_tools: { delete: { name: 'rm' } } }, ['writer_tools.delete']],
    [
      'unknown Baton argument',
      { project_id: 'p', model, writer_tools: { write: { name: 'w', args: { file: 'file_path' } } } },
      ['writer_tools.write.args.file'],
    ],
    ['tool mapping without name', { project_id: 'p', model, writer_tools: { read: {} } }, ['writer_tools.read.name']],
    ['not an object', 'open please', ['']],
    ['null body', null, ['']],
  ])('rejects %s', (_name, value, paths) => {
    expect(failingPaths(OpenRequestSchema, value)).toEqual(paths);
  });
});

describe('append request', () => {
  it('accepts 1 and 1000 messages', () => {
    expect(parseRequest(AppendRequestSchema, { messages: [msg()] }).messages).toHaveLength(1);
    const many = Array.from({ length: 1000 }, (_, i) => msg({ id: `m${i}` }));
    expect(parseRequest(AppendRequestSchema, { messages: many }).messages).toHaveLength(1000);
  });

  it('does not check id uniqueness (the daemon deduplicates)', () => {
    expect(() => parseRequest(AppendRequestSchema, { messages: [msg(), msg()] })).not.toThrow();
  });

  it.each([
    ['no messages', { messages: [] }, ['messages']],
    ['1001 messages', { messages: Array.from({ length: 1001 }, (_, i) => msg({ id: `m${i}` })) }, ['messages']],
    ['messages missing', {}, ['messages']],
    ['messages not an array', { messages: msg() }, ['messages']],
    ['bad role', { messages: [msg({ role: 'robot' })] }, ['messages.0.role']],
    ['missing id', { messages: [{ role: 'user', content: 'x' }] }, ['messages.0.id']],
    ['empty id', { messages: [msg({ id: '' })] }, ['messages.0.id']],
    ['numeric id', { messages: [msg({ id: 7 })] }, ['messages.0.id']],
    ['missing content', { messages: [{ id: 'a', role: 'user' }] }, ['messages.0.content']],
    ['content a number', { messages: [msg({ content: 3 })] }, ['messages.0.content']],
    ['content parts not objects', { messages: [msg({ content: ['text'] })] }, ['messages.0.content']],
    ['tool_calls not objects', { messages: [msg({ role: 'assistant', tool_calls: ['x'] })] }, ['messages.0.tool_calls.0']],
    ['usage tokens fractional', { messages: [msg({ usage: { prompt_tokens: 1.5, completion_tokens: 1 } })] }, ['messages.0.usage.prompt_tokens']],
    ['usage missing completion', { messages: [msg({ usage: { prompt_tokens: 1 } })] }, ['messages.0.usage.completion_tokens']],
    ['created_at negative', { messages: [msg({ created_at: -1 })] }, ['messages.0.created_at']],
    ['agent_id empty', { messages: [msg({ agent_id: '' })] }, ['messages.0.agent_id']],
    ['second message bad', { messages: [msg(), msg({ id: 'm2', role: 7 })] }, ['messages.1.role']],
    ['unknown envelope field', { messages: [msg()], session: 'x' }, ['session']],
  ])('rejects %s', (_name, value, paths) => {
    expect(failingPaths(AppendRequestSchema, value)).toEqual(paths);
  });

  it('lists every failing path, not just the first', () => {
    const paths = failingPaths(AppendRequestSchema, { messages: [msg({ id: '', role: 'x' }), msg({ content: 1 })] });
    expect(paths).toEqual(['messages.0.id', 'messages.0.role', 'messages.1.content']);
  });
});

describe('tasks request', () => {
  it.each([
    ['empty tree', { tasks: [] }],
    [
      'a tree',
      {
        tasks: [
          { id: 'T1', status: 'in_progress', summary: 'build', focus: true },
          { id: 'T2', parent_id: 'T1', status: 'blocked', summary: '' },
        ],
      },
    ],
  ])('accepts %s', (_name, value) => {
    expect(parseRequest(TasksRequestSchema, value)).toEqual(value);
  });

  it.each([
    ['bad status', { tasks: [{ id: 'T1', status: 'todo', summary: 's' }] }, ['tasks.0.status']],
    ['missing summary', { tasks: [{ id: 'T1', status: 'open' }] }, ['tasks.0.summary']],
    ['empty id', { tasks: [{ id: '', status: 'open', summary: 's' }] }, ['tasks.0.id']],
    ['empty parent id', { tasks: [{ id: 'T1', parent_id: '', status: 'open', summary: 's' }] }, ['tasks.0.parent_id']],
    ['focus not a bool', { tasks: [{ id: 'T1', status: 'open', summary: 's', focus: 1 }] }, ['tasks.0.focus']],
    ['unknown task field', { tasks: [{ id: 'T1', status: 'open', summary: 's', owner: 'me' }] }, ['tasks.0.owner']],
    ['tasks missing', {}, ['tasks']],
  ])('rejects %s', (_name, value, paths) => {
    expect(failingPaths(TasksRequestSchema, value)).toEqual(paths);
  });
});

describe('rebuild request', () => {
  it.each([{ reason: 'overflow' }, { reason: 'manual', wait_ms: 0 }, { reason: 'manual', wait_ms: 30_000 }])(
    'accepts %j',
    (value) => {
      expect(parseRequest(RebuildRequestSchema, value)).toEqual(value);
    },
  );

  it.each([
    ['missing reason', {}, ['reason']],
    ['bad reason', { reason: 'because' }, ['reason']],
    ['negative wait', { reason: 'manual', wait_ms: -1 }, ['wait_ms']],
    ['fractional wait', { reason: 'manual', wait_ms: 1.5 }, ['wait_ms']],
    ['wait as a string', { reason: 'manual', wait_ms: '10' }, ['wait_ms']],
  ])('rejects %s', (_name, value, paths) => {
    expect(failingPaths(RebuildRequestSchema, value)).toEqual(paths);
  });
});

describe('parameterless requests', () => {
  it.each([
    ['checkpoint', CheckpointRequestSchema],
    ['status', StatusRequestSchema],
    ['close', CloseRequestSchema],
    ['runtime.status', RuntimeStatusRequestSchema],
  ])('%s accepts {} and rejects fields and non-objects', (_name, schema) => {
    expect(parseRequest(schema, {})).toEqual({});
    expect(failingPaths(schema, { force: true })).toEqual(['force']);
    expect(failingPaths(schema, [])).toEqual(['']);
    expect(failingPaths(schema, 1)).toEqual(['']);
  });
});

describe('runtime.drain request', () => {
  it.each([{}, { timeout_ms: 0 }, { timeout_ms: 120_000 }])('accepts %j', (value) => {
    expect(parseRequest(RuntimeDrainRequestSchema, value)).toEqual(value);
  });

  it.each([
    [{ timeout_ms: -1 }, ['timeout_ms']],
    [{ timeout_ms: 'soon' }, ['timeout_ms']],
    [{ timeout: 5 }, ['timeout']],
  ])('rejects %j', (value, paths) => {
    expect(failingPaths(RuntimeDrainRequestSchema, value)).toEqual(paths);
  });
});
