// What a secret looks like to the redactor (src/recording/redact.ts): its placeholder, the header,
// field and flag names that hold secrets (and the `… key` names that do not), the token patterns
// and the pairs (`"name": "value"`, `name=value`, {"key": NAME, "value": …}) it reads in free text.

export const PLACEHOLDER_PREFIX = '[REDACTED:hmac:';
const PLACEHOLDER = /^\[REDACTED:hmac:[0-9a-f]{12}\]$/;
export const PLACEHOLDER_SPLIT = /(\[REDACTED:hmac:[0-9a-f]{12}\])/;

export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value);
}

/** A secret's mask in bytes shorter than a placeholder (redact.ts bytes()): `[R:` + hex of its HMAC + `]`. */
export const SHORT_MASK_PREFIX = '[R:';
/** A mask in bytes (a placeholder padded with `*`, or a short mask) and a placeholder: their first 4 hex. */
const MASKS = /\[REDACTED:hmac:([0-9a-f]{4})[0-9a-f]{8}\]\**|\[R:([0-9a-f]{4})[0-9a-f]*\]/g;

/**
 * Text read from masked bytes, each mask and placeholder as `[R:<its first 4 hex>]`: what a replay
 * compares. A replayed agent sends the placeholder it was served (a token from a recorded header)
 * where the recording's bytes hold that secret's mask, as long as the secret.
 */
export function masksForMatching(text: string): string {
  return text.includes('[R')
    ? text.replace(MASKS, (_m, long?: string, short?: string) => `[R:${long ?? short}]`)
    : text;
}

export const DEFAULT_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'api-key'];
export const SECRET_WORDS = new Set([
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
export const NOT_SECRET_KEYS = new Set([
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
export const SECRET_SUFFIX =
  /(apikey|accesskey|secretkey|privatekey|accesstoken|refreshtoken|idtoken|authtoken|sessiontoken|secret|password|passwd)$/;
/** A command-line flag that takes its value as the next argument: `--name` or `-name`, no `=`. */
export const SECRET_FLAG = /^--?[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
export const COOKIE_ATTRIBUTES = new Set([
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

export const TOKEN_PATTERNS: Array<[string, RegExp]> = [
  ['bearer', /(?<=\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9\-._~+/]{8,}=*/g],
  ['sk-key', /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/g],
  ['github-token', /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g],
  ['aws-access-key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['slack-token', /\bxox[abprs]-[A-Za-z0-9-]{10,}/g],
  ['google-api-key', /\bAIza[0-9A-Za-z_-]{35}/g],
  ['jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g],
];
/** Words of secret names (fields, parameters): anywhere in a name. */
export const NAME_WORDS = ['key', 'token', 'secret', 'passw', 'pwd', 'passphrase', 'credential', 'authoriz', 'cookie'];
/** Words that start a token pattern (each pattern begins at \b): they count only at a word's start. */
export const PATTERN_WORDS = [
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
/**
 * Where a token pattern can start, as exactly as the patterns read it (in bytes no lower-cased copy
 * is made, and a case-blind word turns up by chance in a megabyte of random bytes).
 */
export const TOKEN_STARTS =
  /\b(?:[Bb][Ee][Aa][Rr][Ee][Rr]\s|sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox[abprs]-|AIza|eyJ)/;
export const TOKEN_CAMEL_S = /[Tt][Oo][Kk][Ee][Nn]S/;
// "name": "value" in JSON text, and \"name\": \"value\" in JSON that is itself inside a JSON string.
export const JSON_FIELD = /"((?:[^"\\\n]|\\.){1,128})"(\s*:\s*)"((?:[^"\\\n]|\\.)*)"/g;
export const ESCAPED_JSON_FIELD = /\\"([A-Za-z0-9_.$-]{1,128})\\"(\s*:\s*)\\"([^"\\]*)\\"/g;
// name=value in query strings, form bodies, env files and command lines.
export const PAIR = /(^|[?&;\s,])([A-Za-z0-9_.\-[\]]{1,128})=([^&\s#"'<>;,]*)/g;
/**
 * A named pair in JSON text: {"key": NAME, "value": …} or {"name": NAME, "value": …} (any case:
 * OpenTelemetry attributes, AWS tags, Kubernetes env, HAR headers). NAME is a name, not a secret;
 * the value is the secret when NAME names one.
 */
export const NAMED_PAIR = /"(key|name)"\s*:\s*"((?:[^"\\\n]|\\.){1,256})"\s*,\s*"value"\s*:\s*/gi;
/** What follows a pair's name: its value field. */
export const VALUE_NEXT = /^\s*,\s*"value"\s*:/i;
/** A pair's name that reads as one (`service.name`, `gen_ai.request.model`, `Environment`), not as a random secret. */
export function nameLike(name: string): boolean {
  return (
    name.length <= 128 &&
    /^[A-Za-z][A-Za-z0-9]*(?:[._:/ -][A-Za-z0-9]+)*$/.test(name) &&
    (/[._:/ -]/.test(name) || /^[A-Za-z]+$/.test(name))
  );
}
