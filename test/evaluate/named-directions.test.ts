// `tapedeck eval` end to end: a contract field whose name says which way a change went
// (`decline_pct`, `loss_usd`, `price_cut`, `growth_pct`, `profit_usd`) or whose expected value is
// signed (`change_pct: -3.2`) fails an answer that states its size the other way (`rose 3.2%`),
// passes one that states it that way or with no direction word, and a name that is no change
// (`down_payment`, `gain_ratio`, `discount_code`) holds no direction against the answer.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { writeRecording } from '../tui/write-recording.js';
import { RecordingBuilder } from './recording-builder.js';

const exec = promisify(execFile);
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * The required_field findings on each answer, by one `tapedeck eval --json` over a contract that
 * expects each of `fields` (name -> expected, as YAML).
 */
async function messages(fields: Map<string, string>, answers: string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-directions-'));
  made.push(dir);
  const paths: string[] = [];
  for (const [n, answer] of answers.entries()) {
    const b = new RecordingBuilder(`rec-${n}`, `trace-${n}`);
    b.model({ messages: [{ role: 'user', content: 'How did the quarter go?' }], text: answer });
    paths.push(await writeRecording(b.complete(answer).build(), join(dir, `rec-${n}`)));
  }
  const contract = join(dir, 'contract.yaml');
  const specs = [...fields].map(([f, e]) => `  ${f}: { expected: ${e} }\n`).join('');
  writeFileSync(
    contract,
    `task_id: q3_change\nsuccess_criteria:\n  required_outputs: [final_answer]\n  must_include: [${[...fields.keys()].join(', ')}]\nfields:\n${specs}`,
  );
  let stdout: string;
  try {
    ({ stdout } = await exec(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'eval', ...paths, '--contract', contract, '--json'],
      { maxBuffer: 64 << 20 },
    ));
  } catch (error) {
    ({ stdout } = error as { stdout: string });
  }
  const out = JSON.parse(stdout) as {
    evaluations: Array<{ validators: Array<{ validatorName: string; diagnosticMessage: string }> }>;
  };
  return out.evaluations.map((e) => e.validators.find((v) => v.validatorName === 'required_field')!.diagnosticMessage);
}

/** The verdict on `field` in a required_field message: `pass`, or its finding (wrong or missing). */
function verdictOn(field: string, message: string): string {
  const about = (f: string) =>
    f.startsWith(`${field}:`) || f.startsWith(`${field} is `) || f.includes(`: ${field} missing`);
  const found = message.split('; ').find(about);
  return found ?? PASS;
}

const PASS = 'pass';
// [field, expected, answer, verdict]: `pass`, or the one-line reason it fails.
const TABLE: Array<[string, string, string, string]> = [
  // A field that names a fall: the size said falling or with no direction passes, rising fails.
  ['decline_pct', '3.2', 'Revenue fell 3.2% this quarter.', PASS],
  ['decline_pct', '3.2', 'Revenue saw a 3.2% decline.', PASS],
  ['decline_pct', '3.2', 'Revenue was down 3.2%.', PASS],
  ['decline_pct', '3.2', 'Revenue moved 3.2% this quarter.', PASS],
  ['decline_pct', '3.2', 'Revenue: -3.2%.', PASS],
  [
    'decline_pct',
    '3.2',
    'Revenue rose 3.2% this quarter.',
    'decline_pct: the answer says 3.2% went up, but the field names a fall',
  ],
  [
    'decline_pct',
    '3.2',
    'Revenue was up 3.2%.',
    'decline_pct: the answer says 3.2% went up, but the field names a fall',
  ],
  [
    'decline_pct',
    '3.2',
    'Revenue grew by 3.2 percent.',
    'decline_pct: the answer says 3.2 percent went up, but the field names a fall',
  ],
  [
    'decline_pct',
    '"3.2%"',
    'Revenue saw a 3.2% increase.',
    'decline_pct: the answer says 3.2% went up, but the field names a fall',
  ],
  [
    'decline_pct',
    '-3.2',
    'Revenue rose 3.2%.',
    'decline_pct: the answer says 3.2% went up, but the field names a fall',
  ],
  ['drop', '3.2', 'Signups climbed 3.2%.', 'drop: the answer says 3.2% went up, but the field names a fall'],
  ['decrease_percent', '3.2', 'Churn decreased 3.2%.', PASS],
  ['loss_usd', '1200', 'We lost $1,200 on the deal.', PASS],
  ['loss_usd', '1200', 'A $1,200 loss on the deal.', PASS],
  [
    'loss_usd',
    '1200',
    'We gained $1,200 on the deal.',
    'loss_usd: the answer says $1,200 went up, but the field names a fall',
  ],
  [
    'loss_usd',
    '1200',
    'The deal was up USD 1,200.',
    'loss_usd: the answer says USD 1,200 went up, but the field names a fall',
  ],
  ['price_cut', '20', 'The price was cut by $20.', PASS],
  ['price_cut', '20', 'That is $20 off.', PASS],
  ['price_cut', '20', 'The price rose $20.', 'price_cut: the answer says $20 went up, but the field names a fall'],
  ['discount_pct', '20', 'A 20% discount applies.', PASS],
  [
    'discount_pct',
    '20',
    'Prices increased 20%.',
    'discount_pct: the answer says 20% went up, but the field names a fall',
  ],
  // A field that names a rise: falling fails.
  ['growth_pct', '3.2', 'Revenue grew 3.2%.', PASS],
  ['growth_pct', '3.2', 'Revenue: 3.2%.', PASS],
  ['growth_pct', '3.2', 'Revenue fell 3.2%.', 'growth_pct: the answer says 3.2% went down, but the field names a rise'],
  ['increase', '3.2', 'Usage dropped 3.2%.', 'increase: the answer says 3.2% went down, but the field names a rise'],
  ['profit_usd', '1200', 'A $1,200 gain.', PASS],
  [
    'profit_usd',
    '1200',
    'A loss of $1,200.',
    'profit_usd: the answer says $1,200 went down, but the field names a rise',
  ],
  // A signed change: its sign is the direction; a plain size is not a negative number.
  ['change_pct', '-3.2', 'Revenue fell 3.2%.', PASS],
  ['change_pct', '-3.2', 'Revenue was down 3.2%.', PASS],
  ['change_pct', '-3.2', 'Revenue changed -3.2%.', PASS],
  ['change_pct', '-3.2', 'Revenue rose 3.2%.', 'change_pct: the answer says 3.2% went up, but expected -3.2, a fall'],
  ['delta', '3.2', 'Revenue fell 3.2%.', 'delta: the answer says 3.2% went down, but expected 3.2, a rise'],
  ['growth_pct', '-3.2', 'Revenue shrank 3.2%.', PASS],
  // An amount with a direction word before or after it, or as a noun, in any currency or scale, is a
  // signed change: `$20 less`, `$1.2k more`, `a $20 price drop` (before, `less`/`more` said no way).
  ['price_change', '-20', 'The price is $20 less.', PASS],
  ['price_change', '-20', 'A $20 price drop.', PASS],
  [
    'price_change',
    '-20',
    'The price is $20 more.',
    'price_change: the answer says $20 went up, but expected -20, a fall',
  ],
  ['profit_usd', '-1200', 'Profit fell $1,200.', PASS],
  [
    'profit_usd',
    '-1200',
    'Profit was $1.2k higher.',
    'profit_usd: the answer says $1.2k went up, but expected -1200, a fall',
  ],
  ['profit_cents', '-120000', 'Profit came in $1,200 less.', PASS],
  [
    'profit_cents',
    '-120000',
    'Profit saw an increase of $1,200.',
    'profit_cents: the answer says $1,200 went up, but expected -120000, a fall',
  ],
  ['lossEur', '1200', 'Profit dropped €1.2k.', PASS],
  [
    'lossEur',
    '1200',
    'Profit was EUR 1,200 more.',
    'lossEur: the answer says EUR 1,200 went up, but the field names a fall',
  ],
  [
    'revenue_change_gbp',
    '-1200',
    'Revenue fell £1,300.',
    'must_include: revenue_change_gbp missing from the final answer (looked for fields.revenue_change_gbp)',
  ],
  // A change denied is no statement of it, and says the field's change did not happen.
  [
    'change_pct',
    '-3.2',
    'Revenue did not fall 3.2%.',
    'change_pct: the answer says 3.2% did not go down, but expected -3.2, a fall',
  ],
  ['growth_pct', '3', "Revenue didn't fall 3%; it saw an increase of 3%.", PASS],
  // A gap's sign says a fall when negative; a positive one is a size.
  ['difference', '-20', 'The new plan is $20 cheaper.', PASS],
  ['price_diff', '20', 'The new plan is $20 cheaper.', PASS],
  // Names that are no change hold no direction against the answer.
  ['down_payment', '500', 'Prices rose $500; the down payment is $500.', PASS],
  ['gain_ratio', '3.2', 'The gain ratio fell 3.2 points.', PASS],
  ['discount_code', 'SAVE20', 'Use SAVE20; prices rose 20%.', PASS],
  ['cut_off_date', '2026-12-01', 'The cut-off is Dec 1, 2026, after prices rose 3.2%.', PASS],
];

describe('a field that names a direction, through tapedeck eval', () => {
  it('holds the direction the name or the sign says against the answer', async () => {
    // As few contracts as hold each field once: one `tapedeck eval` each.
    const groups: Array<{ fields: Map<string, string>; rows: typeof TABLE }> = [];
    for (const row of TABLE) {
      const [field, expected] = row;
      let g = groups.find((x) => (x.fields.get(field) ?? expected) === expected);
      if (g === undefined) groups.push((g = { fields: new Map(), rows: [] }));
      g.fields.set(field, expected);
      g.rows.push(row);
    }
    const got = new Map<(typeof TABLE)[number], string>();
    for (const g of groups) {
      const out = await messages(
        g.fields,
        g.rows.map(([, , a]) => a),
      );
      for (const [i, row] of g.rows.entries()) got.set(row, verdictOn(row[0], out[i]!));
    }
    expect(TABLE.map((row) => [row[0], row[1], row[2], got.get(row)])).toEqual(TABLE);
  }, 120_000);
});
