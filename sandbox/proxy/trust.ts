// What a process in the sandbox is told so that the proxy is its way out and the run's CA its
// only trusted root: the proxy variables (both cases; NO_PROXY cleared, so loopback goes through
// it too) and the CA bundle variables of OpenSSL, Node, Python requests, curl, git and wget.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
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
  for (const name of ['SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'GIT_SSL_CAINFO'])
    env[name] = trust.caFile;
  env.WGETRC = trust.wgetrc;
  return env as T;
}
