// A DETERMINISTIC FAKE of the OpenAI Realtime API (GA events), not OpenAI: a `ws` server over TLS
// on 127.0.0.1 (its certificate signed by a CA written for the agent's NODE_EXTRA_CA_CERTS, as the
// openai SDK's Realtime client only speaks wss://). It answers session.update with session.updated,
// echoes each conversation item with an id, and answers each response.create after `delayMs`:
// the first with a get_weather function call, the next with a text answer streamed as deltas,
// each response.done with a fixed usage (text and audio tokens, cached tokens on the second).
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { WebSocketServer } from 'ws';

export const USAGE = [
  {
    total_tokens: 135,
    input_tokens: 120,
    output_tokens: 15,
    input_token_details: { cached_tokens: 0, text_tokens: 100, audio_tokens: 20 },
    output_token_details: { text_tokens: 15, audio_tokens: 0 },
  },
  {
    total_tokens: 189,
    input_tokens: 180,
    output_tokens: 9,
    input_token_details: { cached_tokens: 64, text_tokens: 160, audio_tokens: 20 },
    output_token_details: { text_tokens: 9, audio_tokens: 0 },
  },
];
export const ANSWER = ['It is sunny', ' and 21°C', ' in Paris.'];

export interface RealtimeServer {
  /** The openai SDK's baseURL (https://127.0.0.1:port/v1). */
  baseURL: string;
  caFile: string;
  connections: number;
  close(): Promise<void>;
}

export async function startRealtimeServer(dir: string, delayMs = 40): Promise<RealtimeServer> {
  const { createRunCa } = await import('../../sandbox/proxy/ca.js');
  const ca = await createRunCa('tapedeck fake realtime CA');
  const caFile = path.join(dir, 'realtime-ca.pem');
  writeFileSync(caFile, ca.certPem);
  const secureContext = await ca.contextFor('127.0.0.1');
  const server = http.createServer();
  const listener = net.createServer((raw) => {
    const socket = new tls.TLSSocket(raw, { isServer: true, secureContext });
    socket.on('error', () => raw.destroy());
    server.emit('connection', socket);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const wss = new WebSocketServer({ server, path: '/v1/realtime' });
  const state: RealtimeServer = {
    baseURL: `https://127.0.0.1:${(listener.address() as net.AddressInfo).port}/v1`,
    caFile,
    connections: 0,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await new Promise((resolve) => listener.close(resolve));
    },
  };
  wss.on('connection', (socket, req) => {
    state.connections++;
    let seq = 0;
    const send = (event: Record<string, unknown>) => socket.send(JSON.stringify({ event_id: `ev_${++seq}`, ...event }));
    const model = new URL(req.url ?? '/', 'http://x').searchParams.get('model') ?? 'gpt-realtime';
    let session: Record<string, unknown> = { object: 'realtime.session', type: 'realtime', model, instructions: '' };
    let items = 0;
    let responses = 0;
    send({ type: 'session.created', session });
    socket.on('message', (data: Buffer) => {
      const event = JSON.parse(String(data)) as { type: string; session?: object; item?: Record<string, unknown> };
      if (event.type === 'session.update') {
        session = { ...session, ...event.session };
        send({ type: 'session.updated', session });
      } else if (event.type === 'conversation.item.create') {
        send({ type: 'conversation.item.added', item: { id: `item_${++items}`, ...event.item } });
      } else if (event.type === 'response.create') {
        const n = responses++;
        const id = `resp_${n + 1}`;
        send({ type: 'response.created', response: { id, status: 'in_progress', output: [] } });
        setTimeout(() => {
          let output: Record<string, unknown>[];
          if (n === 0) {
            const args = '{"city":"Paris"}';
            send({ type: 'response.function_call_arguments.delta', response_id: id, delta: args });
            send({
              type: 'response.function_call_arguments.done',
              response_id: id,
              call_id: 'call_1',
              name: 'get_weather',
              arguments: args,
            });
            output = [
              { id: `item_${++items}`, type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: args },
            ];
          } else {
            for (const delta of ANSWER) send({ type: 'response.output_text.delta', response_id: id, delta });
            output = [
              {
                id: `item_${++items}`,
                type: 'message',
                role: 'assistant',
                content: [{ type: 'output_text', text: ANSWER.join('') }],
              },
            ];
          }
          send({
            type: 'response.done',
            response: { id, status: 'completed', output, usage: USAGE[Math.min(n, USAGE.length - 1)] },
          });
        }, delayMs);
      }
    });
  });
  return state;
}
