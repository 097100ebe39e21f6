/**
 * Worker script for the thread-hop test: serves one call over the runtime's `PortRpc`, `raise`, which throws a
 * `ProtocolError` with the requested code (or a plain error carrying that code), as a worker host's handler would.
 * Plain JavaScript: it registers the TypeScript loader for the runtime's sources itself.
 */
import { workerData } from 'node:worker_threads';

const { register } = await import('tsx/esm/api');
register();
const { PortRpc } = await import('../../src/host/port-rpc.ts');
const { ProtocolError } = await import('@baton/protocol');

new PortRpc(workerData.port, {
  calls: {
    raise: ({ code, plain }) => {
      if (plain) throw Object.assign(new Error(`plain ${code}`), { code });
      throw new ProtocolError(code, `raised ${code} in a worker`, { code, from: 'worker' });
    },
  },
  notes: {},
});
