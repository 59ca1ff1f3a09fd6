// Signing a live Bedrock call again: only a SigV4-signed request, only with credentials, in the
// region and for the service the agent's signature named, over the body and host as sent.
import { describe, expect, it } from 'vitest';
import { resignSigV4, sigV4Scope } from './sigv4.js';

const signed = {
  method: 'POST',
  url: 'https://bedrock-runtime.eu-west-3.amazonaws.com/model/m/converse',
  headers: {
    authorization:
      'AWS4-HMAC-SHA256 Credential=REDACTED-KEY-ID/20261124/eu-west-3/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=00',
    'x-amz-date': '20261124T090000Z',
    'x-amz-security-token': 'old-session',
    'content-type': 'application/json',
  },
  bodyText: '{"messages":[]}',
};
const creds = { accessKeyId: 'FAKE-KEY-ID', secretAccessKey: 'fake-secret' };
const to = 'http://127.0.0.1:4010/model/m/converse';

describe('resignSigV4', () => {
  it('leaves a request that is not SigV4-signed, or has no credentials to sign with, as it is', async () => {
    const plain = { ...signed, headers: { 'content-type': 'application/json' } };
    expect(await resignSigV4(plain, Buffer.from(plain.bodyText), to, creds)).toBe(plain);
    expect(await resignSigV4(signed, Buffer.from(signed.bodyText), to, undefined)).toBe(signed);
  });

  it("signs again for the target's host, in the agent's region and service, over the body as sent", async () => {
    const a = await resignSigV4(signed, Buffer.from('{"messages":[]}'), to, creds);
    const b = await resignSigV4(signed, Buffer.from('{"messages":[1]}'), to, creds);
    expect(sigV4Scope(a.headers)).toEqual({ region: 'eu-west-3', service: 'bedrock' });
    expect(a.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=FAKE-KEY-ID\/\d{8}\/eu-west-3\/bedrock\/aws4_request/,
    );
    expect(a.headers.host).toBe('127.0.0.1:4010');
    expect(a.headers['x-amz-security-token']).toBeUndefined();
    expect(a.headers['content-type']).toBe('application/json');
    const signature = (h: Record<string, string>) => /Signature=([0-9a-f]+)/.exec(h.authorization ?? '')?.[1];
    expect(signature(a.headers)).not.toBe(signature(b.headers));
  });

  it('signs the length of the body as sent, not the one the agent signed (an override changed it)', async () => {
    const sent = { ...signed, headers: { ...signed.headers, 'Content-Length': '15' } };
    const body = Buffer.from('{"messages":[],"system":[{"text":"A longer prompt."}]}');
    const a = await resignSigV4(sent, body, to, creds);
    expect(Object.entries(a.headers).filter(([name]) => name.toLowerCase() === 'content-length')).toEqual([
      ['content-length', String(body.length)],
    ]);
  });
});
