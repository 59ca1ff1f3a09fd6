// The replayer's IPC end checks every message against the protocol (sandbox/protocol.ts): a
// question that does not fit gets an error answer (so the agent never waits forever), a notice
// that does not fit is dropped, and what fits arrives typed.
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReplayNotice, ReplayQuestion } from '../../sandbox/index.js';
import { listenIpc } from '../../src/replay/ipc.js';
import { tempDir } from '../record/helpers.js';

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function connect(socketPath: string) {
  const socket = net.createConnection(socketPath);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  cleanup.push(() => void socket.destroy());
  const lines: unknown[] = [];
  let input = '';
  socket.on('data', (d) => {
    input += d.toString('utf8');
    for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
      lines.push(JSON.parse(input.slice(0, nl)));
      input = input.slice(nl + 1);
    }
  });
  const next = async (count: number) => {
    for (let i = 0; i < 200 && lines.length < count; i++) await new Promise((r) => setTimeout(r, 10));
    return lines.slice(0, count);
  };
  return { send: (o: unknown) => socket.write(`${JSON.stringify(o)}\n`), next };
}

describe('the replay IPC', () => {
  it('answers questions that fit, answers the others with an error, and drops notices that do not fit', async () => {
    const tmp = tempDir('tapedeck-ipc-');
    cleanup.push(() => tmp.remove());
    const questions: ReplayQuestion[] = [];
    const notices: ReplayNotice[] = [];
    const ipc = await listenIpc(
      path.join(tmp.dir, 'ipc.sock'),
      async (q) => {
        questions.push(q);
        return { status: 200 };
      },
      (n) => notices.push(n),
    );
    cleanup.push(() => ipc.close());
    const client = await connect(ipc.path);
    client.send({ t: 'blocked', target: '10.0.0.1:443' });
    client.send({ t: 'blocked', target: 42 });
    client.send({ t: 'sync', n: 1, kind: 'http', method: 'GET', url: 'http://x/a', headers: {} });
    client.send({ t: 'sync', n: 2, kind: 'http', method: 'GET' });
    client.send({ t: 'sync', n: 3, kind: 'launch-missiles' });
    const replies = (await client.next(3)) as Array<{ ack: number; status?: number; error?: { code: string } }>;
    expect(replies.find((r) => r.ack === 1)).toEqual({ ack: 1, status: 200 });
    expect(replies.find((r) => r.ack === 2)?.error?.code).toBe('REPLAY_ERROR');
    expect(replies.find((r) => r.ack === 3)?.error?.code).toBe('REPLAY_ERROR');
    expect(questions).toEqual([{ kind: 'http', method: 'GET', url: 'http://x/a', headers: {} }]);
    expect(notices).toEqual([{ t: 'blocked', target: '10.0.0.1:443' }]);
  });

  it('waits for a client that is still sending before calling the replay drained, not for a silent one, and not past its cap', async () => {
    const tmp = tempDir('tapedeck-ipc-');
    cleanup.push(() => tmp.remove());
    const notices: ReplayNotice[] = [];
    const ipc = await listenIpc(
      path.join(tmp.dir, 'ipc.sock'),
      async () => ({}),
      (n) => notices.push(n),
    );
    cleanup.push(() => ipc.close());
    // A busy client: a notice every 50 ms for 1.2 s, then it closes. drained(300) must wait for all of it.
    const busy = net.createConnection(ipc.path);
    await new Promise<void>((resolve) => busy.once('connect', () => resolve()));
    let sent = 0;
    const timer = setInterval(() => {
      busy.write(`${JSON.stringify({ t: 'blocked', target: `10.0.0.${++sent}:443` })}\n`);
      if (sent === 24) {
        clearInterval(timer);
        busy.end();
      }
    }, 50);
    const t0 = Date.now();
    await ipc.drained(300);
    expect(notices).toHaveLength(24);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    // A silent client that keeps its socket open: drained after the quiet time.
    const silent = net.createConnection(ipc.path);
    await new Promise<void>((resolve) => silent.once('connect', () => resolve()));
    cleanup.push(() => void silent.destroy());
    const t1 = Date.now();
    await ipc.drained(300);
    expect(Date.now() - t1).toBeLessThan(1500);
    // A process left behind that never stops calling: drained after the cap in all.
    const chatty = setInterval(() => silent.write(`${JSON.stringify({ t: 'blocked', target: '10.0.0.9:443' })}\n`), 50);
    cleanup.push(() => clearInterval(chatty));
    const t2 = Date.now();
    await ipc.drained(300, 900);
    expect(Date.now() - t2).toBeGreaterThanOrEqual(850);
    expect(Date.now() - t2).toBeLessThan(2000);
  });
});
