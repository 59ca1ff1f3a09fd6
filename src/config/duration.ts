// Durations a user gives (`--timeout 90s`, `timeout: '5m'` in the project file): one parser.
import * as z from 'zod';
import { TapedeckError } from '../recording/errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `5m`, `1.5h`, `250ms`, a bare number of seconds, or `0` / `none` / `never` for no limit. */
export const DurationSchema = z.union([z.number(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return Math.round(value * 1000);
  } else {
    const text = value.trim().toLowerCase();
    if (text === 'none' || text === 'never') return 0;
    const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text);
    if (m) {
      const ms = Math.round(Number(m[1]) * (UNITS[m[2] ?? 's'] as number));
      if (ms <= 2 ** 31 - 1) return ms;
    }
  }
  ctx.addIssue({
    code: 'custom',
    message: `${JSON.stringify(value)} is not a duration: give 90s, 5m, 1h, 500ms, or 0 / none for no limit (at most 24 days)`,
  });
  return z.NEVER;
});

/** A duration option from the command line or a job, as milliseconds; a one-line error otherwise. */
export function parseDuration(flag: string, value: string | number): number {
  const parsed = DurationSchema.safeParse(value);
  if (!parsed.success) throw new TapedeckError('BAD_OPTION', `${flag}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** A duration as the project file takes it (a string or a number of seconds), checked, not yet converted. */
export const DurationInputSchema = z.union([z.number(), z.string()]).superRefine((value, ctx) => {
  const parsed = DurationSchema.safeParse(value);
  if (!parsed.success) ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'not a duration' });
});
