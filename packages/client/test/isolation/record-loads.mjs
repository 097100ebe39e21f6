/**
 * Worker script: records every module the import of `workerData.target` loads, ES modules through a resolve hook
 * and CommonJS modules through the require cache, and posts the list back. Plain JavaScript: it is the worker's
 * entry and registers the TypeScript loader itself before importing the target.
 */
import { createRequire, register } from 'node:module';
import { MessageChannel, parentPort, workerData } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const resolved = [];
port1.on('message', (url) => resolved.push(url));
port1.unref();
const hooks = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url, { data: { port: port2 }, transferList: [port2] });

// The target is TypeScript source: load it through tsx, registered in this thread.
const { register: registerTsx } = await import('tsx/esm/api');
registerTsx();
const { target } = workerData;
await import(target);
// Let the hook's last messages arrive.
await new Promise((r) => setTimeout(r, 50));
const cjs = Object.keys(createRequire(import.meta.url).cache);
parentPort?.postMessage([...resolved, ...cjs]);
