// Forms the reader did not know, each a false pass or a false fail before: amounts in millionths
// (`cost_micros`) and under a `value` key, a percentage against a count, digit groups that list
// numbers, ranges, ASCII fractions, scientific notation, temperatures in either scale. Generated:
// the right value in the form is "same", a value off in it never is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn, sameFact } from './index.js';

const RUNS = { seed: 20261201, numRuns: 150 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };

function verdicts(obs: unknown, answer: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(answer).map((m) => index.verdict(m).verdict);
}
const cents = fc.integer({ min: 101, max: 99_999_999 });
const usd = (c: number) => `$${(c / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`;

describe('amounts under keys that say how', () => {
  it('millionths (`cost_micros`): 129990000 is $129.99, never $129,990,000', () => {
    fc.assert(
      fc.property(cents, fc.constantFrom('cost_micros', 'priceMicros', 'amount_micros'), (c, key) => {
        const obs = { [key]: c * 10_000, currency_code: 'USD' };
        expect(verdicts(obs, usd(c))).toEqual(['same']);
        expect(verdicts(obs, usd(c * 10_000))).not.toContain('same');
        expect(verdicts(obs, usd(c + 1))).not.toContain('same');
      }),
      RUNS,
    );
  });

  it('a `value` is what its parent names: `price: { value }`, PayPal\'s `amount: { currency_code, value: "…" }`', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const v = c / 100;
        expect(verdicts({ price: { value: v } }, usd(c))).toEqual(['same']);
        expect(verdicts({ amount: { currency_code: 'USD', value: v.toFixed(2) } }, usd(c))).toEqual(['same']);
        expect(verdicts({ amount: { currency_code: 'USD', value: v.toFixed(2) } }, `€${v.toFixed(2)}`)).toEqual([
          'different',
        ]);
        expect(verdicts({ price: { value: v, unit: 'EUR' } }, usd(c))).toEqual(['different']);
        expect(verdicts({ price: { value: v } }, usd(c + 1))).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('a percentage is not a count: 15% is `rate: 15` or "15", never `qty: 15`', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), fc.constantFrom('qty', 'count', 'nights', 'rooms'), (n, key) => {
        expect(verdicts({ [key]: n }, `${n}%`)).toEqual(['different']);
        expect(verdicts({ rate: n }, `${n}%`)).toEqual(['same']);
        expect(verdicts({ rate: n / 100 }, `${n}%`)).toEqual(['same']);
        expect(verdicts(`grew ${n} points`, `${n}%`)).toEqual(['same']);
      }),
      RUNS,
    );
  });
});

describe('digit groups after plain spaces: one number, or a list', () => {
  const ids = fc.tuple(
    fc.integer({ min: 100, max: 999 }),
    fc.integer({ min: 100, max: 999 }),
    fc.integer({ min: 100, max: 999 }),
  );
  it('a list observed in an English text grounds each id, never the number they would join into', () => {
    fc.assert(
      fc.property(ids, ([a, b, c]) => {
        const listed = `Lockers ${a} ${b} ${c} are free; the deposit is $12.50.`;
        expect(verdicts(listed, `Locker ${b} is free.`)).toEqual(['same']);
        expect(verdicts(listed, `${(a * 1e6 + b * 1e3 + c).toLocaleString('en-US')}`)).not.toContain('same');
        // With nothing to say which, neither reading is sure.
        const bare = `Lockers ${a} ${b} ${c} are free.`;
        expect(verdicts(bare, `${(a * 1e6 + b * 1e3 + c).toLocaleString('en-US')}`)).toEqual(['cant-tell']);
        expect(verdicts(bare, `${b}`)).toEqual(['cant-tell']);
        // A French text writes one number.
        expect(
          verdicts(`${a} ${b} ${c} habitants, 2,5 km`, `${(a * 1e6 + b * 1e3 + c).toLocaleString('en-US')}`),
        ).toContain('same');
      }),
      RUNS,
    );
  });

  it('a list claimed is grounded by every id observed, and not by all but one', () => {
    fc.assert(
      fc.property(ids, ([a, b, c]) => {
        expect(verdicts({ ids: [a, b, c] }, `Free: ${a} ${b} ${c}`)).toEqual(['same']);
        const off = [101, 102, 103, 104].find((n) => ![a, b, c].includes(n))!;
        expect(verdicts({ ids: [a, b, c] }, `Free: ${a} ${b} ${off}`)).toEqual(['different']);
      }),
      RUNS,
    );
  });
});

describe('ranges are one claim', () => {
  it('a value observed in the range grounds it; one outside, in another currency or a change "from … to" does not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 2, max: 500 }), (lo, width) => {
        const hi = lo + width;
        const inside = lo + Math.floor(width / 2);
        for (const range of [`$${lo}-${hi}`, `$${lo} – $${hi}`, `$${lo} to $${hi}`, `between $${lo} and $${hi}`]) {
          expect(verdicts({ price: inside, currency: 'USD' }, range), range).toEqual(['same']);
          expect(verdicts({ price: hi + 1, currency: 'USD' }, range), range).toEqual(['different']);
          expect(verdicts({ price: lo - 1, currency: 'USD' }, range), range).toEqual(['different']);
          expect(verdicts({ price: inside, currency: 'EUR' }, range), range).not.toContain('same');
        }
        for (const range of [`${lo} to ${hi} nights`, `between ${lo} and ${hi} nights`]) {
          expect(verdicts({ nights: inside }, range), range).toEqual(['same']);
          expect(verdicts({ nights: hi + 1 }, range), range).toEqual(['different']);
        }
        expect(verdicts({ price: inside }, `from $${lo} to $${hi}`)).toEqual(['different', 'different']);
      }),
      RUNS,
    );
  });

  it('a phone number or two years are not a range', () => {
    expect(verdicts({ x: 600 }, 'call 555-1234')).toEqual(['different', 'different']);
    expect(verdicts({ year: 2026 }, '2026-2027')).toContain('same');
  });
});

describe('fractions, scientific notation and temperatures', () => {
  it('1 1/2 is one and a half, to the nearest half; 3/4 kg is 750 g; a score 4/5 is two numbers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), fc.constantFrom(2, 4, 8), (w, d) => {
        const top = d - 1;
        expect(verdicts({ duration_h: w + top / d }, `${w} ${top}/${d} hours`)).toEqual(['same']);
        expect(verdicts({ duration_h: w + 1 + top / d }, `${w} ${top}/${d} hours`)).toEqual(['different']);
        expect(verdicts({ hours: w + top / d }, `${w} ${top}/${d}`)).toEqual(['same']);
        expect(verdicts({ hours: w }, `${w} ${top}/${d}`)).toEqual(['different']);
        expect(verdicts({ weight_g: (1000 * top) / d }, `${top}/${d} kg`)).toEqual(['same']);
      }),
      RUNS,
    );
    expect(verdicts({ rating: 4, max: 5 }, 'rated 4/5')).toEqual(['same', 'same']);
  });

  it("1.2e6 and 1.2 × 10^6 are 1,200,000 to the mantissa's last digit, never 1.2 or 2e6", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 11, max: 98 }).filter((m) => m % 10 !== 0),
        fc.integer({ min: 2, max: 12 }),
        (m, e) => {
          const value = Number(`${m / 10}e${e}`);
          for (const form of [`${m / 10}e${e}`, `${m / 10}E+${e}`, `${m / 10} × 10^${e}`]) {
            expect(verdicts({ n: value }, form), form).toEqual(['same']);
            expect(verdicts({ n: Number(`${(m + 1) / 10}e${e}`) }, form), form).toEqual(['different']);
            expect(verdicts({ n: m / 10 }, form), form).toEqual(['different']);
          }
        },
      ),
      RUNS,
    );
  });

  it('°F and °C are one temperature: 68 °F is temp_c 20; 20 °F is not', () => {
    fc.assert(
      fc.property(fc.integer({ min: -40, max: 45 }), (c) => {
        const f = Math.round((c * 9) / 5 + 32);
        const fc_ = ((f - 32) * 5) / 9;
        for (const form of [`${f}°F`, `${f} °F`, `${f}℉`, `${f} degrees Fahrenheit`])
          expect(verdicts({ temp_c: fc_ }, form), form).toEqual(['same']);
        expect(verdicts({ temperature_f: f }, `${fc_.toFixed(1)} °C`)).toEqual(['same']);
        if (f !== c) expect(verdicts({ temp_c: c }, `${c} °F`)).toEqual(['different']);
        expect(verdicts({ temp_c: c + 3 }, `${c}°C`)).toEqual(['different']);
      }),
      RUNS,
    );
  });
});

describe('plain numbers in the decimal-comma convention, with no currency beside them', () => {
  // Before, the reader took `1.299` of `1.299,99` (and `1 299` of `1 299,99`, `12` of `12,5`) and
  // dropped the rest: a total of 1299 grounded "1.299,99" (a false pass), 1299.99 did not (a false fail).
  const PLAIN: Array<[string, (v: number) => string]> = [
    ['de-DE', (v) => v.toLocaleString('de-DE', { minimumFractionDigits: 2, maximumFractionDigits: 2 })],
    ['es-ES', (v) => v.toLocaleString('es-ES', { minimumFractionDigits: 2, maximumFractionDigits: 2 })],
    ['it-IT', (v) => v.toLocaleString('it-IT', { minimumFractionDigits: 2, maximumFractionDigits: 2 })],
    ['nl-NL', (v) => v.toLocaleString('nl-NL', { minimumFractionDigits: 2, maximumFractionDigits: 2 })],
    ['pt-BR', (v) => v.toLocaleString('pt-BR', { minimumFractionDigits: 2, maximumFractionDigits: 2 })],
    ['fr-FR', (v) => v.toLocaleString('fr-FR', { minimumFractionDigits: 2, maximumFractionDigits: 2 })],
    ['space', (v) => v.toLocaleString('fr-FR', { minimumFractionDigits: 2 }).replace(/\u202f/g, ' ')],
    ['one decimal', (v) => v.toLocaleString('de-DE', { minimumFractionDigits: 1, maximumFractionDigits: 1 })],
  ];

  it('is the number written, never the whole part before the comma, never a cent off', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_001, max: 9_999_999_999 }), fc.constantFrom(...PLAIN), (c, [name, form]) => {
        const v = name === 'one decimal' ? Math.round(c / 10) / 10 : c / 100;
        const text = `Der Wert beträgt ${form(v)}.`;
        if (Number.isInteger(v)) return;
        expect(verdicts({ total: v }, text), text).toEqual(['same']);
        // (`10,10` against 10 is grounded as two numbers listed: both are 10.)
        if (Number(form(v).split(',')[1]) !== Math.trunc(v))
          expect(verdicts({ total: Math.trunc(v) }, text), `${text} vs ${Math.trunc(v)}`).toEqual(['different']);
        expect(verdicts({ total: Math.round(v * 100 + 1) / 100 }, text), text).toEqual(['different']);
        // Observed, grouped it is one number; a lone `10,01` only maybe (a decimal, or 10 and 1 listed?).
        const grouped = /\d[.\s\u202f]\d{3},/.test(form(v));
        expect(verdicts({ note: form(v) }, `The total is ${v}.`), `${form(v)} observed`).toEqual([
          grouped ? 'same' : 'cant-tell',
        ]);
      }),
      RUNS,
    );
  });

  it('dot groups alone are thousands (`12.345.678`), and a quantity or percentage reads them too', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_000_000, max: 999_999_999 }), fc.integer({ min: 1, max: 9 }), (n, d) => {
        const grouped = n.toLocaleString('de-DE');
        expect(verdicts({ visitors: n }, `${grouped} Besucher`), grouped).toEqual(['same']);
        expect(verdicts({ visitors: Math.trunc(n / 1000) }, `${grouped} Besucher`), grouped).toEqual(['different']);
        const k = Math.trunc(n / 1000);
        const km = `${k.toLocaleString('de-DE')},${d} km`;
        expect(verdicts({ distance_m: k * 1000 + d * 100 }, km), km).toEqual(['same']);
        expect(verdicts({ distance_m: k * 1000 }, km), km).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('a lone `12,5` is the decimal, or two numbers listed; never the 12 before the comma alone', () => {
    expect(verdicts({ score: 12.5 }, 'Der Wert ist 12,5.')).toEqual(['same']);
    expect(verdicts({ score: 12 }, 'Der Wert ist 12,5.')).toEqual(['different']);
    expect(verdicts({ score: 12, rank: 5 }, 'Pages 12,5 and 14.')).toEqual(['same', 'different']);
    // A decimal comma elsewhere says which: an observed `12,5` is then the decimal, surely.
    expect(verdicts({ note: 'Wert 12,5 bei 3,5 kg' }, 'The value is 12.5.')).toEqual(['same']);
    // A list is still a list: `1,2,3` reads as before.
    expect(verdicts({ a: 12 }, 'Items 12,13,14')).toEqual(['same']);
  });
});

describe('Unix time under a key that names an instant', () => {
  // Stripe's `created: 1796047200`, JWT's `exp`, a JavaScript `updatedAt` in milliseconds: before,
  // each was a bare number, and an answer or a contract stating its date or time was a false fail.
  const KEYS = ['created', 'created_at', 'updatedAt', 'exp', 'timestamp', 'expires_at', 'time_ms'];
  const instant = fc.record({
    day: fc.integer({ min: Date.UTC(2001, 0, 1) / 864e5, max: Date.UTC(2199, 0, 1) / 864e5 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
  });
  const MONTH_NAMES = 'January February March April May June July August September October November December'.split(
    ' ',
  );

  it('states its date and its UTC time; two days off or a second off does not, nor a number under another key', () => {
    fc.assert(
      fc.property(instant, fc.constantFrom(...KEYS), (t, key) => {
        const ms = t.day * 864e5 + t.hour * 36e5 + t.minute * 6e4;
        const value = key.endsWith('_ms') || key === 'updatedAt' ? ms : ms / 1000;
        const d = new Date(ms);
        const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
        const iso = d.toISOString().slice(0, 19);
        for (const form of [`${MONTH_NAMES[m]} ${day}, ${y}`, `${day} ${MONTH_NAMES[m]} ${y}`, `${iso.slice(0, 10)}`])
          expect(verdicts({ [key]: value }, `It was on ${form}.`), `${key}: ${value} vs ${form}`).toEqual(['same']);
        expect(verdicts({ [key]: value }, `At ${iso}Z.`), `${key}: ${value} vs ${iso}Z`).toEqual(['same']);
        const next = new Date(ms + 2 * 864e5); // (a day off may be the date in a zone far east or west)
        const nextForm = `${MONTH_NAMES[next.getUTCMonth()]} ${next.getUTCDate()}, ${next.getUTCFullYear()}`;
        expect(verdicts({ [key]: value }, `It was on ${nextForm}.`), nextForm).toEqual(['different']);
        expect(verdicts({ count: value }, `It was on ${iso.slice(0, 10)}.`)).toEqual(['different']);
        expect(sameFact(`${iso}Z`, value, { actual: key }), `${key}: ${value}`).toBe(true);
        const second = new Date(ms + 1000).toISOString().slice(0, 19);
        expect(sameFact(`${second}Z`, value, { actual: key })).toBe(false);
      }),
      RUNS,
    );
  });
});

describe('data sizes: KB, MB, GB, TB in SI or as binary prefixes, never mixed', () => {
  // `ram_gb: 16` is 16 GiB to most writers (RAM, Windows, memory limits): "16,384 MB" and "16 GiB"
  // were UNSUPPORTED_CLAIM, a false fail. Each side is read in one convention at a time, so 1,049 MB
  // is 1000 MiB but never 1000 MB.
  const PREFIX = ['KB', 'MB', 'GB'] as const;

  it('n GB is n × 1024 MB and n GiB; another number in either is not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 4096 }), fc.constantFrom(0, 1, 2), (n, i) => {
        const [big, small] = [PREFIX[i + 1] ?? 'TB', PREFIX[i]];
        const key = `size_${big.toLowerCase()}`;
        const binary = (n * 1024).toLocaleString('en-US');
        expect(verdicts({ [key]: n }, `${n} ${big}`)).toEqual(['same']);
        expect(verdicts({ [key]: n }, `${binary} ${small}`), `${key}: ${n} vs ${binary} ${small}`).toEqual(['same']);
        expect(verdicts({ [key]: n }, `${n} ${big.replace('B', 'iB')}`)).toEqual(['same']);
        expect(verdicts({ [key]: n }, `${(n * 1000).toLocaleString('en-US')} ${small}`)).toEqual(['same']);
        expect(verdicts({ [key]: n + 1 }, `${binary} ${small}`)).toEqual(['different']);
        expect(verdicts({ [key]: n }, `${(n * 1024 + 1).toLocaleString('en-US')} ${small}`)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('an SI figure of a binary size is not the binary figure: 1,049 MB is 1000 MiB, never 1000 MB', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 100_000 }), (n) => {
        const si = Math.round(n * 1.048576);
        fc.pre(si !== n);
        const claim = `${si.toLocaleString('en-US')} MB`;
        expect(verdicts({ size_mib: n }, claim), `size_mib: ${n} vs ${claim}`).toEqual(['same']);
        expect(verdicts({ size_mb: n }, claim), `size_mb: ${n} vs ${claim}`).toEqual(['different']);
        expect(verdicts({ size_bytes: n * 1e9 }, `${n} GiB`)).toEqual(['different']);
      }),
      RUNS,
    );
  });
});

describe('a length of time written in parts is one length', () => {
  // `2h 30m` against `duration_minutes: 150` was two unsupported claims (2 h, and 30 metres).
  it('`2 hours 30 minutes`, `2h 30m`, `2h30m` are 150 minutes; a minute off is not; parts out of order are parts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 23 }), fc.integer({ min: 1, max: 59 }), (h, m) => {
        const minutes = h * 60 + m;
        for (const form of [
          `${h} hours ${m} minutes`,
          `${h}h ${m}m`,
          `${h}h${m}m`,
          `${h} hr ${m} min`,
          `${h} hours and ${m} minutes`,
          `${h} h, ${m} min`,
        ]) {
          const text = `The flight takes ${form}.`;
          expect(verdicts({ duration_minutes: minutes }, text), text).toEqual(['same']);
          expect(verdicts({ duration_s: minutes * 60 }, text), text).toEqual(['same']);
          expect(verdicts({ duration_minutes: minutes + 1 }, text), text).toEqual(['different']);
        }
        expect(verdicts({ a_min: m, b_h: h }, `${m} minutes, ${h} hours`)).toEqual(['same', 'same']);
      }),
      RUNS,
    );
  });
});
