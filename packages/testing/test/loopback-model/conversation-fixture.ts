import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

function fn(name: string, properties: Record<string, object>, required: string[]): ChatCompletionTool {
  return { type: 'function', function: { name, description: `${name} tool`, parameters: { type: 'object', properties, required } } };
}

const str = { type: 'string' };

/** A coding agent's own tools (fork mode): the writer must call them by these names and argument names. */
export const agentTools: ChatCompletionTool[] = [
  fn('TodoWrite', { todos: { type: 'array' } }, ['todos']),
  fn('read_file', { file_path: str, offset: { type: 'number' } }, ['file_path']),
  fn('write_file', { file_path: str, text: str }, ['file_path', 'text']),
  fn('edit_file', { file_path: str, old_string: str, new_string: str }, ['file_path', 'old_string', 'new_string']),
  fn('bash', { command: str }, ['command']),
];

/** Baton's own writer tools (delta mode). */
export const batonTools: ChatCompletionTool[] = [
  fn('read', { path: str, offset: { type: 'number' }, limit: { type: 'number' } }, ['path']),
  fn('write', { path: str, content: str }, ['path', 'content']),
  fn('edit', { path: str, old_string: str, new_string: str }, ['path', 'old_string', 'new_string']),
];

/** The checkpoint template the test bootstraps: italic lines deliberately differ from the loopback's defaults. */
export const TEST_TEMPLATE = [
  '# Session checkpoint',
  '',
  '_Test template: written by the checkpoint writer; edit only the bodies._',
  '',
  ...[
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
  ].flatMap((title, i) => [`## §${i + 1} ${title}`, `_Test instruction for section ${i + 1}._`, '', i === 2 || i === 7 ? '(none)' : '(none yet)', '']),
].join('\n');

export const NOTES_TEMPLATE = '# Session notes\n\n_Scratchpad for the main agent; entries are headed with a turn marker._\n';

function call(id: string, name: string, args: object): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

/** The user's latest substantive request in {@link conversation}. */
export const LATEST_REQUEST = 'Great, that works. Now update docs/auth.md to describe the refresh flow,\nand keep the wording short.';

/** A realistic main-agent conversation (tool names of the agent's own tools). */
export function conversation(systemPrompt: string): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: 'The login test fails: the session token is never refreshed. Please fix src/auth/login.ts. Always run the tests before you commit.' },
    { role: 'assistant', content: 'Let me look at the login module first.', tool_calls: [call('c1', 'read_file', { file_path: 'src/auth/login.ts' })] },
    { role: 'tool', tool_call_id: 'c1', content: 'export function login() {\n  return refresh(session.token);\n}\n' },
    { role: 'assistant', content: 'I will run the failing test.', tool_calls: [call('c2', 'bash', { command: 'npm test -- src/auth/login.test.ts' })] },
    {
      role: 'tool',
      tool_call_id: 'c2',
      content: "FAIL src/auth/login.test.ts\n  TypeError: Cannot read properties of undefined (reading 'token')\n1 test failed",
    },
    {
      role: 'assistant',
      content:
        'It turns out the session is created after the refresh call, because the middleware runs late. We decided to refresh in the middleware instead of the client.',
      tool_calls: [call('c3', 'edit_file', { file_path: 'src/auth/login.ts', old_string: 'refresh(session.token)', new_string: 'refresh(getSession().token)' })],
    },
    { role: 'tool', tool_call_id: 'c3', content: 'Edited src/auth/login.ts' },
    {
      role: 'assistant',
      content: 'The fix is in. Starting the dev server on a branch.',
      tool_calls: [call('c4', 'bash', { command: 'git checkout -b fix/login-refresh && PORT=4100 npm run dev' })],
    },
    { role: 'tool', tool_call_id: 'c4', content: "Switched to a new branch 'fix/login-refresh'\nListening on http://localhost:4100" },
    { role: 'user', content: `${LATEST_REQUEST}\nShould we also bump the package version?` },
    { role: 'assistant', content: 'I will update docs/auth.md next, then answer the version question.' },
  ];
}

/** The writer task message (Baton's layout: paths, task tree, instruction). */
export function writerTask(dir: string, extraSpaces = false): ChatCompletionMessageParam {
  const eq = extraSpaces ? '   =   ' : ' = ';
  return {
    role: 'user',
    content: [
      '<system-reminder>',
      'You are in checkpoint-writer mode. The checkpoint structure has 11 sections; §4 Task tree comes from the task tool.',
      '==== ABSOLUTE PATHS — use verbatim ====',
      `CHECKPOINT_PATH${eq}${dir}/sessions/s1/checkpoint.md`,
      `MEMORY_PATH${eq}${dir}/projects/p1/MEMORY.md`,
      `TASK_MEM_DIR${eq}${dir}/sessions/s1/tasks`,
      `NOTES_PATH${eq}${dir}/sessions/s1/notes.md`,
      '',
      'Task tree:',
      '- 🔄 T1 Fix the login token refresh (focus)',
      '  - ✅ T1.1 Reproduce the failure',
      '- 🔵 T2 Update docs/auth.md',
      '</system-reminder>',
      'Write the next checkpoint for this session.',
    ].join('\n'),
  };
}
