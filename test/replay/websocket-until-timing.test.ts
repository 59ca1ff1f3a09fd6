// `replay --until K` stops at a WebSocket turn as at any other step: the turn past K is not served,
// the agent is ended (it asked the replayer nothing it could answer `stop`), and the replay holds
// steps 1..K — in-process and in the OS sandbox. `--timing original` paces a turn's server messages
// by their recorded offsets; `--timing none` sends them at once.

import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { readRecording } from '../../src/recording/index.js';
import { tempDir } from '../record/helpers.js';
import { recordConversation } from '../record/websocket-helpers.js';

const LEVELS = detectIsolation().level === 'bwrap' ? (['none', 'bwrap'] as const) : (['none'] as const);
/** How long the server takes to answer "hello" (its answer's offset in the recorded turn). */
const SLOW_MS = 600;

async function replayIt(recording: string, out: string, options: Record<string, unknown>) {
  const { replay } = await import('../../src/replay/index.js');
  return replay({ recording, mode: 'exact', out, stdio: 'pipe', timeoutMs: 120_000, ...options });
}

const stepsOf = async (dir: string) =>
  (await readRecording(dir)).events.flatMap((e) => (e.type === 'step.started' ? [[e.stepId, e.payload.name]] : []));

describe('a replayed WebSocket conversation under --until and --timing', () => {
  const tmp = tempDir('tapedeck-ws-until-');
  let recorded = '';
  beforeAll(async () => {
    // Welcome, then "echo hello" SLOW_MS after the agent's "hello".
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.on('listening', resolve));
    wss.on('connection', (socket) => {
      socket.send('welcome');
      socket.on('message', (data) => setTimeout(() => socket.send(`echo ${String(data)}`), SLOW_MS));
    });
    recorded = path.join(tmp.dir, 'recorded');
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/live`;
    const { result, got } = await recordConversation(recorded, url, { SHORT: '1' });
    for (const c of wss.clients) c.terminate();
    await new Promise((resolve) => wss.close(resolve));
    expect(result.exitCode).toBe(0);
    expect(got).toEqual(['welcome', 'echo hello', 'closed 1000']);
  }, 120_000);
  afterAll(() => tmp.remove());

  for (const isolation of LEVELS)
    it(`--until 2 stops before the third turn and ends the agent (${isolation})`, { timeout: 180_000 }, async () => {
      expect(await stepsOf(recorded)).toEqual([
        [1, 'WS open /live'],
        [2, 'WS /live'],
        [3, 'WS close /live'],
      ]);
      const out = path.join(tmp.dir, `until-2-${isolation}`);
      const started = Date.now();
      const result = await replayIt(recorded, out, { until: 2, isolation });
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(await stepsOf(out)).toEqual([
        [1, 'WS open /live'],
        [2, 'WS /live'],
      ]);
      expect(result.exitCode).toBeNull();
      expect(result.divergences).toEqual([]);
      // Ended while it waited for the turn's answer: it printed nothing. (In the OS sandbox the kill
      // reaches strace, not the agent it traces, which ends with the sandbox: not asserted there.)
      if (isolation === 'none') expect(result.output?.stdout).toBe('');
    });

  it("--timing original sends a turn's messages at their recorded offsets; none sends them at once", {
    timeout: 180_000,
  }, async () => {
    const durationOf = async (dir: string) => {
      const turns = (await readRecording(dir)).events.flatMap((e) =>
        e.type === 'websocket.exchange' && e.payload.kind === 'message' ? [e.payload] : [],
      );
      return turns[0]?.durationMs ?? -1;
    };
    const original = await replayIt(recorded, path.join(tmp.dir, 'timing-original'), {
      isolation: 'none',
      timing: { kind: 'original' },
    });
    expect(original.divergences).toEqual([]);
    expect(JSON.parse(original.output?.stdout || 'null')).toEqual(['welcome', 'echo hello', 'closed 1000']);
    expect(await durationOf(path.join(tmp.dir, 'timing-original'))).toBeGreaterThanOrEqual(SLOW_MS - 50);
    const none = await replayIt(recorded, path.join(tmp.dir, 'timing-none'), { isolation: 'none' });
    expect(none.divergences).toEqual([]);
    expect(await durationOf(path.join(tmp.dir, 'timing-none'))).toBeLessThan(SLOW_MS / 2);
  });
});
