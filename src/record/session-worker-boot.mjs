// @ts-check
// The recording thread's first module (see session-thread.ts): in a checkout it registers tsx so
// that the TypeScript worker (session-worker.ts) loads; from dist/ the worker is JavaScript.
import { workerData } from 'node:worker_threads';

if (workerData?.tsx === true) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
