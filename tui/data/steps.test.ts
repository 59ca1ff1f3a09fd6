import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alignRuns, bisectBelief, builtinPredicate } from '../../src/bisect/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { buildLedger } from '../../src/ledger/index.js';
import { type ModelCalledPayload, readRecording } from '../../src/recording/index.js';
import { alignByPosition } from '../components/side-by-side.js';
import { alignmentView, bisectView, ledgerView, probeOf, scoreView } from './engines.js';
import { approximateProvenance, barCells } from './provenance.js';
import { agentPromptAt, indexSteps, messageTexts, stepDetail } from './steps.js';
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
    expect(agentPromptAt(rec)).toEqual({ text: 'Only book flights you have seen.', stepId: 1, agents: 1 });
    // A run of two agents (model calls 1, 5, 9 the desk's, dated; 3, 7 the forecaster's): the prompt
    // of the agent at a step is that of its last model call at or before it.
    const desk = (step: number) =>
      `You are the front desk of Hotel Nord. Today is day ${step}. Ask the forecaster, then answer.`;
    const forecaster = 'You are the forecaster. Call get_forecast and report the sky in one line.';
    const team = syntheticRecording({ steps: 9, system: (step) => (step % 4 === 3 ? forecaster : desk(step)) });
    expect(agentPromptAt(team)).toEqual({ text: desk(1), stepId: 1, agents: 2 });
    expect(agentPromptAt(team, 4)).toEqual({ text: forecaster, stepId: 3, agents: 2 });
    expect(agentPromptAt(team, 6)).toEqual({ text: desk(5), stepId: 5, agents: 2 });
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
  // A committed recording made by the recorder from the example world (examples/README.md: the
  // baseline agent books for a passenger it never looked up; its belief parts at step 3).
  const example = () => readRecording(resolve('recordings/examples/openai-baseline'));

  it('turns alignRuns ops into step pairs and names the first divergence', () => {
    const a = syntheticRecording({ steps: 8 });
    const b = syntheticRecording({ steps: 8, toolSwitchAt: 5 });
    const alignment = alignRuns(a, b);
    const view = alignmentView(alignment);
    expect(view.pairs).toHaveLength(alignment.ops.length);
    expect(view.pairs.slice(0, 4).every((p) => p.same)).toBe(true);
    expect(view.firstDivergence).toEqual({
      kind: alignment.firstDivergence?.kind.replace(/-/g, ' '),
      baseline: 5,
      replay: 5,
    });
  });

  it('aligns by position when alignRuns is not there', () => {
    const a = indexSteps(syntheticRecording({ steps: 8 }));
    const b = indexSteps(syntheticRecording({ steps: 8, toolSwitchAt: 5 }));
    const view = alignByPosition(a, b);
    expect(view.pairs.slice(0, 4).every((p) => p.same)).toBe(true);
    expect(view.firstDivergence).toEqual({ baseline: 5, replay: 5, kind: 'different arguments' });
  });

  it('reads a ledger: totals from trace_run, cost per state from trace_step', async () => {
    const ledger = buildLedger(await example());
    const view = ledgerView(ledger);
    expect(view.totalCost).toBe(ledger.run.total_cost);
    expect(view.currency).toBe(ledger.run.currency);
    expect(view.stepCost.size).toBe(ledger.steps.length);
    const byState = view.costByState.reduce((n, s) => n + s.steps, 0);
    expect(byState).toBe(ledger.steps.length);
    expect(view.costByState.map((s) => s.cost)).toEqual([...view.costByState.map((s) => s.cost)].sort((x, y) => y - x));
    if (ledger.run.total_input_tokens > 0)
      expect(view.cacheHitRatio).toBe(ledger.run.total_cached_input_tokens / ledger.run.total_input_tokens);
  });

  it('reads a contract score and a bisection of the example run', async () => {
    const recording = await example();
    const evaluation = evaluateRecording(recording, await loadContract(resolve('examples/contracts/book-flight.yaml')));
    const score = scoreView(evaluation);
    expect(score.hardSuccess).toBe(evaluation.task.hardSuccess);
    expect(score.failureReasonCodes).toEqual(evaluation.task.failureReasonCodes);
    expect(score.validators.map((v) => v.name)).toEqual(evaluation.validators.map((v) => v.validatorName));

    const seen: Array<ReturnType<typeof probeOf>> = [];
    const result = await bisectBelief(recording, builtinPredicate('all'), { onProgress: (p) => seen.push(probeOf(p)) });
    const view = bisectView(result, seen);
    expect(view.firstBad).toBe(3);
    expect(view.probes.length).toBe(result.evaluations);
    expect(view.message).toContain(result.firstBad?.action ?? '?');
    expect(bisectView(result, []).probes).toEqual(result.path.map((p) => ({ step: p.step, verdict: p.verdict })));
  });
});
