// What a process in the sandbox is told so that the proxy is its way out and the run's CA its
// only trusted root: the proxy variables (both cases; NO_PROXY cleared, so loopback goes through
// it too) and the CA bundle variables of the HTTP stacks agents run on (BUNDLE_VARIABLES), and wget's rc;
// and, the other way, what the agent itself trusts outside (`agentTrust`), which the proxy's own
// upstream connections trust: a service behind a private CA is reached as the agent would reach it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import type { RunCa } from './ca.js';

export interface Trust {
  caFile: string;
  wgetrc: string;
}

/** Writes the CA bundle (and a wgetrc naming it: GnuTLS wget reads no variable) into `dir`. */
export async function writeTrust(dir: string, ca: RunCa): Promise<Trust> {
  const caFile = path.join(dir, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  const wgetrc = path.join(dir, 'wgetrc');
  await writeFile(wgetrc, `ca_certificate = ${caFile}\n`);
  return { caFile, wgetrc };
}

/** `base` plus the proxy and CA variables. */
export function proxyEnv<T extends Record<string, string | undefined>>(base: T, proxyUrl: string, trust: Trust): T {
  const env: Record<string, string | undefined> = { ...base };
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = proxyUrl;
    env[name.toLowerCase()] = proxyUrl;
  }
  env.NO_PROXY = '';
  env.no_proxy = '';
  for (const name of BUNDLE_VARIABLES) env[name] = trust.caFile;
  env.WGETRC = trust.wgetrc;
  return env as T;
}

/**
 * The variables naming a CA bundle file an agent's HTTP clients read: Node, OpenSSL (Python's ssl,
 * httpx, Go, Ruby), Nix's OpenSSL, Python requests, curl, git, botocore (boto3, the AWS CLI: it
 * trusts certifi's own bundle otherwise), httplib2, gRPC's C core (grpcio: its own roots
 * otherwise), the Google Cloud SDK and Deno. Inside the sandbox each names the run's CA, whatever
 * the agent's env named (a corporate bundle in AWS_CA_BUNDLE would otherwise be all botocore
 * trusts there); outside, what they name is what the agent trusted (`agentTrust`).
 */
export const BUNDLE_VARIABLES = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'NIX_SSL_CERT_FILE',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'AWS_CA_BUNDLE',
  'HTTPLIB2_CA_CERTS',
  'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH',
  'CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE',
  'DENO_CERT',
] as const;
/** A bundle bigger than this is no CA bundle (the system's whole store is ~250 KB). */
const MAX_BUNDLE = 8 << 20;
const CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/** The PEM certificates in a file (a key or anything else in it is left where it is); none if it cannot be read. */
function certificatesIn(file: string): string[] {
  try {
    if (statSync(file).size > MAX_BUNDLE) return [];
    return readFileSync(file, 'latin1').match(CERTIFICATE) ?? [];
  } catch {
    // Not readable here: the agent could not have used it either.
    return [];
  }
}

/**
 * The CAs a run's agent would have trusted without the sandbox — the certificates in the bundles
 * its env names (BUNDLE_VARIABLES, each file read once) and in the directories of `SSL_CERT_DIR` — beside Node's own roots: what the
 * recording proxy's upstream connections (HTTP and WebSocket) trust, since inside the agent is told
 * to trust the run's CA alone. Undefined when the env names none: the default roots then.
 * Only certificates are read; a key in a bundle is never kept.
 */
export function agentTrust(env: Record<string, string | undefined>): string[] | undefined {
  const files = BUNDLE_VARIABLES.flatMap((name) => (env[name] ? [env[name] as string] : []));
  for (const dir of (env.SSL_CERT_DIR ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      for (const entry of readdirSync(dir)) files.push(path.join(dir, entry));
    } catch {
      // Not a readable directory: nothing the agent could have trusted either.
    }
  }
  const extra = new Set([...new Set(files)].flatMap(certificatesIn));
  return extra.size === 0 ? undefined : [...tls.rootCertificates, ...extra];
}
