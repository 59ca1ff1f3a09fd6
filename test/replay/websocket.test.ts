// A recorded WebSocket conversation replays with no network: the upgrade is answered from the
// recording and the server's messages (its push, text, binary, the close) come back in order as
// the agent sends its own, with the server stopped — in-process (--isolation none) and in the OS
// sandbox, for the ws package and undici's client. A message the recording does not have is a
// divergence that names it, and the agent sees its connection closed with a reason, never a hang,
// in exact and counterfactual mode alike, and the recorded turns it did not take are not copied in.
// Over TLS (wss://) the replay's answerer presents a certificate of its own CA, which the agent's
// connection to the routed address trusts. A WebSocket to an address or path the recording does not
// have is refused and named. A client that is not Node (Python, with no preload) is answered in the
// OS sandbox too, at the recorded loopback port or through the proxy.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { createRecordingWriter, readRecording } from '../../src/recording/index.js';
import { startServer, tempDir } from '../record/helpers.js';
import { allText, CONVERSATION, recordConversation, startWsServer, TOKEN } from '../record/websocket-helpers.js';
import { reseal } from '../support/hostile-recordings.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const BWRAP = detectIsolation().level === 'bwrap';
const LEVELS = BWRAP ? (['none', 'bwrap'] as const) : (['none'] as const);
type Level = (typeof LEVELS)[number];

async function replayIt(
  recording: string,
  out: string,
  options: { isolation: Level; mode?: 'exact' | 'counterfactual'; env?: Record<string, string> },
) {
  const { replay } = await import('../../src/replay/index.js');
  const result = await replay({
    recording,
    mode: options.mode ?? 'exact',
    out,
    stdio: 'pipe',
    isolation: options.isolation,
    env: options.env ?? {},
    timeoutMs: 120_000,
  });
  return { result, got: JSON.parse(result.output?.stdout || 'null') as string[] | null };
}

const stepNames = async (dir: string) =>
  (await readRecording(dir)).events.flatMap((e) => (e.type === 'step.started' ? [[e.stepId, e.payload.name]] : []));

describe('replaying a WebSocket conversation over TLS (wss://)', () => {
  const tmp = tempDir('tapedeck-wss-replay-');
  const recorded: Record<'ws' | 'undici', { dir: string; got: string[] }> = {
    ws: { dir: '', got: [] },
    undici: { dir: '', got: [] },
  };
  beforeAll(async () => {
    const server = await startWsServer({ tls: { dir: tmp.dir } });
    for (const client of ['ws', 'undici'] as const) {
      const dir = path.join(tmp.dir, `recorded-${client}`);
      // The agent trusts the server's CA when recorded; replayed, the answerer's own.
      const env = { CLIENT: client, NODE_EXTRA_CA_CERTS: server.caFile as string };
      const { result, got } = await recordConversation(dir, server.url, env);
      expect(result.exitCode).toBe(0);
      recorded[client] = { dir, got };
    }
    await server.close();
  }, 180_000);
  afterAll(() => tmp.remove());

  for (const client of ['ws', 'undici'] as const)
    for (const isolation of LEVELS)
      it(`replays a ${client} client's wss:// conversation exactly, server stopped (${isolation})`, {
        timeout: 180_000,
      }, async () => {
        expect(recorded[client].got.at(-1)).toBe('closed 1000');
        const turns = (await readRecording(recorded[client].dir)).events.flatMap((e) =>
          e.type === 'websocket.exchange' ? [e.payload] : [],
        );
        expect(turns[0]?.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/live\?room=1$/);
        const out = path.join(tmp.dir, `exact-${client}-${isolation}`);
        const { result, got } = await replayIt(recorded[client].dir, out, { isolation });
        expect(result.divergences).toEqual([]);
        expect(got).toEqual(recorded[client].got);
        expect(result.served.recording).toBe(6);
      });
});

describe('replaying a WebSocket conversation', () => {
  const tmp = tempDir('tapedeck-ws-replay-');
  const recorded: Record<'ws' | 'undici', { dir: string; got: string[] }> = {
    ws: { dir: '', got: [] },
    undici: { dir: '', got: [] },
  };
  let url = '';
  beforeAll(async () => {
    const server = await startWsServer();
    const web = await startServer((_req, _body, res) => {
      res.end('after the conversation');
    });
    url = server.url;
    for (const client of ['ws', 'undici'] as const) {
      const dir = path.join(tmp.dir, `recorded-${client}`);
      const { result, got } = await recordConversation(dir, server.url, { CLIENT: client, HTTP_URL: web.url });
      expect(result.exitCode).toBe(0);
      recorded[client] = { dir, got };
    }
    // Replays run with the servers gone: every answer must come from the recording.
    await server.close();
    await web.close();
  }, 180_000);
  afterAll(() => tmp.remove());

  for (const client of ['ws', 'undici'] as const)
    for (const isolation of LEVELS)
      it(`replays a ${client} client's conversation exactly, server stopped (${isolation})`, {
        timeout: 180_000,
      }, async () => {
        const out = path.join(tmp.dir, `exact-${client}-${isolation}`);
        const { result, got } = await replayIt(recorded[client].dir, out, { isolation });
        expect(result.divergences).toEqual([]);
        expect(got).toEqual(recorded[client].got);
        expect(got?.map((g, i) => (i === 2 ? g.slice(0, 9) : g))).toEqual([...CONVERSATION, 'after the conversation']);
        expect(result.served.recording).toBe(7);
        // The replay's steps are the recording's, numbered and named alike.
        expect(await stepNames(out)).toEqual(await stepNames(recorded[client].dir));
        const turns = (await readRecording(out)).events.flatMap((e) =>
          e.type === 'websocket.exchange' ? [e.payload] : [],
        );
        expect(turns.map((t) => [t.kind, t.servedFrom])).toEqual([
          ['open', 'recording'],
          ['message', 'recording'],
          ['message', 'recording'],
          ['message', 'recording'],
          ['message', 'recording'],
          ['close', 'recording'],
        ]);
        expect(allText(out)).not.toContain(TOKEN);
      });

  for (const mode of ['exact', 'counterfactual'] as const)
    it(`a message the recording does not have is a divergence, and the connection closes (${mode})`, {
      timeout: 180_000,
    }, async () => {
      const out = path.join(tmp.dir, `changed-${mode}`);
      const { result, got } = await replayIt(recorded.ws.dir, out, {
        isolation: 'none',
        mode,
        env: { MESSAGE: 'see you' },
      });
      // What came before is the recording's; the changed message gets the close, not a wait; the
      // HTTP call after it is served, and the turns the agent did not take are no steps.
      expect(got?.slice(0, 4)).toEqual(recorded.ws.got.slice(0, 4));
      expect(got?.slice(4)).toEqual(['closed 1008', 'after the conversation']);
      expect(await stepNames(out)).toEqual([
        [1, 'WS open /live'],
        [2, 'WS /live'],
        [3, 'WS /live'],
        [4, 'WS /live'],
        [5, 'WS /live'],
        [7, 'GET /'],
      ]);
      expect(result.divergences).toHaveLength(1);
      expect(result.divergences[0]).toMatchObject({
        kind: 'different-request',
        step: 5,
        expected: { type: 'text', data: 'bye' },
        actual: { type: 'text', data: 'see you' },
      });
      expect(result.divergences[0]?.message).toBe(
        `The agent sent a text message "see you" on the WebSocket at ${url} where the recording has a text message "bye" (turn 4); it was held back and the connection closed.`,
      );
      expect(result.served.blocked).toBe(1);
    });

  it('a WebSocket at a path or an address the recording does not have is refused and named', {
    timeout: 180_000,
  }, async () => {
    const other = new URL(url);
    other.pathname = '/elsewhere';
    const { result } = await replayIt(recorded.ws.dir, path.join(tmp.dir, 'other-path'), {
      isolation: 'none',
      env: { WS_URL: other.href },
    });
    expect(result.divergences.map((d) => [d.kind, d.message])).toContainEqual([
      'unmatched-request',
      `The agent opened a WebSocket at ${other.href}, which the recording does not have; it was refused (no network in a replay).`,
    ]);
    const elsewhere = 'ws://127.0.0.1:9/live';
    const { result: refused } = await replayIt(recorded.ws.dir, path.join(tmp.dir, 'other-host'), {
      isolation: 'none',
      env: { WS_URL: elsewhere },
    });
    expect(refused.divergences.map((d) => [d.kind, d.message])).toContainEqual([
      'blocked-connection',
      `The agent opened a WebSocket at ${elsewhere}, which the recording does not have; it was refused (no network in a replay).`,
    ]);
  });
});

describe('a recorded WebSocket answer is data', () => {
  const tmp = tempDir('tapedeck-ws-hostile-');
  afterAll(() => tmp.remove());

  it('a header that would end its line, or a name that is no token, is not written into the answer', {
    timeout: 180_000,
  }, async () => {
    const agent = path.join(FIXTURES, 'websocket-headers-agent.mjs');
    const server = await startWsServer();
    const { recordCommand } = await import('../../src/record/index.js');
    const real = path.join(tmp.dir, 'real');
    const recorded = await recordCommand({
      command: [process.execPath, agent],
      env: { WS_URL: server.url },
      out: real,
      stdio: 'pipe',
    });
    await server.close();
    expect(recorded.exitCode).toBe(0);
    // The same recording with the 101's headers made hostile (written through the writer: a valid recording).
    const source = await readRecording(real);
    const hostile = path.join(tmp.dir, 'hostile');
    const writer = await createRecordingWriter(hostile, { name: 'hostile', agent: source.manifest.agent });
    writer.writeSnapshot('pre', source.pre);
    for (const e of source.events) {
      const payload =
        e.type === 'websocket.exchange' && e.payload.kind === 'open' && e.payload.response
          ? {
              ...e.payload,
              response: {
                ...e.payload.response,
                statusText: 'Switching\r\nx-status: injected',
                // The reader refuses a name that is no token and a value with a carriage return
                // (below); a bare newline (the format's separator of repeated values) reaches the replay.
                headers: { ...e.payload.response.headers, 'x-a': 'v\nx-injected: yes' },
              },
            }
          : e.payload;
      writer.append({
        type: e.type,
        stepId: e.stepId,
        ...(e.parentStepId === undefined ? {} : { parentStepId: e.parentStepId }),
        payload,
      } as Parameters<typeof writer.append>[0]);
    }
    writer.writeSnapshot('post', source.post);
    await writer.close('complete');
    const { replay } = await import('../../src/replay/index.js');
    const result = await replay({
      recording: hostile,
      mode: 'exact',
      out: path.join(tmp.dir, 'replayed'),
      stdio: 'pipe',
      isolation: 'none',
      command: [process.execPath, agent],
      env: { WS_URL: server.url },
      timeoutMs: 120_000,
    });
    const got = JSON.parse(result.output?.stdout || '{}') as { headers?: Record<string, string>; message?: string };
    expect(got.message).toBe('welcome');
    expect(got.headers?.['x-a']).toBe('v x-injected: yes');
    expect(got.headers?.['x-injected']).toBeUndefined();
    expect(got.headers?.['x-status']).toBeUndefined();
    expect(result.divergences).toEqual([]);
    // A header name that is no token, or a value with a carriage return: the recording is refused
    // by its reader, for every command, naming the field.
    const events = readFileSync(path.join(hostile, 'events.jsonl'), 'utf8').replace(
      '"x-a":"v\\nx-injected: yes"',
      '"bad name\\r\\nx-b":"x"',
    );
    const forged = path.join(tmp.dir, 'forged');
    cpSync(hostile, forged, { recursive: true });
    writeFileSync(path.join(forged, 'events.jsonl'), events);
    reseal(forged);
    const refused = await readRecording(forged).catch((e: unknown) => e);
    expect(String((refused as Error).message)).toMatch(/headers\["bad name\\r\\nx-b"\]: .*header name/);
  });
});

describe.runIf(BWRAP)('a WebSocket client that is not Node, in the OS sandbox', () => {
  const tmp = tempDir('tapedeck-ws-python-');
  let recorded = '';
  let url = '';
  beforeAll(async () => {
    const server = await startWsServer();
    url = server.url;
    recorded = path.join(tmp.dir, 'recorded');
    const { result, got } = await recordConversation(recorded, server.url, { SHORT: '1' });
    expect(result.exitCode).toBe(0);
    expect(got).toEqual(['welcome', 'echo hello', 'closed 1000']);
    await server.close();
  }, 180_000);
  afterAll(() => tmp.remove());

  for (const via of ['the recorded loopback port', 'the proxy'] as const)
    it(`is answered from the recording through ${via}`, { timeout: 180_000 }, async () => {
      const { replay } = await import('../../src/replay/index.js');
      const result = await replay({
        recording: recorded,
        mode: 'exact',
        out: path.join(tmp.dir, via === 'the proxy' ? 'proxy' : 'direct'),
        stdio: 'pipe',
        isolation: 'bwrap',
        command: ['python3', path.join(FIXTURES, 'websocket-client.py')],
        env: { WS_URL: url, VIA_PROXY: via === 'the proxy' ? '1' : '' },
        timeoutMs: 120_000,
      });
      expect(JSON.parse(result.output?.stdout || 'null')).toEqual(['welcome', 'echo hello', 'closed 1000']);
      expect(result.divergences).toEqual([]);
      expect(result.served.recording).toBe(3);
    });
});

describe('what the server pushes while the agent makes other calls', () => {
  const tmp = tempDir('tapedeck-ws-push-');
  let recorded = '';
  let got: string[] = [];
  beforeAll(async () => {
    const server = await startWsServer();
    // The second HTTP call makes the server push "news" over the WebSocket before it answers.
    const web = await startServer((req, _body, res) => {
      if (req.url === '/push') server.push('news');
      res.end(req.url === '/push' ? 'b' : 'a');
    });
    recorded = path.join(tmp.dir, 'recorded');
    const run = await recordConversation(recorded, server.url, { HTTP_URL: web.url, PUSH_URL: `${web.url}/push` });
    expect(run.result.exitCode).toBe(0);
    got = run.got;
    await Promise.all([server.close(), web.close()]);
  }, 180_000);
  afterAll(() => tmp.remove());

  it('is recorded as a push turn, and a turn is written before the call the agent went on to', async () => {
    expect(got.filter((g) => g !== 'news')).toEqual(['welcome', 'echo hello', 'a', 'b', 'closed 1000']);
    expect(got.indexOf('news')).toBeGreaterThan(got.indexOf('a'));
    const recording = await readRecording(recorded);
    const turns = recording.events.flatMap((e) => (e.type === 'websocket.exchange' ? [e] : []));
    expect(turns.map((e) => [e.payload.kind, e.payload.received.map((m) => m.body?.text ?? m.type)])).toEqual([
      ['open', ['welcome']],
      ['message', ['echo hello']],
      ['push', ['news']],
      ['close', ['close']],
    ]);
    // The "hello" turn is a step before the first HTTP call's, as it happened.
    const steps = recording.events.filter((e) => e.type === 'step.started');
    const firstHttp = steps.find((e) => e.payload.name === 'GET /')?.stepId ?? 0;
    expect(turns[1]?.stepId).toBeLessThan(firstHttp);
  });

  it('replays the push after the calls before it, not with the turn before', { timeout: 180_000 }, async () => {
    const out = path.join(tmp.dir, 'replayed');
    // Counterfactual: the HTTP calls are answered by the replayer (no fast path in the agent), so
    // the push could overtake them.
    const { result, got: replayed } = await replayIt(recorded, out, { isolation: 'none', mode: 'counterfactual' });
    expect(result.divergences).toEqual([]);
    expect(replayed?.filter((g) => g !== 'news')).toEqual(['welcome', 'echo hello', 'a', 'b', 'closed 1000']);
    expect(replayed?.indexOf('news')).toBeGreaterThan(replayed?.indexOf('a') ?? 0);
    // The replay wrote the push once the call before it was served again (file order), and each step
    // at its recorded number (a step may be written out of order, at its own number).
    const written = (await stepNames(out)).map(([, name]) => name);
    expect(written.indexOf('WS push /live')).toBeGreaterThan(written.indexOf('GET /'));
    const byStep = async (dir: string) => (await stepNames(dir)).sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(await byStep(out)).toEqual(await byStep(recorded));
  });
});
