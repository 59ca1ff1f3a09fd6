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
 * Settled literals at most this many additions behind the set: past it they are compiled again
 * (see Literals).
 */
const RECENT_MAX = 8;

/**
 * A set of literal strings found in text as one alternation regex of them all, longest first,
 * would find them (`text.replace(/longest|…|shortest/g, …)`: the leftmost match, the longest
 * literal at it, on from its end), without compiling that regex again at every change. A server's
 * shared redactor learns a value every session or so, and compiling the alternation of ~70 values
 * took ~230 us, against ~1 us to scan a model call's 1 KiB body with it (microbenchmark): so the
 * literals are held in two regexes, the settled ones (compiled again once RECENT_MAX more were
 * added) and the recent ones (few: compiled again at each addition, ~10-20 us), and a scan takes
 * the leftmost, then longest, match of the two. A deleted literal stays in the settled regex until
 * its next compile; matched, it is no answer, and the scan is made again over all of them compiled.
 */
export class Literals {
  private readonly members = new Set<string>();
  /** The literals `settled` was compiled from (some may have been deleted since). */
  private settledFrom = new Set<string>();
  private settled: RegExp | undefined;
  /** Members added since `settled` was compiled. */
  private recent: string[] = [];
  private recentRegex: RegExp | undefined;

  get size(): number {
    return this.members.size;
  }

  add(literal: string): void {
    if (this.members.has(literal)) return;
    this.members.add(literal);
    if (this.settledFrom.has(literal)) return;
    this.recent.push(literal);
    this.recentRegex = undefined;
    if (this.recent.length > RECENT_MAX) this.settled = undefined;
  }

  delete(literal: string): void {
    if (!this.members.delete(literal)) return;
    const i = this.recent.indexOf(literal);
    if (i >= 0) {
      this.recent.splice(i, 1);
      this.recentRegex = undefined;
    }
  }

  /** `text` with each match replaced by `replacement(literal)`. */
  replace(text: string, replacement: (literal: string) => string): string {
    if (this.members.size === 0) return text;
    const out = this.scan(text, replacement);
    if (out !== undefined) return out;
    // A deleted literal matched: compile the set as it is and scan again.
    this.settled = undefined;
    return this.scan(text, replacement) as string;
  }

  private regexes(): RegExp[] {
    if (this.settled === undefined) {
      this.settledFrom = new Set(this.members);
      this.settled = alternation(this.settledFrom);
      this.recent = [];
      this.recentRegex = undefined;
    }
    if (this.recent.length === 0) return [this.settled];
    this.recentRegex ??= alternation(this.recent);
    return [this.settled, this.recentRegex];
  }

  /** The scan, or undefined when the match it would take is a deleted literal's. */
  private scan(text: string, replacement: (literal: string) => string): string | undefined {
    const regexes = this.regexes();
    const next = regexes.map((re) => {
      re.lastIndex = 0;
      return re.exec(text);
    });
    let out = '';
    let last = 0;
    for (;;) {
      let m: RegExpExecArray | null = null;
      for (const candidate of next) {
        if (
          candidate !== null &&
          (m === null ||
            candidate.index < m.index ||
            (candidate.index === m.index && candidate[0].length > m[0].length))
        )
          m = candidate;
      }
      if (m === null) break;
      const literal = m[0];
      if (!this.members.has(literal)) return undefined;
      out += text.slice(last, m.index) + replacement(literal);
      last = m.index + literal.length;
      for (let i = 0; i < next.length; i++) {
        const candidate = next[i];
        if (candidate === null || candidate === undefined || candidate.index >= last) continue;
        const re = regexes[i] as RegExp;
        re.lastIndex = last;
        next[i] = re.exec(text);
      }
    }
    return last === 0 ? text : out + text.slice(last);
  }
}

/** One regex of `literals`, longest first: the longest literal that starts at a place wins there. */
function alternation(literals: Iterable<string>): RegExp {
  const sorted = [...literals].sort((a, b) => b.length - a.length);
  // None: a regex that matches nowhere (an empty one would match everywhere).
  if (sorted.length === 0) return /(?!)/g;
  return new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
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
  /** The forms, as found in text. */
  private readonly texts = new Literals();
  /**
   * The forms as their UTF-8 bytes read as latin1 (one character a byte) → the value, and those
   * literals: made at the first bytes() pass, then kept with the forms.
   */
  private bytesForms: Map<string, string> | undefined;
  private bytes: Literals | undefined;
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
      if (form.length >= MIN_KNOWN_LENGTH && !this.forms.has(form)) this.setForm(form, value);
    this.generation++;
    return true;
  }

  private setForm(form: string, value: string): void {
    this.forms.set(form, value);
    this.texts.add(form);
    if (this.bytesForms === undefined || this.bytes === undefined) return;
    const bytes = latin1Of(form);
    this.bytesForms.set(bytes, value);
    this.bytes.add(bytes);
  }

  private forget(value: string): void {
    if (this.permanent.has(value)) return;
    for (const form of formsOf(value)) {
      if (this.forms.get(form) !== value) continue;
      this.forms.delete(form);
      this.texts.delete(form);
      if (this.bytesForms === undefined || this.bytes === undefined) continue;
      const bytes = latin1Of(form);
      this.bytesForms.delete(bytes);
      this.bytes.delete(bytes);
    }
  }

  /**
   * `text` with every known value (any form) replaced by `placeholder(value)`, longest first.
   * `text` holds no placeholder (the redactor passes the text between them). Alternation regexes
   * (Literals): irregexp's lookahead over the alternatives' characters skips through text several
   * times faster than one includes() a value (measured: 4 values, 1 KiB).
   */
  replace(text: string, placeholder: (value: string) => string): string {
    if (this.forms.size === 0 || text.length < MIN_KNOWN_LENGTH) return text;
    return this.texts.replace(text, (form) => placeholder(this.forms.get(form) as string));
  }

  /**
   * `view` (bytes read as latin1: one character a byte) with the bytes of every known value (any
   * form, as UTF-8) replaced by `mask(value, byteLength)`, which must be that many characters: the
   * bytes keep their length. Longest first, as replace().
   */
  replaceBytes(view: string, mask: (value: string, length: number) => string): string {
    if (this.forms.size === 0 || view.length < MIN_KNOWN_LENGTH) return view;
    if (this.bytesForms === undefined || this.bytes === undefined) {
      this.bytesForms = new Map();
      this.bytes = new Literals();
      for (const [form, value] of this.forms) {
        const bytes = latin1Of(form);
        this.bytesForms.set(bytes, value);
        this.bytes.add(bytes);
      }
    }
    const forms = this.bytesForms;
    return this.bytes.replace(view, (form) => mask(forms.get(form) as string, form.length));
  }
}

/** A text's UTF-8 bytes read as latin1: one character a byte. */
function latin1Of(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}
