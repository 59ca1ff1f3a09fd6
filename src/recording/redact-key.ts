// The redaction key (src/recording/redact.ts): given, from TAPEDECK_REDACTION_KEY, or this user's key
// file, made once (0600, by exclusive creation) and cached per file.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { TapedeckError } from './errors.js';
import type { RedactionOptions } from './redact.js';

/** Where this user's redaction key file lives (when TAPEDECK_REDACTION_KEY is not set): $XDG_CONFIG_HOME/tapedeck/redaction.key, else ~/.config/tapedeck/redaction.key. */
export function redactionKeyFile(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'tapedeck', 'redaction.key');
}

const keyCache = new Map<string, Buffer>();

export function resolveKey(options: RedactionOptions): Buffer {
  if (options.key !== undefined) {
    const key = typeof options.key === 'string' ? Buffer.from(options.key, 'utf8') : Buffer.from(options.key);
    if (key.byteLength === 0)
      throw new TapedeckError('BAD_REDACTION_KEY', 'The redaction key is empty; give a non-empty key.');
    return key;
  }
  const fromEnv = process.env.TAPEDECK_REDACTION_KEY;
  if (fromEnv) return Buffer.from(fromEnv, 'utf8');
  const file = options.keyFile ?? redactionKeyFile();
  const cached = keyCache.get(file);
  if (cached) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
    }
    text = readFileSync(file, 'utf8').trim();
  }
  if (text.length === 0) {
    throw new TapedeckError(
      'BAD_REDACTION_KEY',
      `The redaction key file ${file} is empty; delete it to get a new key.`,
    );
  }
  const key = Buffer.from(text, 'utf8');
  keyCache.set(file, key);
  return key;
}
