// Secrets known by value (src/recording/redact.ts): the values of the run's secret-named environment
// variables (and passwords of its URL-valued ones), and the values the redactor redacted by name,
// replaced wherever they appear in a text the redactor reads (a prompt quoting one, a tool's
// arguments, an error message, a URL path). Which values are worth knowing, the set, and the pass.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { escapeRegExp } from './redact-scan.js';

/**
 * Values shorter than this are not learned: `admin`, `dev`, `1234567` would mangle ordinary text
 * wherever they appear. Eight characters is the shortest password most services accept, and any
 * API key or token is longer.
 */
export const MIN_KNOWN_LENGTH = 8;
/** Longer values (a PEM key is ~1.7 KB) are still learned; past this they are not worth a scan. */
const MAX_KNOWN_LENGTH = 16_384;
/**
 * Learned values (not the environment's) kept at most: the oldest go first. A server whose runs
 * send many different tokens would otherwise slow every text it redacts (bench/redact.ts: 50
 * values ~2x a text's redaction, 300 ~6x); a run's own token is learned again each time its
 * header is seen.
 */
const MAX_LEARNED = 64;

/** Values that name no secret: booleans, numbers, dates, words of configuration. */
const TRIVIAL =
  /^(?:true|false|null|undefined|none|nil|yes|no|on|off|enabled|disabled|redacted|changeme|password|secret|placeholder|x+|\*+|[-+]?[\d.,:_ eE+-]+|[\d-]{8,10}T[\d:.]+Z?)$/i;
/**
 * Default passwords of local databases and words of configuration: as secrets they protect
 * nothing, and they are everywhere in ordinary text (`postgres://…`, `localhost`).
 */
const COMMON =
  /^(?:postgres(?:ql)?|password\d*|localhost|development|production|staging|default|example|admin\d*|root\d*|secret\d*|test\d*|guest\d*|changeit|letmein|qwerty\d*)$/i;

/** Whether `value` is a secret worth finding in free text: long enough, not a number, a flag or a placeholder. */
export function worthKnowing(value: string): boolean {
  if (value.length < MIN_KNOWN_LENGTH || value.length > MAX_KNOWN_LENGTH) return false;
  const trimmed = value.trim();
  if (trimmed.length < MIN_KNOWN_LENGTH || TRIVIAL.test(trimmed) || COMMON.test(trimmed)) return false;
  // A placeholder, or a text holding one: the redactor never searches a placeholder's text.
  if (value.includes('[REDACTED:hmac:')) return false;
  // One character repeated (`--------`, `00000000`) names nothing.
  return !/^(.)\1*$/s.test(trimmed);
}

const URL_PASSWORD = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/@?#:]*:([^/@?#]+)@/;

/** Variables whose names read as secret names but are not: the shell's working directories (`pwd`). */
const NOT_SECRET_ENV = /^(?:PWD|OLDPWD|TAPEDECK_.*)$/;

/**
 * A value that names a file rather than being the secret (GOOGLE_APPLICATION_CREDENTIALS,
 * POSTGRES_PASSWORD_FILE, SSL_KEY=/etc/ssl/key.pem): a path that exists. Replaced wherever it
 * appears, it would break the command lines and paths a replay runs.
 */
function namesAFile(value: string): boolean {
  if (!/^(?:\/|\.{1,2}\/|~\/|[A-Za-z]:[\\/])/.test(value)) return false;
  try {
    return existsSync(value.startsWith('~/') ? path.join(homedir(), value.slice(2)) : value);
  } catch {
    return false;
  }
}

/**
 * The secret values of an environment: those of variables whose names name secrets
 * (OPENAI_API_KEY, PGPASSWORD) but for paths of files that exist, and the password of each
 * URL-valued one (DATABASE_URL=postgres://app:PASSWORD@host/db).
 */
export function envSecretValues(
  env: Record<string, string | undefined>,
  isSecretName: (name: string) => boolean,
): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string' || value.length < MIN_KNOWN_LENGTH) continue;
    if (NOT_SECRET_ENV.test(name)) continue;
    if (isSecretName(name) && !namesAFile(value)) out.push(value);
    const password = URL_PASSWORD.exec(value)?.[1];
    if (password !== undefined) out.push(password);
  }
  return out;
}

/** The forms a value takes in text: itself, JSON-escaped (inside a JSON string), percent-encoded (in a URL or form). */
function formsOf(value: string): string[] {
  const forms = [value];
  const json = JSON.stringify(value).slice(1, -1);
  if (json !== value) forms.push(json);
  let decoded: string | undefined;
  try {
    decoded = decodeURIComponent(value);
  } catch {}
  // A password taken from a URL is percent-encoded there; the program that uses it decodes it.
  if (decoded !== undefined && decoded !== value && decoded.length >= MIN_KNOWN_LENGTH) forms.push(decoded);
  const encoded = encodeURIComponent(value);
  if (encoded !== value) forms.push(encoded);
  return forms;
}

/**
 * The set of known secret values and the pass that replaces them. `generation` changes whenever a
 * value is added, so a caller can tell whether what it redacted before may now read differently.
 */
export class KnownSecrets {
  /** Each form (the value, its escaped and encoded forms) → the value its placeholder is made from. */
  private readonly forms = new Map<string, string>();
  private readonly learned: string[] = [];
  private readonly permanent = new Set<string>();
  private regex: RegExp | undefined;
  /** The forms as their UTF-8 bytes read as latin1 (one character a byte), and their alternation. */
  private bytesForms: Map<string, string> | undefined;
  private bytesRegex: RegExp | undefined;
  generation = 0;

  get size(): number {
    return this.forms.size;
  }

  /** Adds a value (ignored unless worthKnowing). `permanent`: the environment's, never forgotten. */
  add(value: string, permanent = false): boolean {
    // Seen before (every request's Authorization header): nothing to check again.
    if (this.forms.get(value) === value) {
      if (permanent) this.permanent.add(value);
      return false;
    }
    if (!worthKnowing(value)) return false;
    if (permanent) this.permanent.add(value);
    if (!permanent) {
      this.learned.push(value);
      if (this.learned.length > MAX_LEARNED) this.forget(this.learned.shift() as string);
    }
    for (const form of formsOf(value))
      if (form.length >= MIN_KNOWN_LENGTH && !this.forms.has(form)) this.forms.set(form, value);
    this.changed();
    return true;
  }

  private forget(value: string): void {
    if (this.permanent.has(value)) return;
    for (const form of formsOf(value)) if (this.forms.get(form) === value) this.forms.delete(form);
  }

  private changed(): void {
    this.generation++;
    this.regex = undefined;
    this.bytesForms = undefined;
    this.bytesRegex = undefined;
  }

  /**
   * `text` with every known value (any form) replaced by `placeholder(value)`, longest first.
   * `text` holds no placeholder (the redactor passes the text between them). One alternation
   * regex, compiled once per change: irregexp's lookahead over the alternatives' characters skips
   * through text several times faster than one includes() a value (measured: 4 values, 1 KiB).
   */
  replace(text: string, placeholder: (value: string) => string): string {
    if (this.forms.size === 0 || text.length < MIN_KNOWN_LENGTH) return text;
    if (this.regex === undefined) {
      // Alternatives are tried in order at each place: the longest known value that starts there wins.
      const sorted = [...this.forms.keys()].sort((a, b) => b.length - a.length);
      this.regex = new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
    }
    const re = this.regex;
    re.lastIndex = 0;
    if (!re.test(text)) return text;
    re.lastIndex = 0;
    return text.replace(re, (form) => placeholder(this.forms.get(form) as string));
  }

  /**
   * `view` (bytes read as latin1: one character a byte) with the bytes of every known value (any
   * form, as UTF-8) replaced by `mask(value, byteLength)`, which must be that many characters: the
   * bytes keep their length. Longest first, as replace().
   */
  replaceBytes(view: string, mask: (value: string, length: number) => string): string {
    if (this.forms.size === 0 || view.length < MIN_KNOWN_LENGTH) return view;
    if (this.bytesRegex === undefined || this.bytesForms === undefined) {
      const forms = new Map<string, string>();
      for (const [form, value] of this.forms) forms.set(Buffer.from(form, 'utf8').toString('latin1'), value);
      const sorted = [...forms.keys()].sort((a, b) => b.length - a.length);
      this.bytesForms = forms;
      this.bytesRegex = new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
    }
    const re = this.bytesRegex;
    const forms = this.bytesForms;
    re.lastIndex = 0;
    if (!re.test(view)) return view;
    re.lastIndex = 0;
    return view.replace(re, (form) => mask(forms.get(form) as string, form.length));
  }
}
