/** Pieces of the session service's replies. */
import { memoryPaths } from '@baton/memory-store';
import { ProtocolError, type MemoryPaths } from '@baton/protocol';

/** The memory files of a session as replies name them. */
export function memoryPathsOf(memoryRoot: string, projectId: string, sessionId: string): MemoryPaths {
  const p = memoryPaths(memoryRoot, { projectId, sessionId });
  return { root: p.root, checkpoint: p.checkpoint, memory: p.memory, notes: p.notes, tasks_dir: p.tasksDir };
}

/** A waited-for answer: its body, or the error the request ends with (the session left this daemon meanwhile). */
export function answered(body: Record<string, unknown> | ProtocolError): Record<string, unknown> {
  if (body instanceof ProtocolError) throw body;
  return body;
}
