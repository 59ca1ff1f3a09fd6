// Redaction at write time: secrets in headers, URLs, bodies, stream chunks and JSON payloads are
// replaced by keyed-HMAC placeholders, so equal secrets stay equal (and matching still works)
// while the secret itself never reaches disk.
// Secrets known by value (the env's, and values redacted by name) are replaced wherever they appear.
// What a secret looks like: redact-rules.ts; the key: redact-key.ts; the text readers: redact-scan.ts;
// an exchange's and a WebSocket turn's parts: redact-events.ts; secrets known by value: redact-known.ts.
import { createHmac } from 'node:crypto';
import { type RedactorParts, redactExchange, redactWebSocketTurn } from './redact-events.js';
import { resolveKey } from './redact-key.js';
import { envSecretValues, KnownSecrets, MIN_KNOWN_LENGTH } from './redact-known.js';
import {
  COOKIE_ATTRIBUTES,
  DEFAULT_HEADERS,
  ESCAPED_JSON_FIELD,
  isPlaceholder,
  JSON_FIELD,
  NAME_WORDS,
  NAMED_PAIR,
  NOT_SECRET_KEYS,
  nameLike,
  PAIR,
  PATTERN_WORDS,
  PLACEHOLDER_PREFIX,
  PLACEHOLDER_SPLIT,
  SECRET_FLAG,
  SECRET_SUFFIX,
  SECRET_WORDS,
  SHORT_MASK_PREFIX,
  TOKEN_CAMEL_S,
  TOKEN_PATTERNS,
  TOKEN_STARTS,
  VALUE_NEXT,
} from './redact-rules.js';
import {
  decodeJsonString,
  decodeUriLoose,
  escapeRegExp,
  jsonValueEnd,
  pairOf,
  setOwn,
  splitWords,
  stringEnd,
  toGlobal,
} from './redact-scan.js';
import type { Body, EventType, HttpExchangePayload, StepStartedPayload, WebSocketExchangePayload } from './types.js';

/** scheme://, user info, host[:port], and the rest (path, query, fragment) of a URL. */
const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)(?:([^/?#@]*)@)?([^/?#@]*)(.*)$/s;

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
  /**
   * The environment whose secrets are known by value: the values of its secret-named variables
   * (OPENAI_API_KEY, PGPASSWORD) and the passwords of its URL-valued ones (DATABASE_URL) are
   * replaced wherever they appear in text. Default: process.env; false: none.
   */
  env?: Record<string, string | undefined> | false;
  /** Values known to be secret, replaced wherever they appear in text (shorter than 8 characters: ignored). */
  secrets?: string[];
}

/**
 * Redacts the parts of a recording that may carry secrets. All methods are idempotent; the only
 * state they change is the set of secrets known by value, which grows as values are redacted by name.
 */
export interface Redactor {
  /** A short id of the key (not the key), stored in the manifest so replays can check they use the same one. */
  readonly keyId: string;
  /** The rules applied, as stored in manifest.redaction.rules. */
  readonly rules: string[];
  /** `[REDACTED:hmac:<12 hex>]` for a secret: equal secrets give equal placeholders. */
  placeholder(secret: string): string;
  /** Whether a header, JSON field or query parameter of this name holds a secret. */
  isSecretName(name: string): boolean;
  /**
   * Makes `value` known: from now on text() replaces it wherever it appears (and its JSON-escaped
   * and percent-encoded forms). Values redacted by name are learned this way as they are seen.
   * Short or trivial values (under 8 characters, numbers, booleans) are ignored: false.
   */
  learn(value: string): boolean;
  /** Goes up whenever a secret becomes known: what was redacted before may hold it (the manifest). */
  readonly generation: number;
  /** Learns the secrets of an environment (see RedactionOptions.env). */
  learnEnv(env: Record<string, string | undefined>): void;
  headers(headers: Record<string, string>): Record<string, string>;
  url(url: string): string;
  /** Token patterns, `"secret_field": "…"` pairs, `token=…` pairs and known secret values in free text (bodies, SSE chunks). */
  text(text: string): string;
  /**
   * Bytes kept as bytes (a protobuf or gRPC body, a multipart upload, a binary WebSocket message):
   * known secret values (their UTF-8 bytes) and token patterns (ASCII) replaced in place by a mask
   * of the same number of bytes (`[REDACTED:hmac:<12 hex>]` padded with `*`, or for a shorter
   * secret `[R:<hex>]` of the same HMAC), so length prefixes, frame lengths and boundaries stay
   * valid; equal secrets give equal masks. The same bytes when nothing is found.
   */
  bytes(bytes: Uint8Array): Buffer;
  /** Walks a JSON value: string fields with secret names become placeholders, other strings go through text(). */
  json<T>(value: T): T;
  /** A command line: the value after a secret-named flag (`--token VALUE`) becomes a placeholder, the rest goes through text(). */
  argv(args: readonly string[]): string[];
  /** An inline text body through text(), with its size updated; an inline base64 body through bytes(). Blob bodies are returned as they are. */
  body(body: Body): Body;
  /** Marks a Body whose text already went through text(), so body() returns it untouched (the writer's fast path). */
  markClean(body: Body): Body;
  exchange(payload: HttpExchangePayload): HttpExchangePayload;
  /** The payload of an event of this type, redacted as the writer stores it. */
  payload(type: EventType, payload: unknown): unknown;
}

export { redactionKeyFile } from './redact-key.js';
export { isPlaceholder, masksForMatching, PLACEHOLDER_PREFIX } from './redact-rules.js';

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
    `value:secret-named env variables, URL passwords and values redacted by name, wherever they appear (${MIN_KNOWN_LENGTH}+ characters)`,
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
  /**
   * A secret's mask in bytes, `length` characters (each one byte): its placeholder padded with `*`;
   * shorter than a placeholder, `[R:` + hex of the same HMAC + `]` (masksForMatching reads both as
   * one); under 8 bytes (a user pattern's match), `*`s.
   */
  function mask(secret: string, length: number): string {
    const p = placeholder(secret);
    if (length >= p.length) return p + '*'.repeat(length - p.length);
    if (length < 8) return '*'.repeat(length);
    const hex = createHmac('sha256', key).update(secret, 'utf8').digest('hex');
    return `${SHORT_MASK_PREFIX}${hex.slice(0, length - SHORT_MASK_PREFIX.length - 1)}]`;
  }
  const known = new KnownSecrets();
  function learn(value: string): boolean {
    return known.add(value);
  }
  function learnEnv(env: Record<string, string | undefined>): void {
    for (const value of envSecretValues(env, isSecretName)) known.add(value, true);
  }
  /** A value redacted by name: its placeholder, and it is known from now on wherever it appears. */
  function redactValue(secret: string): string {
    if (secret === '' || isPlaceholder(secret)) return secret;
    known.add(secret);
    return placeholder(secret);
  }
  /**
   * A placeholder the agent was served (a recorded answer quoting a secret) and put in a URL or a
   * form, percent-encoded: as the placeholder itself, which is what the recording holds there.
   */
  function decodePlaceholders(text: string): string {
    return text.replace(
      /%5BREDACTED%3Ahmac%3A([0-9a-f]{12})%5D/gi,
      (_m, hex: string) => `${PLACEHOLDER_PREFIX}${hex}]`,
    );
  }
  /** Known values in text that may hold placeholders: only the text between them is searched. */
  function knownValues(text: string): string {
    if (known.size === 0) return text;
    if (!text.includes(PLACEHOLDER_PREFIX)) return known.replace(text, placeholder);
    const parts = text.split(PLACEHOLDER_SPLIT);
    for (let i = 0; i < parts.length; i += 2) parts[i] = known.replace(parts[i] as string, placeholder);
    return parts.join('');
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
          ? `${lead}${name}=${redactValue(decodeUriLoose(value))}`
          : match,
      );
      for (const re of TOKEN_PATTERNS) out = out.replace(re[1], (m) => placeholder(m));
    }
    for (const re of userPatterns) out = out.replace(re, (m) => (m === '' ? m : placeholder(m)));
    return out;
  }

  function text(input: string): string {
    if (input.length === 0) return input;
    const generation = known.generation;
    // One scan says whether the text holds a placeholder (as it is or percent-encoded) at all.
    const marked = input.includes('REDACTED');
    // Known values first: the passes then read the text around their placeholders as they will
    // when it is redacted again (a pattern that starts after one), so redacting twice changes nothing.
    const decoded = marked && input.includes('REDACTED%3') ? decodePlaceholders(input) : input;
    const out = known.size === 0 ? decoded : marked ? knownValues(decoded) : known.replace(decoded, placeholder);
    const redacted = (marked || out !== decoded) && out.includes(PLACEHOLDER_PREFIX) ? segments(out) : textSegment(out);
    // A value the passes learned by name (`password=…`) is found elsewhere in this text too.
    return known.generation === generation ? redacted : knownValues(redacted);
  }
  /** Leaves earlier placeholders alone so redacting twice changes nothing. */
  function segments(input: string): string {
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
    // The scheme and host stay as they are: a known value that reads as one (a password
    // `postgres`) must not make the URL unreadable. The user part is text (`https://ghp_…@host`).
    const parts = URL_PARTS.exec(withoutPassword);
    if (parts === null) return text(withoutPassword);
    const [, scheme, user, host, rest] = parts as unknown as [string, string, string | undefined, string, string];
    return `${scheme}${user === undefined ? '' : `${text(user)}@`}${host}${text(rest)}`;
  }

  function bytes(input: Uint8Array): Buffer {
    const buffer = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    if (buffer.length === 0) return buffer;
    // A latin1 view: one character a byte, so a match's offset and length are the bytes' own, and
    // the ASCII token patterns read the bytes as they read text.
    const view = buffer.toString('latin1');
    let out = known.replaceBytes(view, mask);
    if (TOKEN_STARTS.test(out)) for (const re of TOKEN_PATTERNS) out = out.replace(re[1], (m) => mask(m, m.length));
    for (const re of userPatterns) out = out.replace(re, (m) => (m === '' ? m : mask(m, m.length)));
    return out === view ? buffer : Buffer.from(out, 'latin1');
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

  // Bodies this redactor made (via redactedBody) are already clean: skip a second pass over them,
  // unless a secret was learned since (the known values' generation).
  const clean = new WeakMap<Body, number>();
  function markClean(b: Body): Body {
    clean.set(b, known.generation);
    return b;
  }
  function body(input: Body): Body {
    if (input.base64 !== undefined && input.text === undefined) {
      const original = Buffer.from(input.base64, 'base64');
      const redacted = bytes(original);
      return redacted === original ? input : { ...input, base64: redacted.toString('base64') };
    }
    if (input.text === undefined || clean.get(input) === known.generation) return input;
    const redacted = text(input.text);
    return redacted === input.text ? input : { ...input, text: redacted, size: Buffer.byteLength(redacted, 'utf8') };
  }

  const parts: RedactorParts = { text, bytes, headers, url, body };
  const exchange = (p: HttpExchangePayload): HttpExchangePayload => redactExchange(parts, p);

  /** A step's name and route come from what it called (`POST /items/<a path with a secret>`): as text. */
  function stepStarted(value: StepStartedPayload): StepStartedPayload {
    if (value === null || typeof value !== 'object') return value;
    const name = typeof value.name === 'string' ? text(value.name) : value.name;
    const route = typeof value.route === 'string' ? text(value.route) : value.route;
    return name === value.name && route === value.route ? value : { ...value, name, route };
  }

  function payload(type: EventType, value: unknown): unknown {
    const generation = known.generation;
    const out = payloadOnce(type, value);
    // A value this event's own passes learned by name (an Authorization header) may also be in a
    // part redacted before it (the URL, a field earlier in the object): once more, over the result.
    return known.generation === generation ? out : payloadOnce(type, out);
  }

  function payloadOnce(type: EventType, value: unknown): unknown {
    switch (type) {
      case 'http.exchange':
        return exchange(value as HttpExchangePayload);
      case 'websocket.exchange':
        return redactWebSocketTurn(parts, value as WebSocketExchangePayload);
      case 'step.started':
        return stepStarted(value as StepStartedPayload);
      case 'fs.changed':
      case 'db.changed':
      case 'nondeterminism':
      case 'step.completed':
        // World state and values handed to the agent stay exact: replay and worldAt depend on them.
        return value;
      default:
        return json(value);
    }
  }

  if (options.env !== false) learnEnv(options.env ?? process.env);
  for (const value of options.secrets ?? []) known.add(value, true);

  return {
    keyId,
    rules,
    get generation() {
      return known.generation;
    },
    placeholder,
    isSecretName,
    learn,
    learnEnv,
    headers,
    url,
    text,
    bytes,
    json,
    argv,
    body,
    markClean,
    exchange,
    payload,
  };
}
