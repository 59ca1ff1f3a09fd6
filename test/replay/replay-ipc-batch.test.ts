// The replay preload batches its notices ("served from the fast index", values) and writes them a
// few ms later. An agent whose calls the fast index answers without returning to the event loop
// never lets that timer fire: a long batch must be written as it grows, so the replayer works on
// the notices beside the running agent instead of all of them after the agent's exit.
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../record/helpers.js';

/** The part of the preload's IPC client (sandbox/preload/replay-ipc.mjs, untyped JavaScript) used here. */
interface ReplayIpc {
  send(message: unknown, options?: { batch?: boolean }): void;
}
const { connectReplayIpc } = (await import(new URL('../../sandbox/preload/replay-ipc.mjs', import.meta.url).href)) as {
  connectReplayIpc: (path: string) => ReplayIpc;
};

const tmp = tempDir('tapedeck-ipc-batch-');
afterAll(() => tmp.remove());

describe('the replay IPC client', () => {
  it('writes a growing batch of notices before its timer, so the replayer gets them while the agent runs', async () => {
    const sock = path.join(tmp.dir, 's');
    const received: string[] = [];
    const server = net.createServer((s) => s.on('data', (d) => received.push(d.toString('utf8'))));
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    const ipc = connectReplayIpc(sock);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The client's socket writes, recorded as they happen (the real write still runs).
    const write = vi.spyOn(net.Socket.prototype, 'write');
    // A burst the agent makes in one turn of its event loop (nothing here yields).
    for (let i = 0; i < 200; i++) ipc.send({ t: 'values', i }, { batch: true });
    const during = write.mock.calls
      .map((call) => String(call[0]))
      .join('')
      .split('\n')
      .filter(Boolean);
    write.mockRestore();
    expect(during.length).toBeGreaterThanOrEqual(100);
    // The rest, short of a batch, follows on the timer: every notice arrives once, in order.
    await vi.waitFor(() => expect(received.join('').split('\n').filter(Boolean)).toHaveLength(200), { timeout: 5000 });
    const order = received
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(order).toEqual(Array.from({ length: 200 }, (_, i) => i));
    server.close();
  });
});
