// A server process recording one run in-process with world: 'snapshot' (triggers and a capture
// schema on DATABASE_URL's schema desk) that never ends: it prints `capturing` once the capture is
// installed and the run has started, and waits to be killed. For kill-server.test.ts. Run with
// `node --import tsx`.
import { record } from '../../src/record/index.js';

await record(
  {
    dbUrl: process.env.DATABASE_URL as string,
    world: 'snapshot',
    dbSchemas: ['desk'],
    folder: process.env.RECORDINGS ?? 'recordings',
    name: 'snapshot run',
  },
  async () => {
    process.stdout.write('capturing\n');
    await new Promise(() => {});
  },
);
