// `tapedeck eval` end to end on runs of domains the suite had not tried — an expense agent in EUR
// with VAT, a logistics agent with kg/lb and ETAs across zones, a support agent quoting order ids
// and refunds, a data agent reporting changes and counts — each answer right in a form a careful
// engineer writes (pass) or wrong by a near miss (fail, with its code). Every false verdict found
// here was fixed with a table-driven test of its class (docs/scoring.md).
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

interface Tool {
  name: string;
  url: string;
  method?: string;
  result: unknown;
  body?: Record<string, unknown>;
}

/** One recording per answer of a run that calls `tools`, all evaluated by one `tapedeck eval --json`. */
async function evaluate(user: string, tools: Tool[], contract: string, answers: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-domains-'));
  made.push(dir);
  const paths: string[] = [];
  for (const [n, answer] of answers.entries()) {
    const b = new RecordingBuilder(`rec-${n}`, `trace-${n}`);
    const messages: unknown[] = [{ role: 'user', content: user }];
    const calls = tools.map((t, i) => ({ id: `c${i}`, name: t.name, arguments: t.body ?? {} }));
    const think = b.model({ messages: [...messages], toolCalls: calls });
    tools.forEach((t, i) => {
      b.tool(think, {
        name: t.name,
        args: t.body ?? {},
        result: t.result,
        ...(t.method === 'POST' && { mutating: true }),
        http: { method: t.method ?? 'GET', url: `http://127.0.0.1:1${t.url}`, ...(t.body && { body: t.body }) },
      });
      messages.push({ role: 'tool', tool_call_id: `c${i}`, content: JSON.stringify(t.result) });
    });
    b.model({ messages: [...messages], text: answer });
    paths.push(await writeRecording(b.complete(answer).build(), join(dir, `rec-${n}`)));
  }
  const file = join(dir, 'contract.yaml');
  writeFileSync(file, contract);
  let stdout: string;
  try {
    ({ stdout } = await exec(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'eval', ...paths, '--contract', file, '--json'],
      {
        maxBuffer: 64 << 20,
      },
    ));
  } catch (error) {
    ({ stdout } = error as { stdout: string });
  }
  const out = JSON.parse(stdout) as {
    evaluations: Array<{
      task: { hardSuccess: boolean };
      validators: Array<{ failureReasonCodes: string[] }>;
      expectations?: Array<{ passed: boolean; codes: string[] }>;
    }>;
  };
  return out.evaluations.map((e) => {
    const codes = new Set([
      ...e.validators.flatMap((v) => v.failureReasonCodes),
      ...(e.expectations ?? []).filter((x) => !x.passed).flatMap((x) => x.codes),
    ]);
    return { pass: e.task.hardSuccess, codes: [...codes].filter((c) => HARD.includes(c)).sort() };
  });
}

const HARD = ['UNSUPPORTED_CLAIM', 'CONTRADICTED_BY_EVIDENCE', 'WRONG_EXECUTION_PARAMETERS'];
const CLAIMS =
  'success_criteria:\n  required_outputs: [final_answer]\n  must_not_include: [unsupported_claim, contradicted_by_evidence]\n';

/** Runs the table: each answer's verdict (pass, or the hard codes it fails with). */
async function expectVerdicts(user: string, tools: Tool[], contract: string, table: Array<[string, string[]]>) {
  const got = await evaluate(
    user,
    tools,
    contract,
    table.map(([a]) => a),
  );
  expect(table.map(([a], i) => [a, got[i]!.pass ? [] : got[i]!.codes])).toEqual(table);
}

describe('unseen domains through tapedeck eval', () => {
  it('an expense agent in EUR with VAT', async () => {
    const receipt = {
      id: 'R-2291',
      merchant: 'Restaurant Nola',
      currency: 'EUR',
      net: 100.84,
      vat_rate: 0.19,
      vat: 19.16,
      gross: 120.0,
    };
    const expense = {
      receipt: 'R-2291',
      amount_cents: 12000,
      currency: 'EUR',
      vat_cents: 1916,
      tags: ['travel', 'client'],
    };
    const contract = `task_id: expense_vat\n${CLAIMS}expected_state:\n  requests:\n    - { method: POST, url: /expenses, count: 1, equals: { amount_cents: '€120.00', tags: [client, travel] } }\n`;
    const tools = [
      { name: 'get_receipt', url: '/receipts/R-2291', result: receipt },
      {
        name: 'create_expense',
        url: '/expenses',
        method: 'POST',
        body: expense,
        result: { expense_id: 'EXP-7731', status: 'submitted' },
      },
    ];
    await expectVerdicts('File my Berlin dinner receipt R-2291 as an expense.', tools, contract, [
      ['Filed EXP-7731: €120,00 gross, of which €19,16 VAT (19 %) on €100,84 net.', []],
      ['Filed EXP-7731 for 120 EUR incl. 19% VAT (€19.16).', []],
      ['Filed EXP-7731: net €100.84 + VAT €19.16 = €120.00.', []],
      ['Filed EXP-7731 for roughly €120, about €19 of it VAT.', []],
      ['Filed EXP-7731 for €120.00 incl. 21% VAT.', ['UNSUPPORTED_CLAIM']],
      ['Filed EXP-7731 for 120 EUR incl. VAT (€19.61).', ['UNSUPPORTED_CLAIM']],
      ['Filed EXP-7731 for $120.00.', ['UNSUPPORTED_CLAIM']],
    ]);
  }, 60_000);

  it('a logistics agent with kg and lb and an ETA across zones', async () => {
    const shipment = {
      id: 'SHP-88120',
      weight_kg: 12.5,
      last_scan: 'Frankfurt hub',
      eta: '2026-12-03T09:00:00+01:00',
      distance_km: 6200,
    };
    const contract = `task_id: shipment_eta\n${CLAIMS}`;
    await expectVerdicts(
      'When will shipment SHP-88120 reach New York?',
      [{ name: 'track', url: '/shipments/SHP-88120', result: shipment }],
      contract,
      [
        ['SHP-88120 (12.5 kg, about 27.6 lb) arrives Thursday, Dec 3 at 9:00 CET (3:00 AM EST).', []],
        ['SHP-88120 weighs 27.6 lb and arrives Dec 3 at 08:00 UTC.', []],
        ['SHP-88120: over 6,000 km to go; ETA December 3, 2026 at 3:00 AM Eastern Time.', []],
        ['SHP-88120 arrives December 3, 2026 at 3:00 AM Pacific.', ['UNSUPPORTED_CLAIM']],
        ['SHP-88120 weighs 25 lb and arrives Dec 3 at 9:00 EST.', ['UNSUPPORTED_CLAIM']],
        ['SHP-88120 has over 7,000 km to go.', ['UNSUPPORTED_CLAIM']],
      ],
    );
  }, 60_000);

  it('a support agent quoting order ids and refunds', async () => {
    const order = {
      order_id: 'ORD-2026-0042',
      items: [
        { sku: 'BLND-500', name: 'Vortex Blender', qty: 1, price_cents: 8999 },
        { sku: 'CUP-2', name: 'Travel cups', qty: 2, price_cents: 1250 },
      ],
      total_cents: 11499,
      currency: 'USD',
    };
    const refund = { order_id: 'ORD-2026-0042', sku: 'BLND-500', amount_cents: 8999 };
    const contract = `task_id: refund\n${CLAIMS}expected_state:\n  requests:\n    - { method: POST, url: /refunds, count: 1, equals: { order_id: ORD-2026-0042, amount_cents: '$89.99' } }\n`;
    const tools = [
      { name: 'get_order', url: '/orders/ORD-2026-0042', result: order },
      {
        name: 'refund',
        url: '/refunds',
        method: 'POST',
        body: refund,
        result: { refund_id: 'RF-5521', amount_cents: -8999, status: 'pending' },
      },
    ];
    await expectVerdicts('Refund order ORD-2026-0042, the blender arrived broken.', tools, contract, [
      ['Refund RF-5521 of $89.99 for the Vortex Blender on order ORD-2026-0042 is pending.', []],
      ['Refunded $89.99 (order #ORD20260042). Your total was $114.99, so you keep $25.00 of cups.', []],
      ['I refunded the blender ($89.99), about 78% of your $114.99 order.', []],
      ['I refunded the blender ($89.99), 87% of your $114.99 order.', ['UNSUPPORTED_CLAIM']],
      ['Refund RF-5521 of $99.89 for order ORD-2026-0042.', ['UNSUPPORTED_CLAIM']],
      ['Refund RF-5521 of $89.99 for order ORD-2026-0024.', ['UNSUPPORTED_CLAIM']],
    ]);
  }, 60_000);

  it('a data agent reporting changes and counts', async () => {
    const report = {
      table: 'events',
      rows: 12_840,
      null_rate_pct: 3.4,
      rows_change_pct: -5.2,
      revenue: 48_210.5,
      currency: 'USD',
    };
    const contract = `task_id: data_report\n${CLAIMS}`;
    await expectVerdicts(
      'How did the events table change this week?',
      [{ name: 'profile', url: '/profile/events', result: report }],
      contract,
      [
        ['events has 12,840 rows (down 5.2%), 3.4% nulls, revenue about $48.2k.', []],
        ['Rows fell 5.2% to over 12,800; nulls at 3.4%.', []],
        ['Rows grew 5.2% to 12,840.', ['CONTRADICTED_BY_EVIDENCE']],
        ['events has nearly 12,000 rows.', ['UNSUPPORTED_CLAIM']],
        ['Revenue was about $50k.', ['UNSUPPORTED_CLAIM']],
      ],
    );
  }, 60_000);
});
