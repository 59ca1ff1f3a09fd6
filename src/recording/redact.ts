// Redaction at write time: secrets in headers, URLs, bodies, stream chunks and JSON payloads are
// replaced by keyed-HMAC placeholders, so equal secrets stay equal (and matching still works)
// while the secret itself never reaches disk.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { TapedeckError } from './errors.js';
import type {
  Body,
  EventType,
  HttpExchangePayload,
  StreamChunk,
  WebSocketExchangePayload,
  WebSocketMessage,
} from './types.js';

/** What to redact beyond the defaults, and with which key. */
export interface RedactionOptions {
  /** The HMAC key. Default: env TAPEDECK_REDACTION_KEY, else the per-user key file. */
  key?: string | Uint8Array;
  /** Default: $XDG_CONFIG_HOME/tapedeck/redaction.key or ~/.config/tapedeck/redaction.key (created 0600). */
  keyFile?: string;
  /** Extra header names whose whole value is secret (case-insensitive). */
  headers?: string[];
  /** Extra JSON field / query parameter names whose value is secret (case-insensitive, exact). */
  fields?: string[];
  /** Extra patterns; every match in any text is replaced. Use lookbehind for context: /(?<=pin=)\d+/. */
  patterns?: Array<string | RegExp>;
  /** Header, field or parameter names never redacted (case-insensitive), e.g. 'max_tokens'. */
  allow?: string[];
}

/** Redacts the parts of a recording that may carry secrets. All methods are pure and idempotent. */
export interface Redactor {
  /** A short id of the key (not the key), stored in the manifest so replays can check they use the same one. */
  readonly keyId: string;
  /** The rules applied, as stored in manifest.redaction.rules. */
  readonly rules: string[];
  /** `[REDACTED:hmac:<12 hex>]` for a secret: equal secrets give equal placeholders. */
  placeholder(secret: string): string;
  /** Whether a header, JSON field or query parameter of this name holds a secret. */
  isSecretName(name: string): boolean;
  headers(headers: Record<string, string>): Record<string, string>;
  url(url: string): string;
  /** Token patterns, `"secret_field": "…"` pairs and `token=…` pairs in free text (bodies, SSE chunks). */
  text(text: string): string;
  /** Walks a JSON value: string fields with secret names become placeholders, other strings go through text(). */
  json<T>(value: T): T;
  /** A command line: the value after a secret-named flag (`--token VALUE`) becomes a placeholder, the rest goes through text(). */
  argv(args: readonly string[]): string[];
  /** An inline text body through text(), with its size updated. Blob and base64 bodies are returned as they are. */
  body(body: Body): Body;
  /** Marks a Body whose text already went through text(), so body() returns it untouched (the writer's fast path). */
  markClean(body: Body): Body;
  exchange(payload: HttpExchangePayload): HttpExchangePayload;
  /** The payload of an event of this type, redacted as the writer stores it. */
  payload(type: EventType, payload: unknown): unknown;
}

export const PLACEHOLDER_PREFIX = '[REDACTED:hmac:';
const PLACEHOLDER = /^\[REDACTED:hmac:[0-9a-f]{12}\]$/;
const PLACEHOLDER_SPLIT = /(\[REDACTED:hmac:[0-9a-f]{12}\])/;

/** Where this user's redaction key file lives (when TAPEDECK_REDACTION_KEY is not set): $XDG_CONFIG_HOME/tapedeck/redaction.key, else ~/.config/tapedeck/redaction.key. */
export function redactionKeyFile(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'tapedeck', 'redaction.key');
}

export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value);
}

const DEFAULT_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'api-key'];
const SECRET_WORDS = new Set([
  'key',
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'authorization',
  'cookie',
  'credential',
  'credentials',
]);
/** `<word> key` names that are not secrets: database and cache keys, public keys. */
const NOT_SECRET_KEYS = new Set([
  'primary',
  'foreign',
  'sort',
  'partition',
  'range',
  'hash',
  'row',
  'composite',
  'unique',
  'cache',
  'idempotency',
  'dedup',
  'dedupe',
  'public',
  'object',
  'lookup',
  'map',
  'group',
  'order',
  'message',
  'translation',
  'i18n',
  'shortcut',
  'hot',
]);
const SECRET_SUFFIX =
  /(apikey|accesskey|secretkey|privatekey|accesstoken|refreshtoken|idtoken|authtoken|sessiontoken|secret|password|passwd)$/;
/** A command-line flag that takes its value as the next argument: `--name` or `-name`, no `=`. */
const SECRET_FLAG = /^--?[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
const COOKIE_ATTRIBUTES = new Set([
  'path',
  'domain',
  'expires',
  'max-age',
  'samesite',
  'secure',
  'httponly',
  'priority',
  'partitioned',
]);

const TOKEN_PATTERNS: Array<[string, RegExp]> = [
  ['bearer', /(?<=\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9\-._~+/]{8,}=*/g],
  ['sk-key', /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/g],
  ['github-token', /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g],
  ['aws-access-key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['slack-token', /\bxox[abprs]-[A-Za-z0-9-]{10,}/g],
  ['google-api-key', /\bAIza[0-9A-Za-z_-]{35}/g],
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g],
];
/** Words of secret names (fields, parameters): anywhere in a name. */
const NAME_WORDS = ['key', 'token', 'secret', 'passw', 'pwd', 'passphrase', 'credential', 'authoriz', 'cookie'];
/** Words that start a token pattern (each pattern begins at \b): they count only at a word's start. */
const PATTERN_WORDS = [
  'bearer',
  'sk-',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'github_pat_',
  'akia',
  'asia',
  'xox',
  'aiza',
  'eyj',
];
const TOKEN_CAMEL_S = /[Tt][Oo][Kk][Ee][Nn]S/;
// "name": "value" in JSON text, and \"name\": \"value\" in JSON that is itself inside a JSON string.
const JSON_FIELD = /"((?:[^"\\\n]|\\.){1,128})"(\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g;
const ESCAPED_JSON_FIELD = /\\"([A-Za-z0-9_.$-]{1,128})\\"(\s*:\s*)\\"([^"\\]*)\\"/g;
// name=value in query strings, form bodies, env files and command lines.
const PAIR = /(^|[?&;\s,])([A-Za-z0-9_.\-[\]]{1,128})=([^&\s#"'<>;,]*)/g;
/**
 * A named pair in JSON text: {"key": NAME, "value": …} or {"name": NAME, "value": …} (any case:
 * OpenTelemetry attributes, AWS tags, Kubernetes env, HAR headers). NAME is a name, not a secret;
 * the value is the secret when NAME names one.
 */
const NAMED_PAIR = /"(key|name)"\s*:\s*"((?:[^"\\\n]|\\.){1,256})"\s*,\s*"value"\s*:\s*/gi;
/** What follows a pair's name: its value field. */
const VALUE_NEXT = /^\s*,\s*"value"\s*:/i;
/** A pair's name that reads as one (`service.name`, `gen_ai.request.model`, `Environment`), not as a random secret. */
function nameLike(name: string): boolean {
  return (
    name.length <= 128 &&
    /^[A-Za-z][A-Za-z0-9]*(?:[._:/ -][A-Za-z0-9]+)*$/.test(name) &&
    (/[._:/ -]/.test(name) || /^[A-Za-z]+$/.test(name))
  );
}

/**
 * Where the JSON value that starts at `at` ends (a string, object or array), or undefined. Scans
 * at most `budget.left` characters, and takes them from it: a text of many values that never close
 * costs its length a few times, not its length per value.
 */
function jsonValueEnd(text: string, at: number, budget: { left: number }): number | undefined {
  const open = text[at];
  if (open !== '"' && open !== '{' && open !== '[') return undefined;
  const stop = Math.min(text.length, at + budget.left);
  const end = open === '"' ? stringEnd(text, at, stop) : containerEnd(text, at, stop);
  budget.left -= (end ?? stop) - at;
  return end;
}

/** The index after the object or array that opens at `at`, scanning no further than `stop`. */
function containerEnd(text: string, at: number, stop: number): number | undefined {
  let depth = 0;
  for (let i = at; i < stop; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i, stop);
      if (end === undefined) return undefined;
      i = end - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** The index after the JSON string that opens at `at`, or undefined when it does not close (before `stop`). */
function stringEnd(text: string, at: number, stop = text.length): number | undefined {
  for (let i = at + 1; i < stop; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"') return i + 1;
    else if (c === '\n') return undefined;
  }
  return undefined;
}

const keyCache = new Map<string, Buffer>();

function resolveKey(options: RedactionOptions): Buffer {
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

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function toGlobal(pattern: string | RegExp): RegExp {
  if (typeof pattern === 'string') return new RegExp(pattern, 'g');
  return pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`);
}

function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** Sets an own property, even one named `__proto__` (JSON.parse makes those; plain assignment would not). */
function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__')
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}

/** The fields of a named pair ({ key | name: string, value }), any case, or undefined. */
function pairOf(input: Record<string, unknown>): { name: string; nameField: string; valueField: string } | undefined {
  let nameField: string | undefined;
  let valueField: string | undefined;
  for (const field of Object.keys(input)) {
    const lower = field.toLowerCase();
    if (lower === 'value') valueField = field;
    else if ((lower === 'key' || lower === 'name') && typeof input[field] === 'string') nameField = field;
  }
  if (nameField === undefined || valueField === undefined) return undefined;
  return { name: input[nameField] as string, nameField, valueField };
}

function decodeJsonString(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

function decodeUriLoose(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * A redactor with the default rules plus `options`.
 *
 * @example
 * const r = createRedactor({ key: 'k' });
 * r.headers({ Authorization: 'Bearer sk-…' }) // { Authorization: 'Bearer [REDACTED:hmac:1a2b3c4d5e6f]' }
 */
export function createRedactor(options: RedactionOptions = {}): Redactor {
  const key = resolveKey(options);
  const keyId = createHmac('sha256', key).update('tapedeck.redaction.key-id').digest('hex').slice(0, 12);
  const allow = new Set((options.allow ?? []).map((n) => n.toLowerCase()));
  const secretHeaders = new Set([...DEFAULT_HEADERS, ...(options.headers ?? []).map((n) => n.toLowerCase())]);
  const secretFields = new Set((options.fields ?? []).map((n) => n.toLowerCase()));
  const userPatterns = (options.patterns ?? []).map(toGlobal);
  // Matched against lower-cased text: a case-sensitive alternation is faster than an /i one.
  // 'tokens' at a word's end (max_tokens, prompt_tokens: every model call's body) names no secret
  // (isSecretName splits 'max_tokens' into max, tokens), so it alone does not send a text through
  // the redaction passes; but 'tokenS' is the words token, s (TOKEN_CAMEL_S catches it).
  // The token patterns' own words (sk-, ghp_, eyj, bearer…) count only where their pattern can
  // match, at a word's start: 'desk-1', 'task-', 'risk-' are no hint of an sk- key.
  const prefilterWords = new RegExp(
    [
      ...[...NAME_WORDS, ...secretFields].map((w) => (w === 'token' ? 'token(?!s[^a-z])' : escapeRegExp(w))),
      ...PATTERN_WORDS.map((w) => `\\b${escapeRegExp(w)}`),
    ].join('|'),
  );
  const prefilter = {
    test: (lower: string, original: string) => prefilterWords.test(lower) || TOKEN_CAMEL_S.test(original),
  };

  const rules = [
    ...[...secretHeaders].map((h) => `header:${h}`),
    'field:key|token|secret|password|credential (as a word of the name)',
    'query:key|token|secret|password|credential (as a word of the name)',
    ...TOKEN_PATTERNS.map(([name]) => `pattern:${name}`),
    ...[...secretFields].map((f) => `field:${f}`),
    ...userPatterns.map((re) => `pattern:/${re.source}/${re.flags}`),
    ...[...allow].map((n) => `allow:${n}`),
  ];

  const placeholders = new Map<string, string>();
  function placeholder(secret: string): string {
    let p = placeholders.get(secret);
    if (p === undefined) {
      p = `${PLACEHOLDER_PREFIX}${createHmac('sha256', key).update(secret, 'utf8').digest('hex').slice(0, 12)}]`;
      if (placeholders.size > 10_000) placeholders.clear();
      placeholders.set(secret, p);
    }
    return p;
  }
  function redactValue(secret: string): string {
    return secret === '' || isPlaceholder(secret) ? secret : placeholder(secret);
  }

  const nameCache = new Map<string, boolean>();
  function isSecretName(name: string): boolean {
    let verdict = nameCache.get(name);
    if (verdict === undefined) {
      const lower = name.toLowerCase();
      if (allow.has(lower)) verdict = false;
      else if (secretFields.has(lower) || secretHeaders.has(lower)) verdict = true;
      else {
        const words = splitWords(name);
        verdict =
          words.some(
            (w, i) => SECRET_WORDS.has(w) && !(w === 'key' && i > 0 && NOT_SECRET_KEYS.has(words[i - 1] as string)),
          ) || SECRET_SUFFIX.test(words.join(''));
      }
      if (nameCache.size > 10_000) nameCache.clear();
      nameCache.set(name, verdict);
    }
    return verdict;
  }

  /** Every string of a JSON value that is not an object's field name, as a placeholder. */
  function redactJsonStrings(json: string): string {
    let out = '';
    let last = 0;
    for (let i = 0; i < json.length; i++) {
      if (json[i] !== '"') continue;
      const end = stringEnd(json, i);
      if (end === undefined) break;
      const isName = /^\s*:/.test(json.slice(end, end + 16));
      if (!isName) {
        out += `${json.slice(last, i)}${JSON.stringify(redactValue(decodeJsonString(json.slice(i + 1, end - 1))))}`;
        last = end;
      }
      i = end - 1;
    }
    return out + json.slice(last);
  }

  /** Named pairs' values, where their names name secrets (NAMED_PAIR). */
  function namedPairs(text: string): string {
    if (!/"value"/i.test(text)) return text;
    let out = '';
    let last = 0;
    // Values are scanned for their end within a budget of a few times the text's length.
    const budget = { left: 4 * text.length + 1024 };
    NAMED_PAIR.lastIndex = 0;
    for (let m = NAMED_PAIR.exec(text); m !== null && budget.left > 0; m = NAMED_PAIR.exec(text)) {
      if (!isSecretName(decodeJsonString(m[2] as string))) continue;
      const start = m.index + m[0].length;
      const end = jsonValueEnd(text, start, budget);
      if (end === undefined) continue;
      out += text.slice(last, start) + redactJsonStrings(text.slice(start, end));
      last = end;
      NAMED_PAIR.lastIndex = end;
    }
    return last === 0 ? text : out + text.slice(last);
  }

  function textSegment(text: string): string {
    let out = text;
    if (prefilter.test(out.toLowerCase(), out)) {
      out = namedPairs(out);
      out = out.replace(JSON_FIELD, (match, name: string, sep: string, value: string, at: number, whole: string) =>
        value !== '' &&
        isSecretName(decodeJsonString(name)) &&
        // A pair's name ("key": "service.name", "value": …) is a name, not the secret.
        !(
          name.toLowerCase() === 'key' &&
          nameLike(decodeJsonString(value)) &&
          VALUE_NEXT.test(whole.slice(at + match.length, at + match.length + 32))
        )
          ? `"${name}"${sep}"${redactValue(decodeJsonString(value))}"`
          : match,
      );
      out = out.replace(ESCAPED_JSON_FIELD, (match, name: string, sep: string, value: string) =>
        value !== '' && isSecretName(name) ? `\\"${name}\\"${sep}\\"${redactValue(value)}\\"` : match,
      );
      out = out.replace(PAIR, (match, lead: string, name: string, value: string) =>
        value !== '' && !isPlaceholder(value) && isSecretName(decodeUriLoose(name))
          ? `${lead}${name}=${placeholder(decodeUriLoose(value))}`
          : match,
      );
      for (const re of TOKEN_PATTERNS) out = out.replace(re[1], (m) => placeholder(m));
    }
    for (const re of userPatterns) out = out.replace(re, (m) => (m === '' ? m : placeholder(m)));
    return out;
  }

  function text(input: string): string {
    if (input.length === 0) return input;
    if (!input.includes(PLACEHOLDER_PREFIX)) return textSegment(input);
    // Leave earlier placeholders alone so redacting twice changes nothing.
    const parts = input.split(PLACEHOLDER_SPLIT);
    for (let i = 0; i < parts.length; i += 2) parts[i] = textSegment(parts[i] as string);
    return parts.join('');
  }

  function cookieValue(value: string): string {
    return value.replace(/(^|[;,]\s*)([^=;,\s]+)=([^;,]*)/g, (match, lead: string, name: string, v: string) =>
      COOKIE_ATTRIBUTES.has(name.toLowerCase()) ? match : `${lead}${name}=${redactValue(v)}`,
    );
  }

  function headerValue(lowerName: string, value: string): string {
    if (lowerName === 'cookie' || lowerName === 'set-cookie') return cookieValue(value);
    const scheme = /^([A-Za-z][A-Za-z0-9_-]*)\s+(\S.*)$/.exec(value);
    if (scheme && (lowerName === 'authorization' || lowerName === 'proxy-authorization')) {
      return `${scheme[1]} ${redactValue(scheme[2] as string)}`;
    }
    return redactValue(value);
  }

  function headers(input: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(input)) {
      const lower = name.toLowerCase();
      if (allow.has(lower) || typeof value !== 'string') setOwn(out, name, value);
      else if (secretHeaders.has(lower) || isSecretName(name)) setOwn(out, name, headerValue(lower, value));
      else setOwn(out, name, text(value));
    }
    return out;
  }

  function url(input: string): string {
    // user:password@host
    const withoutPassword = input.replace(
      /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/@?#:]*):([^/@?#]*)@/,
      (_m, scheme: string, user: string, password: string) => `${scheme}${user}:${redactValue(password)}@`,
    );
    return text(withoutPassword);
  }

  function json<T>(value: T): T {
    return walk(value, 0) as T;
  }
  /** `--token`, `-password`, `--api-key`: a flag (no `=value`) whose name is a secret name. */
  function isSecretFlag(arg: unknown): boolean {
    return typeof arg === 'string' && SECRET_FLAG.test(arg) && isSecretName(arg.replace(/^--?/, ''));
  }
  function argv(args: readonly string[]): string[] {
    return args.map((arg, i) => (i > 0 && isSecretFlag(args[i - 1]) ? redactValue(arg) : text(arg)));
  }
  /** Every string in `value` as a placeholder (a secret-named pair's value). */
  function every(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return redactValue(value);
    if (value === null || typeof value !== 'object' || depth > 200) return value;
    if (Array.isArray(value)) return value.map((item) => every(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(value)) setOwn(out, name, every(v, depth + 1));
    return out;
  }

  function walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return text(value);
    if (value === null || typeof value !== 'object' || depth > 200) return value;
    // An array of strings may be a command line (run.started's command, a spawned tool's argv).
    if (Array.isArray(value)) {
      return value.map((item, i) =>
        typeof item === 'string' && i > 0 && isSecretFlag(value[i - 1]) ? redactValue(item) : walk(item, depth + 1),
      );
    }
    const input = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    // A named pair ({ key: NAME, value }, { Name, Value }): NAME stays (a name), the value is the
    // secret when NAME names one (NAMED_PAIR).
    const pair = pairOf(input);
    for (const [name, v] of Object.entries(input)) {
      if (pair !== undefined && name === pair.nameField && typeof v === 'string' && nameLike(v))
        setOwn(out, name, text(v));
      else if (pair !== undefined && name === pair.valueField && isSecretName(pair.name))
        setOwn(out, name, every(v, depth + 1));
      else setOwn(out, name, typeof v === 'string' && isSecretName(name) ? redactValue(v) : walk(v, depth + 1));
    }
    // A Body inside a payload: keep its size true to the stored text.
    if (typeof out.size === 'number' && typeof out.text === 'string' && out.text !== input.text) {
      out.size = Buffer.byteLength(out.text, 'utf8');
    }
    return out;
  }

  // Bodies this redactor made (via redactedBody) are already clean: skip a second pass over them.
  const clean = new WeakSet<Body>();
  function markClean(b: Body): Body {
    clean.add(b);
    return b;
  }
  function body(input: Body): Body {
    if (input.text === undefined || clean.has(input)) return input;
    const redacted = text(input.text);
    return redacted === input.text ? input : { ...input, text: redacted, size: Buffer.byteLength(redacted, 'utf8') };
  }

  /**
   * Stream chunks one by one; but when a secret straddles a chunk boundary (the joined stream
   * redacts differently), each chunk's text is moved to the chunk that completes its SSE event
   * (blank line), so every event is redacted whole and the chunks still join to the body.
   */
  function chunks(input: StreamChunk[]): StreamChunk[] {
    const each = input.map((c) => ({ ...c, data: text(c.data) }));
    const joined = input.map((c) => c.data).join('');
    if (each.map((c) => c.data).join('') === text(joined)) return each;
    const out: StreamChunk[] = [];
    let carry = '';
    for (const chunk of input) {
      const pending = carry + chunk.data;
      const end = Math.max(pending.lastIndexOf('\n\n'), pending.lastIndexOf('\r\n\r\n'));
      if (end === -1) {
        carry = pending;
        out.push({ ...chunk, data: '' });
        continue;
      }
      const cut = pending.startsWith('\r\n\r\n', end) ? end + 4 : end + 2;
      out.push({ ...chunk, data: text(pending.slice(0, cut)) });
      carry = pending.slice(cut);
    }
    const last = out[out.length - 1];
    if (carry !== '' && last) last.data += text(carry);
    return out;
  }

  function exchange(payload: HttpExchangePayload): HttpExchangePayload {
    const { request, response, error } = payload;
    const out: HttpExchangePayload = {
      ...payload,
      request: {
        ...request,
        url: url(request.url),
        headers: headers(request.headers),
        ...(request.body ? { body: body(request.body) } : {}),
      },
    };
    if (response) {
      out.response = {
        ...response,
        headers: headers(response.headers),
        ...(response.body ? { body: body(response.body) } : {}),
        ...(response.chunks ? { chunks: chunks(response.chunks) } : {}),
      };
    }
    if (error) out.error = { ...error, message: text(error.message) };
    return out;
  }

  /** A WebSocket turn: the upgrade's URL and headers as an exchange's, each message's text as a body's. */
  function websocketExchange(payload: WebSocketExchangePayload): WebSocketExchangePayload {
    const message = (m: WebSocketMessage): WebSocketMessage => ({
      ...m,
      ...(m.body ? { body: body(m.body) } : {}),
      ...(m.reason ? { reason: text(m.reason) } : {}),
    });
    return {
      ...payload,
      url: url(payload.url),
      ...(payload.request
        ? { request: { ...payload.request, url: url(payload.request.url), headers: headers(payload.request.headers) } }
        : {}),
      ...(payload.response ? { response: { ...payload.response, headers: headers(payload.response.headers) } } : {}),
      ...(payload.sent ? { sent: message(payload.sent) } : {}),
      received: payload.received.map(message),
    };
  }

  function payload(type: EventType, value: unknown): unknown {
    switch (type) {
      case 'http.exchange':
        return exchange(value as HttpExchangePayload);
      case 'websocket.exchange':
        return websocketExchange(value as WebSocketExchangePayload);
      case 'fs.changed':
      case 'db.changed':
      case 'nondeterminism':
      case 'step.started':
      case 'step.completed':
        // World state and values handed to the agent stay exact: replay and worldAt depend on them.
        return value;
      default:
        return json(value);
    }
  }

  return {
    keyId,
    rules,
    placeholder,
    isSecretName,
    headers,
    url,
    text,
    json,
    argv,
    body,
    markClean,
    exchange,
    payload,
  };
}
