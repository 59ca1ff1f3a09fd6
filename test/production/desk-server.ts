// The stock desk server for the production-recording tests and bench: node:http, one agent
// session per POST /session, recorded in-process by recordHandler (RECORD=0: not recorded). It
// prints `listening <port>` when ready and `recorded <id>` each time a recording is finished, so
// a test that kills it knows which sessions finished; GET /memory answers process.memoryUsage().
// Run with `node --import tsx`.
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { currentRecording, recordHandler } from '../../src/record/index.js';
import { runDeskSession } from './desk-agent.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_MAX ?? 20) });
pool.on('error', () => {});
const apiKey = process.env.OPENAI_API_KEY ?? 'none';

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  currentRecording()?.setInput(input);
  try {
    const out = await runDeskSession(pool, input, apiKey);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out));
  } catch (error) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: String((error as Error).message) }));
  }
}

const sessions =
  process.env.RECORD === '0'
    ? handle
    : recordHandler(handle, {
        folder: process.env.RECORDINGS ?? 'recordings',
        name: (req) => `desk ${req.headers['x-session'] ?? ''}`.trim(),
        command: [process.execPath, path.join(here, 'desk-agent.mjs')],
        onRecorded: (run) => process.stdout.write(`recorded ${run.id}\n`),
        onError: (error) => process.stderr.write(`recorder: ${(error as Error).message}\n`),
      });

// The operator's endpoints are not sessions: never recorded.
const server = http.createServer((req, res) => {
  if (req.url === '/health') res.end('ok');
  else if (req.url === '/memory') {
    // For bench/production: the memory now (after a collection when node runs with --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    res.end(JSON.stringify(process.memoryUsage()));
  } else void sessions(req, res);
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
