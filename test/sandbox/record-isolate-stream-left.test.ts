// record --isolate with clients that leave a streamed answer before the server ends it: Node's
// fetch cancelling the body after the [DONE] event, and a Python client closing the response
// there (what requests/httpx agents do when they stop iterating). Each got every event it wanted;
// leaving is the client's own act, not a failure of the call. The recording must keep the stream as
// served, and the replay in the OS sandbox must serve it again — through the preload for Node,
// through the sandbox's proxy for Python — with the real API stopped (its hit counter the sentinel).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer } from '../record/helpers.js';
import { realDir } from './helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'stream-leaver.mjs');
const hasPython = spawnSync('sh', ['-c', 'command -v python3']).status === 0;

describe.runIf(detectIsolation().level === 'bwrap' && hasPython)('record --isolate: a stream the client leaves', () => {
  let api: TestServer;
  let dir: { dir: string; remove(): Promise<void> };
  let hits = 0;

  beforeAll(async () => {
    dir = await realDir('isolate-stream-left-');
    api = await startServer((req, _body, res) => {
      hits++;
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"n":1}\n\n');
        res.write('data: {"n":2}\n\ndata: [DONE]\n\n');
        // The server ends the stream well after the client has what it wanted and has left.
        setTimeout(() => res.end(), 4000).unref();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: url.pathname }));
    });
  });
  afterAll(async () => {
    await api?.close();
    await dir?.remove();
  });

  it('records the stream as served and replays it exactly with the API stopped', async () => {
    const out = path.join(dir.dir, 'rec');
    let recorded = '';
    const result = await recordCommand({
      command: [process.execPath, AGENT],
      env: { TOOL_API_URL: api.url },
      out,
      stdio: 'pipe',
      isolate: true,
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (recorded += d.toString())),
    });
    expect(result.exitCode, recorded).toBe(0);
    expect(recorded).toBe(
      [
        { client: 'node', seen: [{ n: 1 }, { n: 2 }], after: '/after' },
        { client: 'python', seen: [{ n: 1 }, { n: 2 }], left: 'open', after: '/after' },
      ]
        .map((line) => `${JSON.stringify(line)}\n`)
        .join(''),
    );
    expect(hits).toBe(4);

    const rec = await readRecording(out);
    const exchanges = rec.events.filter((e) => e.type === 'http.exchange').map((e) => e.payload as HttpExchangePayload);
    const streams = exchanges.filter((x) => new URL(x.request.url).pathname === '/events');
    expect(streams).toHaveLength(2);
    for (const x of streams) {
      // Every event the server sent, whoever ended the stream.
      expect((x.response?.chunks ?? []).map((c) => c.data).join('')).toBe(
        'data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n',
      );
      // The Python client closes its connection there: the call is marked as left by its client (as
      // the preload marks a fetch the agent aborted), not as failed. Node's fetch may keep the
      // connection to the proxy until the server ends (then no mark) or close it (the same mark).
      const python = x.request.url.includes('client=python');
      expect(python ? x.error : (x.error ?? { code: 'AbortError' }), JSON.stringify(x.error)).toMatchObject({
        code: 'AbortError',
      });
    }

    await api.close();
    // Replayed exactly with the API stopped: no divergence, the same output, no request reaches it.
    const replaysExactly = async (name: string, trustRecording: boolean) => {
      const again = await replay({
        recording: out,
        mode: 'exact',
        out: path.join(dir.dir, name),
        stdio: 'pipe',
        env: { TOOL_API_URL: api.url },
        trustRecording,
      });
      expect(again.divergences, again.output?.stderr).toEqual([]);
      expect(again.exitCode, again.output?.stderr).toBe(0);
      expect(again.output?.stdout).toBe(recorded);
      expect(hits).toBe(4);
    };
    await replaysExactly('replay', false);

    // A recording made before the proxy said AbortError (it wrote the code 'Error' with its message)
    // replays the same way.
    const events = readFileSync(path.join(out, 'events.jsonl'), 'utf8').replaceAll(
      '"code":"AbortError","message":"the client went away"',
      '"code":"Error","message":"the client went away"',
    );
    writeFileSync(path.join(out, 'events.jsonl'), events);
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    manifest.integrity.eventsSha256 = createHash('sha256').update(events).digest('hex');
    writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest));
    expect((await readRecording(out)).events.some((e) => JSON.stringify(e).includes('"code":"Error"'))).toBe(true);
    await replaysExactly('replay-old', true);
  });

  it('a stream whose server ends it as its client leaves at [DONE] is recorded whole: not left, not failed', async () => {
    // The openai Python SDK's way: stop at [DONE] and close. The server's end is on its way or
    // already read by the proxy: a race the proxy lost for about a third of such calls with the
    // example world's model, each then recorded as an AbortError (a failed model step).
    const script = path.join(dir.dir, 'leave-at-done.py');
    writeFileSync(
      script,
      [
        'import os, urllib.request',
        'for n in range(8):',
        '    with urllib.request.urlopen(os.environ["TOOL_API_URL"] + "/events?n=%d" % n) as res:',
        '        for raw in res:',
        '            if raw.strip() == b"data: [DONE]":',
        '                break',
        'print("done")',
      ].join('\n'),
    );
    await api.close();
    // A model server's way: the end of the stream follows its last event (here a little later,
    // so that the client has always left before it: the proxy must wait for it, and the last
    // streams' ends come after the agent has exited: the recording must wait for them too).
    api = await startServer((_req, _body, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\ndata: [DONE]\n\n');
      setTimeout(() => res.end(), 50);
    });
    const before = hits;
    const out = path.join(dir.dir, 'rec-ending');
    const result = await recordCommand({
      command: ['python3', script],
      out,
      stdio: 'pipe',
      isolate: true,
      env: { TOOL_API_URL: api.url },
    });
    expect(result.exitCode).toBe(0);
    expect(hits - before).toBe(8);
    const rec = await readRecording(out);
    const streams = rec.events.filter((e) => e.type === 'http.exchange').map((e) => e.payload as HttpExchangePayload);
    expect(streams).toHaveLength(8);
    for (const x of streams) {
      expect(x.error, x.request.url).toBeUndefined();
      expect((x.response?.chunks ?? []).map((c) => c.data).join('')).toBe('data: {"n":1}\n\ndata: [DONE]\n\n');
    }
    await api.close();
    const again = await replay({
      recording: out,
      mode: 'exact',
      out: path.join(dir.dir, 'replay-ending'),
      stdio: 'pipe',
    });
    expect(again.divergences, again.output?.stderr).toEqual([]);
    expect(again.output?.stdout).toBe('done\n');
    expect(hits - before).toBe(8);
  });
});
