// End to end: a recorded booking run and a contract -> the eval's verdict on answers written in
// kinds the reader did not read: other scripts' digits (a wrong total went unchecked: a false
// pass), dates in other languages (read as pieces: a false fail), relative dates against the
// run's clock, negations against what was observed.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

const USER = 'Is the Harbor View hotel free on my dates, and what does it cost?';

/** A run: the agent reads `offer`, answers `answer`. */
function bookingRun(answer: string, offer: Record<string, unknown>) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: USER }];
  const read = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'g', name: 'get_offer', arguments: { hotel: 'harbor-view' } }],
  });
  b.tool(read, {
    name: 'GET /v1/hotels/harbor-view/offer',
    args: {},
    result: offer,
    http: { method: 'GET', url: 'http://127.0.0.1:1/v1/hotels/harbor-view/offer' },
  });
  messages.push({ role: 'tool', tool_call_id: 'g', content: JSON.stringify(offer) });
  b.model({ messages: [...messages], text: answer });
  return b.complete(answer).build();
}

const contract = parseContract(`
task_id: booking_claims
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
`);

function verdict(answer: string, offer: Record<string, unknown> = OFFER) {
  const e = evaluateRecording(bookingRun(answer, offer), contract);
  const of = (code: string) => e.findings.filter((f) => f.code === code).map((f) => f.message);
  const contradicted = of('CONTRADICTED_BY_EVIDENCE');
  return {
    pass: e.task.hardSuccess,
    unsupported: of('UNSUPPORTED_CLAIM'),
    cantTell: of('LOW_CONFIDENCE_EVALUATION'),
    ...(contradicted.length > 0 && { contradicted }),
  };
}

const OFFER = { hotel: 'harbor-view', check_in: '2026-12-01', nights: 3, total: 1299.5, currency: 'USD' };
const CLEAN = { pass: true, unsupported: [], cantTell: [] };

describe("other scripts' digits", () => {
  it('a wrong total in Arabic-Indic, Devanagari or fullwidth digits fails the gate; the right one passes', () => {
    for (const [right, wrong] of [
      ['١٬٢٩٩٫٥٠ دولار', '١٬٩٢٩٫٥٠ دولار'],
      ['कुल १,२९९.५० डॉलर', 'कुल १,९२९.५० डॉलर'],
      ['合計は＄１，２９９．５０です', '合計は＄１，９２９．５０です'],
    ]) {
      expect(verdict(`Yes, it is free: ${right}.`), right).toEqual(CLEAN);
      expect(verdict(`Yes, it is free: ${wrong}.`).unsupported, wrong).toHaveLength(1);
    }
  });
});

describe("other languages' dates", () => {
  it('the right day passes in any language; a day off fails (it was read as a year and a small count)', () => {
    const offer = { ...OFFER, check_in: '2026-12-15' };
    for (const [right, wrong] of [
      ['ab dem 15. Dezember 2026', 'ab dem 16. Dezember 2026'],
      ['à partir du 15 décembre 2026', 'à partir du 16 décembre 2026'],
      ['desde el 15 de diciembre de 2026', 'desde el 16 de diciembre de 2026'],
      ['2026年12月15日から', '2026年12月16日から'],
      ['2026년 12월 15일부터', '2026년 12월 16일부터'],
    ]) {
      expect(verdict(`Yes, free ${right}.`, offer), right).toEqual(CLEAN);
      expect(verdict(`Yes, free ${wrong}.`, offer).pass, wrong).toBe(false);
    }
    // A day under 10 was a small count (not checked) and a year the run held: a false pass.
    expect(verdict('Ja, frei ab dem 2. Dezember 2026.').pass).toBe(false);
    expect(verdict('Ja, frei ab dem 1. Dezember 2026.')).toEqual(CLEAN);
  });
});

describe('availability against what was observed', () => {
  it('"sold out" while the offer has rooms fails the gate, naming the observation; the reverse too', () => {
    const rooms = { ...OFFER, rooms_left: 3 };
    const none = { ...OFFER, rooms_left: 0 };
    for (const said of [
      'Sorry, the Harbor View is sold out for those dates.',
      'There are no rooms left at Harbor View.',
      'Harbor View is unavailable.',
      'Leider ist Harbor View ausverkauft.',
    ]) {
      const wrong = verdict(said, rooms);
      expect(wrong.pass, said).toBe(false);
      expect(wrong.contradicted?.[0], said).toMatch(
        /^the answer says Harbor View: .*, but observed rooms_left: 3 \(step \d+\)$/,
      );
      expect(verdict(said, none), said).toEqual(CLEAN);
    }
    expect(verdict('Yes: Harbor View has 3 rooms left, $1,299.50 in all.', rooms)).toEqual(CLEAN);
    expect(verdict('Yes: Harbor View has 3 rooms left, $1,299.50 in all.', none).contradicted).toHaveLength(1);
    expect(verdict('Yes: Harbor View is available.', { ...OFFER, sold_out: true }).pass).toBe(false);
    expect(verdict('Yes: Harbor View is available.', { ...OFFER, status: 'available' })).toEqual(CLEAN);
  });

  it('no verdict on what the run did not observe: another hotel, another thing, a question', () => {
    const rooms = { ...OFFER, rooms_left: 3 };
    for (const said of [
      'The Ritz is sold out, but Harbor View has rooms.',
      "Harbor View's spa is sold out.",
      'Harbor View has no parking available.',
      'Shall I book Harbor View before it sells out?',
    ])
      expect(verdict(said, rooms), said).toEqual(CLEAN);
  });
});
