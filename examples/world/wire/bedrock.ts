// AWS Bedrock's Converse API (POST /model/{modelId}/converse, and /converse-stream: an AWS event
// stream, binary messages framed by the AWS SDKs' own codec), as Bedrock answers: `output.message`
// with `text` and `toolUse` blocks (ids given: results come back as `toolResult` blocks by
// `toolUseId`), `usage` with fake prompt caching (a `cachePoint` after the system prompt: the first
// call writes it, later calls read it; inputTokens the uncached rest). Requests must be SigV4-signed
// with the world's fake credentials (FAKE_AWS), checked as AWS checks them: a request whose body or
// host changed after it was signed is refused (403 InvalidSignatureException).
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Conversation, ToolCallSeen } from '../fake-policy.js';
import { type Meant, type Obj, outputText, pieces, prefixTokens, tokens, type Wire, wordPieces } from './shared.js';

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

/** The world's AWS credentials: fake, not a secret. */
export const FAKE_AWS = { accessKeyId: 'FAKE-KEY-ID-NOT-A-SECRET', secretAccessKey: 'fake-secret-not-a-secret' };

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/;

/** Why AWS would refuse the request's signature, or undefined when it holds. */
export async function signatureFault(request: Parameters<NonNullable<Wire['refuse']>>[0]): Promise<string | undefined> {
  const m = AUTH.exec(request.headers.authorization ?? '');
  if (!m) return 'Missing Authentication Token';
  const [, key, , region, service, signedHeaders, signature] = m as unknown as string[];
  if (key !== FAKE_AWS.accessKeyId) return 'The security token included in the request is invalid.';
  const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(request.headers['x-amz-date'] ?? '');
  if (!stamp) return 'Missing X-Amz-Date';
  const [, y, mo, d, h, mi, s] = stamp;
  const headers: Record<string, string> = {};
  for (const name of (signedHeaders as string).split(';'))
    headers[name] =
      name === 'host' ? (request.headers.host ?? request.headers[':authority'] ?? '') : (request.headers[name] ?? '');
  const signer = new SignatureV4({
    credentials: FAKE_AWS,
    region: region as string,
    service: service as string,
    sha256: Sha256,
  });
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(request.query)) query[k] = v;
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: headers.host ?? '',
      path: request.path,
      query,
      headers,
      body: request.raw,
    },
    { signingDate: new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`) },
  );
  const expected = /Signature=([0-9a-f]+)/.exec(String(signed.headers.authorization))?.[1];
  return expected === signature
    ? undefined
    : 'The request signature we calculated does not match the signature you provided.';
}

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

/** One event of the stream, framed as Bedrock frames it. */
export function frame(type: string, payload: Obj): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
}

const blocks = (message: Obj): Obj[] => (Array.isArray(message.content) ? (message.content as Obj[]) : []);
const textOfBlocks = (list: Obj[]): string =>
  list
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .filter(Boolean)
    .join('\n');

function conversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Obj[];
  const calls: ToolCallSeen[] = [];
  const userTexts: string[] = [];
  for (const m of messages)
    for (const b of blocks(m)) {
      const use = b.toolUse as Obj | undefined;
      const result = b.toolResult as Obj | undefined;
      if (use) calls.push({ id: String(use.toolUseId), name: String(use.name), args: (use.input ?? {}) as Obj });
      else if (result) {
        const target = calls.find((c) => c.id === result.toolUseId);
        if (target) target.result = textOfBlocks((result.content ?? []) as Obj[]);
      } else if (m.role === 'user' && typeof b.text === 'string') userTexts.push(b.text);
    }
  const tools = (((body.toolConfig as Obj | undefined)?.tools ?? []) as Obj[]).map((t) => t.toolSpec as Obj);
  return {
    conv: {
      system: textOfBlocks((body.system ?? []) as Obj[]),
      userText: userTexts.join('\n'),
      calls,
      toolNames: tools.map((t) => String(t?.name)),
    },
    hasHistory: messages.some((m) => m.role === 'assistant'),
  };
}

export const bedrockWire: Wire = {
  api: 'bedrock',
  refuse: signatureFault,
  route(path) {
    const m = ROUTE.exec(path);
    return m ? { stream: m[2] === 'converse-stream' } : undefined;
  },
  reply(body, { hash, path, policy }) {
    const { conv, hasHistory } = conversation(body);
    const decision = policy(conv);
    const model = decodeURIComponent(ROUTE.exec(path)?.[1] ?? 'fake-model');
    const text = decision.kind === 'final' ? decision.text : decision.say;
    const uses =
      decision.kind === 'tool_calls'
        ? decision.calls.map((c, i) => ({ toolUseId: `tooluse_${hash.slice(0, 14)}${i}`, name: c.name, input: c.args }))
        : [];
    const total = tokens(JSON.stringify({ system: body.system, messages: body.messages, tools: body.toolConfig }));
    const prefix = Math.min(total, prefixTokens(body.system, body.toolConfig));
    const output = tokens(outputText(decision));
    const usage = {
      inputTokens: total - prefix,
      outputTokens: output,
      totalTokens: total + output,
      cacheReadInputTokens: hasHistory ? prefix : 0,
      cacheWriteInputTokens: hasHistory ? 0 : prefix,
    };
    const meant: Meant = {
      model,
      text,
      toolCalls: uses.map((u) => ({ name: u.name, arguments: JSON.stringify(u.input) })),
      usage: {
        inputUncached: usage.inputTokens,
        cacheRead: usage.cacheReadInputTokens,
        cacheWrite: usage.cacheWriteInputTokens,
        output,
        reasoning: 0,
      },
    };
    const stopReason = uses.length > 0 ? 'tool_use' : 'end_turn';
    const metrics = { latencyMs: 120 + output };
    return {
      meant,
      json: () => ({
        output: { message: { role: 'assistant', content: [{ text }, ...uses.map((toolUse) => ({ toolUse }))] } },
        stopReason,
        usage,
        metrics,
      }),
      sse: () => '',
      stream: () => {
        const parts: Uint8Array[] = [frame('messageStart', { role: 'assistant' })];
        for (const piece of wordPieces(text))
          parts.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } }));
        parts.push(frame('contentBlockStop', { contentBlockIndex: 0 }));
        uses.forEach((use, i) => {
          const index = i + 1;
          parts.push(
            frame('contentBlockStart', {
              contentBlockIndex: index,
              start: { toolUse: { toolUseId: use.toolUseId, name: use.name } },
            }),
          );
          for (const piece of pieces(JSON.stringify(use.input), 24))
            parts.push(frame('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: piece } } }));
          parts.push(frame('contentBlockStop', { contentBlockIndex: index }));
        });
        parts.push(frame('messageStop', { stopReason }));
        parts.push(frame('metadata', { usage, metrics }));
        return { contentType: 'application/vnd.amazon.eventstream', parts };
      },
    };
  },
};
