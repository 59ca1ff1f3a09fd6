// This machine's seal on a recording: an HMAC over what a replay would run (the recording's id, the
// agent's command, cwd and explicit env as stored), keyed by a secret that never leaves the machine.
// A replay runs a recording's command and applies its env only when the seal verifies here: a
// recording made elsewhere (pulled, downloaded, committed by someone else) is data, never code.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalJson } from './canonical-json.js';
import { stateHome } from './state-home.js';
import type { Manifest } from './types.js';

/** A seal as the manifest holds it: HMAC-SHA256, lowercase hex. */
export const SEAL_PATTERN = /^[0-9a-f]{64}$/;

const KEY_TEXT = /^[0-9a-f]{64}$/;
const keys = new Map<string, Buffer>();

/** Where this machine's seal key lives: $TAPEDECK_HOME/seal.key, else ${XDG_STATE_HOME:-~/.local/state}/tapedeck/seal.key. */
export function sealKeyFile(): string {
  return join(stateHome(), 'seal.key');
}

function readKey(file: string): Buffer | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return KEY_TEXT.test(text) ? Buffer.from(text, 'hex') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates the key file once, whoever comes first: the key is written whole to a private temp file
 * (0600) and linked to its name, which fails if another process linked first; both then read the
 * one that won. No reader ever sees a half-written key.
 */
function createKey(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const text = `${randomBytes(32).toString('hex')}\n`;
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    // A file system without hard links: an exclusive create is still one winner (a reader racing
    // the write may find it short and take no key this time, which only costs a seal).
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw error;
    try {
      writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // Already gone: nothing to clean.
    }
  }
}

/**
 * This machine's seal key, or undefined when there is none: `create` makes one when missing (a
 * recorder sealing); a failure to make it (an unwritable home) is never an error, the recording
 * goes unsealed.
 */
export function sealKey(options: { create?: boolean } = {}): Buffer | undefined {
  let file: string;
  try {
    file = sealKeyFile();
  } catch {
    return undefined; // no home directory at all
  }
  const cached = keys.get(file);
  if (cached) return cached;
  let key = readKey(file);
  if (!key && options.create) {
    try {
      createKey(file);
    } catch {
      return undefined;
    }
    key = readKey(file);
  }
  if (key) keys.set(file, key);
  return key;
}

/** What a seal covers: what a replay runs (command, cwd, env) and which recording says so. */
function sealedText(manifest: Pick<Manifest, 'id' | 'agent'>): string {
  const { command, cwd, env } = manifest.agent;
  return canonicalJson({ v: 1, id: manifest.id, command, cwd, env: env ?? {} });
}

function sealWith(key: Buffer, manifest: Pick<Manifest, 'id' | 'agent'>): string {
  return createHmac('sha256', key).update(sealedText(manifest)).digest('hex');
}

/** The manifest with this machine's seal over it (created on first use), or without any seal when there is no key. */
export function sealManifest(manifest: Manifest): Manifest {
  const { seal: _old, ...rest } = manifest;
  const key = sealKey({ create: true });
  return key ? { ...rest, seal: sealWith(key, rest) } : rest;
}

/** Whether the manifest carries this machine's seal over its id, command, cwd and env as they are now. */
export function hasLocalSeal(manifest: Pick<Manifest, 'id' | 'agent' | 'seal'>): boolean {
  if (manifest.seal === undefined || !SEAL_PATTERN.test(manifest.seal)) return false;
  const key = sealKey();
  if (!key) return false;
  return timingSafeEqual(Buffer.from(sealWith(key, manifest), 'hex'), Buffer.from(manifest.seal, 'hex'));
}
