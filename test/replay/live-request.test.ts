// A live call of a replay is sent as the agent made it, less what belongs to the connection: an
// HTTP/2 request's pseudo-headers (:authority, :method, :path, :scheme — the AWS SDK's Bedrock client
// speaks HTTP/2) are its request line, and fetch refuses them as header names.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendRequest } from '../../src/replay/http.js';

let url: string;
let seen: IncomingHttpHeaders | undefined;
const server = createServer((req, res) => {
  seen = req.headers;
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/model/m/converse`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('sends an HTTP/2 request live without its pseudo-headers, its other headers as they were', async () => {
  const body = Buffer.from('{"messages":[]}');
  const answer = await sendRequest(
    url,
    {
      method: 'POST',
      url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse',
      headers: {
        ':authority': 'bedrock-runtime.us-east-1.amazonaws.com',
        ':method': 'POST',
        ':path': '/model/m/converse',
        ':scheme': 'https',
        'content-type': 'application/json',
        'x-amz-date': '20261124T090000Z',
      },
      bodyText: body.toString(),
    },
    body,
  );
  expect(answer.error).toBeUndefined();
  expect(answer.response?.status).toBe(200);
  expect(seen?.['x-amz-date']).toBe('20261124T090000Z');
  expect(Object.keys(seen ?? {}).some((name) => name.startsWith(':'))).toBe(false);
});
