// A run recorded in-process draws its values from its start inside a long-lived server; its replay
// runs a command that draws values of its own first (a loader, its modules' top level). The replay
// hands the run's recorded values out from the run's start in the command (runInput(), or record()
// under the replay), so the agent's uuid and clock stamps are the recorded ones and nothing
// diverges; a command that marks nothing is said to, by name of the marker.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { FIXTURES, replayExact, startFakeModel, startServer, type TestServer, tempDir } from './helpers.js';

interface Ticket {
  id: string;
  at: string;
  answer: string;
  saved: string;
  r: number;
}

describe("an in-process run's values in its replay command", () => {
  const tmp = tempDir('tapedeck-run-start-');
  let api: TestServer;
  let model: Awaited<ReturnType<typeof startFakeModel>>;
  let server: { url: string; child: ChildProcess };
  const posted: string[] = [];
  beforeAll(async () => {
    model = await startFakeModel({ toolTurns: 0 });
    const child = spawn(process.execPath, [path.join(FIXTURES, 'run-start-server.mjs')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim()));
      child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
    });
    server = { url, child };
    api = await startServer((_req, body, res) => {
      posted.push(body);
      res.end(`saved ${posted.length}`);
    });
  });
  afterAll(async () => {
    server?.child.kill();
    await api?.close().catch(() => undefined);
    await model?.close().catch(() => undefined);
    tmp.remove();
  });

  it('start at the run, not at the command: exact, with the recorded uuid and clock stamps', {
    timeout: 240_000,
  }, async () => {
    const input = { api: api.url, model: model.url, q: 'my order is late' };
    // Recorded by a server that has run (and drawn values) before the run.
    const run = (await (
      await fetch(`${server.url}/ticket`, {
        method: 'POST',
        body: JSON.stringify({ out: path.join(tmp.dir, 'run'), ...input }),
      })
    ).json()) as { dir: string; result: Ticket };
    const recording = await readRecording(run.dir);
    expect(recording.manifest.agent.inProcess).toBe(true);
    const stamped = JSON.parse(posted[0] ?? '{}') as Record<string, string>;
    expect(stamped).toMatchObject({ id: run.result.id, at: run.result.at });

    for (const how of ['runInput', 'record']) {
      const before = posted.length;
      const replayed = await replayExact(run.dir, path.join(tmp.dir, `replay-${how}`), 'none', { RUN_START: how });
      expect(replayed.status, replayed.output?.stderr).toBe('complete');
      expect(replayed.divergences).toEqual([]);
      expect(replayed.warnings ?? []).toEqual([]);
      const out = JSON.parse(replayed.output?.stdout.trim() ?? '{}') as { own: { id: string }; result: Ticket };
      // The agent's values are the recorded ones; the command's were its own.
      expect(out.result).toEqual(run.result);
      expect(out.own.id).not.toBe(run.result.id);
      expect(posted.length).toBe(before);
    }

    // No marker: the run starts at its first recorded call, and the replay says what that cost.
    const unmarked = await replayExact(run.dir, path.join(tmp.dir, 'replay-none'), 'none', { RUN_START: 'none' });
    const warning = (unmarked.warnings ?? []).find((w) => w.includes('runInput()'));
    expect(warning).toContain('1 randomUUID value');
    expect(warning).toContain('marking its run');
    const out = JSON.parse(unmarked.output?.stdout.trim() || '{}') as { result?: Ticket };
    if (out.result) expect(out.result.id).not.toBe(run.result.id);
    expect(readFileSync(path.join(run.dir, 'manifest.json'), 'utf8')).toContain('"inProcess": true');
  });
});
