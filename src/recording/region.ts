// The agent's region: its time zone and its default locale, recorded with every run
// (manifest.runtime.timeZone, .locale) and given back to the replayed agent (TZ, LC_MESSAGES by
// src/replay/setup.ts), so that what it formats from recorded values (a prompt's "today is", an
// hour, a price's `toLocaleString()`) is what it formatted when recorded, wherever the replay runs
// (a server in UTC and en-US recorded, a laptop in Berlin replaying).

/** An IANA zone name as Intl gives it: `UTC`, `Europe/Paris`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`. */
export const TIME_ZONE = /^[A-Za-z][A-Za-z0-9_+-]{0,40}(?:\/[A-Za-z0-9_+-]{1,40}){0,3}$/;
/** A BCP 47 tag as Intl gives it: `en-US`, `de-CH`, `zh-Hant-TW`, `und`, `en-US-u-hc-h23`. */
export const LOCALE = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8}){0,15}$/;
/** Where ICU takes a process's default locale from, first set first (an empty value counts). */
export const LOCALE_VARS = ['LC_ALL', 'LC_MESSAGES', 'LANG'] as const;

/**
 * The zones this Node's ICU lists under their own (canonical) names: each is known, and is its own
 * canonical name. Listing them costs ~2 ms; the first DateTimeFormat with a zone, 10-45 ms (ICU
 * loading its calendar and zone data), on every replay's way to starting its agent.
 */
let listedZones: Set<string> | undefined;
function listed(zone: string): boolean {
  if (listedZones === undefined) {
    try {
      listedZones = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
    } catch {
      // A Node without the list (or without Intl): every zone is asked of ICU itself.
      listedZones = new Set();
    }
  }
  return listedZones.has(zone);
}

/** Whether this Node's ICU knows `zone`. */
export function knownTimeZone(zone: string): boolean {
  if (!TIME_ZONE.test(zone)) return false;
  // An alias (US/Eastern, Etc/UTC) is not listed: ICU itself is asked.
  if (listed(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `tag` is a well-formed locale: one a process can be given (ICU takes any as its default,
 * formatting with its nearest data, as the recorded process did).
 */
export function knownLocale(tag: string): boolean {
  if (!LOCALE.test(tag)) return false;
  try {
    // ICU's private-use variant (`-x-lvariant-euro`, from a POSIX modifier) is not Intl's to check.
    return Intl.getCanonicalLocales(tag.replace(/-x-lvariant-[a-z0-9]{1,8}$/i, '')).length === 1;
  } catch {
    return false;
  }
}

let own: { tz: string | undefined; zone: string | undefined } | undefined;
let ownLocaleTag: { locale: string | undefined } | undefined;

/**
 * The time zone a process with `TZ` set to `tz` runs in (this process's own when `tz` is this
 * process's TZ): an IANA name, or undefined when it cannot be told (a POSIX rule such as
 * `EST5EDT,M3.2.0,M11.1.0`, a file path, or no TZ when this process has one).
 */
export function timeZoneOf(tz: string | undefined = process.env.TZ): string | undefined {
  const ours = process.env.TZ;
  if ((tz ?? '') === (ours ?? '')) {
    // Asked once a run by a server recording many: the answer is kept while TZ stays.
    if (own !== undefined && own.tz === ours) return own.zone;
    const zone = zoneName(new Intl.DateTimeFormat().resolvedOptions().timeZone);
    own = { tz: ours, zone };
    return zone;
  }
  if (tz === undefined || tz === '') return undefined;
  const name = tz.startsWith(':') ? tz.slice(1) : tz;
  if (!knownTimeZone(name)) return undefined;
  return listed(name)
    ? name
    : zoneName(new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone);
}

/** A POSIX rule leaves Intl without a name (undefined at run time, whatever the types say). */
function zoneName(zone: string | undefined): string | undefined {
  return typeof zone === 'string' && TIME_ZONE.test(zone) ? zone : undefined;
}

/**
 * The default locale (BCP 47) ICU gives a Node process started with `env`: what it makes of the
 * first of LC_ALL, LC_MESSAGES and LANG that is set (`de_DE.UTF-8` is `de-DE`, `C` and none are
 * `en-US`, empty is `und`). A running process keeps the one it started with (ownLocale).
 */
export function localeOf(env: NodeJS.ProcessEnv): string | undefined {
  const id = LOCALE_VARS.map((name) => env[name]).find((value) => value !== undefined);
  if (id === '') return 'und';
  // A POSIX name: language_COUNTRY.codeset@modifier. The codeset goes; ICU makes the modifier a
  // variant (`sr_RS@latin` is sr-RS-latin, `de_DE@euro` de-DE-x-lvariant-euro, @nynorsk is NY).
  const [, name = '', modifier] = /^([^.@]*)(?:\.[^@]*)?(?:@(.*))?$/.exec(id ?? 'C') ?? [];
  if (name === 'C' || name === 'POSIX' || name === '') return 'en-US';
  let tag = name.replaceAll('_', '-');
  let privateUse = '';
  if (modifier !== undefined && modifier !== '') {
    const variant = modifier === 'nynorsk' ? 'ny' : modifier.toLowerCase();
    if (/^(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3})$/.test(variant)) tag += `-${variant}`;
    else privateUse = `-x-lvariant-${variant}`;
  }
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    const locale = canonical === undefined ? undefined : `${canonical}${privateUse}`;
    return locale !== undefined && LOCALE.test(locale) ? locale : undefined;
  } catch {
    return undefined;
  }
}

/** This process's default locale: fixed when it started, whatever its env says since. */
export function ownLocale(): string | undefined {
  ownLocaleTag ??= { locale: new Intl.DateTimeFormat().resolvedOptions().locale };
  return ownLocaleTag.locale !== undefined && LOCALE.test(ownLocaleTag.locale) ? ownLocaleTag.locale : undefined;
}

/**
 * The region of a Node process started with `env` (this process's own without): `{ timeZone,
 * locale }`, each when it can be told.
 */
export function regionOf(env?: NodeJS.ProcessEnv): { timeZone?: string; locale?: string } {
  const timeZone = timeZoneOf(env === undefined ? process.env.TZ : env.TZ);
  const locale = env === undefined ? ownLocale() : localeOf(env);
  return { ...(timeZone === undefined ? {} : { timeZone }), ...(locale === undefined ? {} : { locale }) };
}
