// AWS SigV4 for a live model call of a replay (Bedrock): the agent signed the request it made, but
// a prompt override changes its body and --model-endpoint its host, and a replayed agent signs with
// the recording's redacted secret; any of these leaves a signature AWS refuses. The live answerer
// signs the request again as it is sent, with the AWS credentials of the replayer's own
// environment, in the region and for the service the agent's signature named.
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { Checksum, SourceData } from '@smithy/types';
import type { LiveRequest } from './normalize.js';

/** The signature's headers: replaced, never kept beside the new ones. */
const SIGNATURE_HEADERS = new Set(['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);
/** Headers of the request as the agent sent it that are set again for the request as it is sent now. */
const RESET_HEADERS = new Set(['host', 'content-length']);
const SCOPE = /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/;

/** SHA-256 (an HMAC when given a secret) over node:crypto, as the signer asks for it. */
class Sha256 implements Checksum {
  readonly #secret: Buffer | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : bytesOf(secret);
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
  update(data: Uint8Array): void {
    this.#hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** The region and service an AWS SigV4 Authorization header names; undefined when the request is not SigV4-signed. */
export function sigV4Scope(headers: Record<string, string>): { region: string; service: string } | undefined {
  const auth = Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  const m = auth === undefined ? null : SCOPE.exec(auth);
  return m ? { region: m[1] as string, service: m[2] as string } : undefined;
}

/** AWS credentials from an environment, when it has them. */
export function awsCredentials(
  env: NodeJS.ProcessEnv,
): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: token } = env;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return { accessKeyId, secretAccessKey, ...(token ? { sessionToken: token } : {}) };
}

/**
 * `request` signed again for `url` with `credentials` when the agent had SigV4-signed it; as it is
 * otherwise (not an AWS request, or no credentials: the old signature goes along, which an endpoint
 * that checks none, such as a local fake, ignores).
 * @example await resignSigV4(ask.request, ask.bytes, 'http://127.0.0.1:4000/model/m/converse', awsCredentials(process.env))
 */
export async function resignSigV4(
  request: LiveRequest,
  bytes: Buffer | undefined,
  url: string,
  credentials: ReturnType<typeof awsCredentials>,
): Promise<LiveRequest> {
  const scope = sigV4Scope(request.headers);
  if (scope === undefined || credentials === undefined) return request;
  const target = new URL(url);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (!SIGNATURE_HEADERS.has(name.toLowerCase()) && !name.startsWith(':') && !RESET_HEADERS.has(name.toLowerCase()))
      headers[name] = value;
  headers.host = target.host;
  // The SDK signs content-length: the length of the body it sent, not of the one an override made.
  if (bytes) headers['content-length'] = String(bytes.length);
  const query: Record<string, string> = {};
  for (const [k, v] of target.searchParams) query[k] = v;
  // Loaded here, not at the top: @smithy/* is CommonJS (~50 ms to load) and only a resigned call needs it.
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const signer = new SignatureV4({ credentials, region: scope.region, service: scope.service, sha256: Sha256 });
  const signed = await signer.sign({
    method: request.method,
    protocol: target.protocol,
    hostname: target.hostname,
    ...(target.port ? { port: Number(target.port) } : {}),
    path: target.pathname,
    query,
    headers,
    ...(bytes ? { body: new Uint8Array(bytes) } : {}),
  });
  return { ...request, headers: signed.headers };
}
