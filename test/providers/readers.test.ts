// Every module that reads model calls reads every provider alike, because it reads them through
// the registry: on each provider's fixtures, the evaluator's trajectory pairs every tool call with
// the result the model was shown, bisect's belief observes those results, the ledger splits the
// input by source and the TUI lists the conversation.
import { beforeAll, describe, expect, it } from 'vitest';
import { beliefAt } from '../../src/bisect/index.js';
import { trajectoryOf } from '../../src/evaluate/trajectory.js';
import { buildLedger } from '../../src/ledger/index.js';
import { messageTexts } from '../../tui/data/steps.js';
import { type Fixture, loadFixtures, travelAgent } from './fixtures.js';

let fixtures: Fixture[];
let task: string;
beforeAll(async () => {
  fixtures = await loadFixtures();
  task = (await travelAgent()).task;
});

describe('readers of model calls, on every provider’s fixtures', () => {
  it('the trajectory: the task, the offered tools, and every call paired with the result the model was shown', () => {
    expect(fixtures.length).toBeGreaterThan(0);
    for (const fixture of fixtures) {
      const t = trajectoryOf(fixture.recording);
      expect(t.userText, fixture.name).toContain(task);
      expect(t.systemText, fixture.name).toContain(fixture.system.split('\n')[0]);
      expect(t.modelSteps[0]?.offeredTools, fixture.name).toContain('book_flight');
      expect(t.modelSteps[0]?.requiredArgs.get('book_flight'), fixture.name).toEqual(['flight_id', 'passenger_id']);
      // Every call but those of the last turn was answered in a later model call's context.
      const answered = t.calls.filter((c) => c.thinkStepId < (t.modelSteps.at(-1)?.stepId ?? 0));
      expect(answered.length, fixture.name).toBeGreaterThan(2);
      for (const call of answered) expect(call.resultText, `${fixture.name} ${call.name}`).toBeTruthy();
      const search = t.calls.find((c) => c.name === 'search_flights');
      expect(search?.resultText, fixture.name).toContain('FL-102');
    }
  });

  it('the belief: the file the fixed prompt reads is observed before the booking that uses its id', () => {
    for (const fixture of fixtures.filter((f) => f.name.endsWith('-stream'))) {
      const last = fixture.calls.at(-1)?.step ?? 0;
      const belief = beliefAt(fixture.recording, last);
      expect(belief.task, fixture.name).toEqual([task]);
      const booking = belief.decisions.find((d) => d.toolCalls.some((c) => c.name === 'book_flight'));
      expect(booking, fixture.name).toBeDefined();
      const seen = belief.observations.filter((o) => o.step <= (booking?.step ?? 0) && o.text.includes('"P-102"'));
      expect(seen.length, fixture.name).toBeGreaterThan(0);
    }
  });

  it('the ledger splits every call’s input by source, tool results included; the TUI lists the conversation', () => {
    for (const fixture of fixtures) {
      const ledger = buildLedger(fixture.recording);
      const rows = ledger.context;
      expect(rows.length, fixture.name).toBe(fixture.calls.length);
      expect(
        rows.every((r) => r.system_prompt_tokens > 0 && r.skill_instruction_tokens > 0),
        fixture.name,
      ).toBe(true);
      expect(
        rows.slice(1).every((r) => r.history_tokens > 0),
        fixture.name,
      ).toBe(true);
      expect(
        rows.slice(1).every((r) => r.tool_result_tokens + r.retrieved_context_tokens + r.memory_tokens > 0),
        fixture.name,
      ).toBe(true);
      const texts = messageTexts(fixture.calls.at(-1)?.recorded ?? fixture.calls[0]!.recorded);
      expect(texts[0], fixture.name).toMatchObject({ source: 'system' });
      expect(
        texts.filter((m) => m.source === 'user').map((m) => m.text),
        fixture.name,
      ).toEqual([task]);
      expect(
        texts.some((m) => m.source === 'tool' && m.text.includes('FL-102')),
        fixture.name,
      ).toBe(true);
      expect(
        texts.some((m) => m.text.startsWith('→ book_flight(')),
        fixture.name,
      ).toBe(true);
    }
  });
});
