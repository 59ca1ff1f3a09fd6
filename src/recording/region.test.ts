// localeOf and timeZoneOf tell what a Node process started with an env formats in, without
// starting one: checked against real Node processes for the forms those variables take.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { knownLocale, knownTimeZone, localeOf, timeZoneOf } from './region.js';

/** What a real Node started with these variables (and no other locale variable) resolves. */
function real(vars: Record<string, string>): { locale: string; timeZone: string } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', ...vars };
  const out = execFileSync(process.execPath, ['-p', 'JSON.stringify(Intl.DateTimeFormat().resolvedOptions())'], {
    env,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { locale: string; timeZone: string };
}

describe('the region of a process started with an env', () => {
  it('is the locale Node itself resolves, for every form the locale variables take', () => {
    const cases: Record<string, string>[] = [
      {},
      { LANG: '' },
      { LANG: 'C' },
      { LANG: 'C.UTF-8' },
      { LANG: 'POSIX' },
      { LANG: 'en_US.UTF-8' },
      { LANG: 'de_DE.UTF-8@euro' },
      { LANG: 'pt_BR' },
      { LC_MESSAGES: 'fr_CA.UTF-8', LANG: 'en_US.UTF-8' },
      { LC_ALL: 'ja_JP.UTF-8', LC_MESSAGES: 'fr_FR', LANG: 'de_DE' },
      { LC_ALL: 'C', LANG: 'de_DE.UTF-8' },
      { LC_MESSAGES: 'zh-Hant-TW' },
      { LANG: 'sr_RS@latin' },
      { LANG: 'ca_ES.UTF-8@valencia' },
      { LANG: 'nn_NO@nynorsk' },
      { LANG: 'de@euro' },
      // No data for it: ICU keeps the name and formats with its root data.
      { LANG: 'xx_YY' },
    ];
    for (const vars of cases) expect(localeOf(vars), JSON.stringify(vars)).toBe(real(vars).locale);
  });

  it('is the time zone Node itself resolves, an IANA name or none', () => {
    for (const tz of ['UTC', 'Pacific/Chatham', ':Europe/Paris', 'Asia/Kolkata', 'EST5EDT'])
      expect(timeZoneOf(tz), tz).toBe(real({ TZ: tz }).timeZone);
    // A POSIX rule names no zone: nothing to give a replay.
    expect(timeZoneOf('XYZ3')).toBeUndefined();
    expect(timeZoneOf('/etc/nowhere')).toBeUndefined();
  });

  it("names every zone, listed or alias, as ICU's own DateTimeFormat resolves it", () => {
    const icu = (zone: string) => {
      try {
        return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
      } catch {
        return undefined;
      }
    };
    const zones = [...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC', 'GMT', 'US/Eastern', 'Asia/Kolkata'];
    for (const zone of [...zones, 'Etc/GMT+5', 'Nowhere/Atlantis']) {
      expect(knownTimeZone(zone), zone).toBe(icu(zone) !== undefined);
      expect(timeZoneOf(zone), zone).toBe(icu(zone));
    }
  });

  it('knows the zones this Node has and well-formed locales, and nothing else', () => {
    expect(knownTimeZone('America/Sao_Paulo')).toBe(true);
    expect(knownTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(knownTimeZone('../etc/passwd')).toBe(false);
    expect(knownLocale('de-CH')).toBe(true);
    expect(knownLocale('und')).toBe(true);
    expect(knownLocale('qq-QQ')).toBe(true);
    expect(knownLocale('de_DE.UTF-8')).toBe(false);
    expect(knownLocale('en-US-u')).toBe(false);
  });
});
