import { describe, expect, it } from 'vitest';
import type { ModelCalledPayload } from '../../src/recording/index.js';
import { alignByPosition } from '../components/side-by-side.js';
import { alignmentView, bisectView, ledgerView, probeOf, scoreView } from './engines.js';
import { approximateProvenance, barCells } from './provenance.js';
import { baselineSystemPrompt, indexSteps, messageTexts, stepDetail } from './steps.js';
import { syntheticRecording } from './synthetic.js';

const model = (over: Partial<ModelCalledPayload>): ModelCalledPayload => ({
  provider: 'anthropic',
  api: 'messages',
  model: 'claude-sonnet-4-5',
  streamed: false,
  messages: [],
  output: { toolCalls: [] },
  latencyMs: 10,
  ...over,
});

describe('steps of a recording', () => {
  it('makes one timeline row per step with its state type, tool or model, tokens and marks', () => {
    const rec = syntheticRecording({ steps: 9, failAt: 6, divergeAt: [8] });
    const index = indexSteps(rec);
    expect(index.rows.map((r) => r.stepId)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(index.rows[0]).toMatchObject({ stateType: 'THINK', name: 'gpt-4o-mini', kind: 'model', status: 'success' });
    expect(index.rows[0]?.tokens).toBe(301 + 1200 + 41);
    expect(index.rows[5]).toMatchObject({
      stateType: 'RETRIEVE',
      name: 'search_flights',
      status: 'error',
      errorType: 'HTTP_500',
    });
    expect(index.rows[7]?.divergences).toBe(1);
    expect(index.rows[8]?.stateType).toBe('FINALIZE');
    const detail = stepDetail(rec, index, 4);
    expect(detail?.row).toMatchObject({ stateType: 'API_CALL', name: 'book_flight' });
    expect(detail?.db).toHaveLength(1);
    expect(detail?.fs[0]?.path).toBe('out/booking-1.txt');
    expect(detail?.observation).toContain('"ok": true');
  });

  it('reads Anthropic messages: system, the task, tool use and tool results', () => {
    const texts = messageTexts(
      model({
        system: 'You are a travel desk.',
        messages: [
          { role: 'user', content: 'Book a flight to Denver.' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 't1', name: 'search_flights', input: { to: 'DEN' } }],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '[{"id":"FL-102"}]' }] },
            ],
          },
        ],
      }),
    );
    expect(texts.map((t) => [t.source, t.text])).toEqual([
      ['system', 'You are a travel desk.'],
      ['user', 'Book a flight to Denver.'],
      ['history', '→ search_flights({"to":"DEN"})'],
      ['tool', '[{"id":"FL-102"}]'],
    ]);
  });

  it('does not count an OpenAI system message twice when `system` repeats it', () => {
    const m = model({
      system: 'Be brief.',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(messageTexts(m).filter((t) => t.source === 'system')).toHaveLength(1);
    const provenance = approximateProvenance(m);
    expect(provenance.approximate).toBe(true);
    expect(provenance.tokens.system_prompt_tokens).toBe(3);
    const rec = syntheticRecording({ steps: 3, system: 'Only book flights you have seen.' });
    expect(baselineSystemPrompt(rec)).toBe('Only book flights you have seen.');
  });

  it('splits the provenance bar to the width, every present source at least one cell', () => {
    const cells = barCells(
      { tokens: { system_prompt_tokens: 1, tool_result_tokens: 1000, history_tokens: 99 }, approximate: false },
      20,
    );
    expect(cells.reduce((s, c) => s + c.cells, 0)).toBe(20);
    expect(cells.every((c) => c.cells >= 1)).toBe(true);
  });
});

describe('engine answers, reduced for the panels', () => {
  it('turns alignRuns ops into step pairs and names the first divergence', () => {
    const view = alignmentView({
      ops: [
        { op: 'match', a: { step: 1 }, b: { step: 1 } },
        { op: 'substitute', kind: 'other-tool', a: { step: 3 }, b: { step: 3 } },
        { op: 'delete', kind: 'missing-step', a: { step: 4 } },
        { op: 'insert', kind: 'extra-step', b: { step: 4 } },
      ],
      firstDivergence: { kind: 'other-tool', stepA: 3, stepB: 3 },
    });
    expect(view.pairs).toEqual([
      { baseline: 1, replay: 1, same: true },
      { baseline: 3, replay: 3, same: false },
      { baseline: 4, same: false },
      { replay: 4, same: false },
    ]);
    expect(view.firstDivergence).toEqual({ kind: 'other tool', baseline: 3, replay: 3 });
  });

  it('aligns by position when alignRuns is not there', () => {
    const a = indexSteps(syntheticRecording({ steps: 8 }));
    const b = indexSteps(syntheticRecording({ steps: 8, toolSwitchAt: 5 }));
    const view = alignByPosition(a, b);
    expect(view.pairs.slice(0, 4).every((p) => p.same)).toBe(true);
    expect(view.firstDivergence).toEqual({ baseline: 5, replay: 5, kind: 'different arguments' });
  });

  it('reads bisect progress and results, ledger rows and contract scores', () => {
    expect(probeOf({ evaluation: 2, step: 4, verdict: 'bad', good: 0, bad: 4, maxEvaluations: 5 })).toEqual({
      step: 4,
      verdict: 'bad',
      lo: 0,
      hi: 4,
    });
    const b = bisectView(
      {
        firstBad: { step: 3, stateType: 'THINK', name: 'gpt', action: 'decided book_flight', reason: 'uses P-100' },
        path: [{ step: 9, verdict: 'bad' }],
        evaluations: 4,
      },
      [],
    );
    expect(b).toMatchObject({ firstBad: 3, evaluations: 4, message: 'THINK decided book_flight — uses P-100' });
    expect(b.probes).toEqual([{ step: 9, verdict: 'bad' }]);
    const l = ledgerView({
      run: {
        total_cost: '0.5',
        currency: 'USD',
        total_input_tokens: 1000,
        total_cached_input_tokens: 250,
        main_cost_state: 'THINK',
      },
      steps: [
        { step_id: 1, state_type: 'THINK', state_cost: 0.4, total_tokens: 900 },
        { step_id: 2, state_type: 'API_CALL', state_cost: 0.1, total_tokens: 0 },
        { step_id: 3, state_type: 'THINK', state_cost: 0.0, total_tokens: 100 },
      ],
      context: [{ step_id: 1, system_prompt_tokens: 10, tool_result_tokens: 30 }],
    });
    expect(l.totalCost).toBe(0.5);
    expect(l.cacheHitRatio).toBe(0.25);
    expect(l.costByState).toEqual([
      { stateType: 'THINK', cost: 0.4, steps: 2, tokens: 1000 },
      { stateType: 'API_CALL', cost: 0.1, steps: 1, tokens: 0 },
    ]);
    expect(l.provenance.get(1)?.tokens).toEqual({ system_prompt_tokens: 10, tool_result_tokens: 30 });
    const s = scoreView({
      task: {
        hardSuccess: false,
        outcomeScore: 6.5,
        primaryFailureReasonCode: 'FABRICATED_REFERENCE',
        failureReasonCodes: ['FABRICATED_REFERENCE', 'WRONG_EXECUTION_TARGET'],
      },
      validators: [{ validatorName: 'execution', passed: false, score: 2 }],
    });
    expect(s).toMatchObject({
      hardSuccess: false,
      outcomeScore: 6.5,
      primaryFailureReasonCode: 'FABRICATED_REFERENCE',
    });
    expect(s.failureReasonCodes).toEqual(['FABRICATED_REFERENCE', 'WRONG_EXECUTION_TARGET']);
    expect(s.validators).toEqual([{ name: 'execution', passed: false, score: 2 }]);
  });
});
