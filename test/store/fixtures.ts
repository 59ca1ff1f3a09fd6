// Shared fixtures of the warehouse tests: recordings, their scores, and the queries users ask.
import type { Recording } from '../../src/recording/types.js';
import { normalizeScores, type Scores, type Warehouse } from '../../src/store/index.js';
import { syntheticRecording } from '../ledger/synthetic.js';

export const recordings: Recording[] = [
  syntheticRecording({ tools: 3, id: 'run-a' }),
  syntheticRecording({
    tools: 5,
    id: 'run-b',
    provider: 'anthropic',
    toolStateType: (i) => (i % 2 ? 'API_CALL' : 'DB_QUERY'),
  }),
  syntheticRecording({ tools: 2, id: 'run-c', replayOf: 'run-a', servedFrom: (s) => (s === 1 ? 'live' : 'recording') }),
];
export const scores: Scores[] = [
  normalizeScores({
    task: {
      evalId: 'eval-a',
      taskId: 'book-flight',
      traceId: 'trace-run-a',
      hardSuccess: true,
      outcomeScore: 0.9,
      failureReasonCodes: [],
    },
    validators: [
      {
        validatorName: 'db-booking',
        validatorType: 'state',
        passed: true,
        score: 1,
        evidenceRefs: ['travel.bookings:BK-0001'],
      },
    ],
    state: [
      {
        stateObjectId: 'db:travel.bookings:BK-0001',
        stateAction: 'create',
        expectedStateMatch: true,
        diffSummary: { inserted: 1 },
      },
    ],
  }),
  normalizeScores({
    task: {
      evalId: 'eval-b',
      taskId: 'book-flight',
      traceId: 'trace-run-b',
      hardSuccess: false,
      primaryFailureReasonCode: 'WRONG_EXECUTION_TARGET',
      failureReasonCodes: ['WRONG_EXECUTION_TARGET'],
    },
    validators: [{ validatorName: 'db-booking', validatorType: 'state', passed: false, score: 0 }],
    state: [],
  }),
];

// The questions a user asks the warehouse; each backend must answer them identically.
export const QUERIES = [
  'SELECT * FROM schema_migrations ORDER BY version',
  'SELECT trace_id, total_tokens, total_cost, total_cached_input_tokens, currency, start_time, replay_of, replay_cost FROM trace_run ORDER BY trace_id',
  'SELECT state_type, count(*) AS steps, sum(total_tokens) AS tokens, sum(state_cost) AS cost FROM trace_step GROUP BY state_type ORDER BY state_type',
  'SELECT trace_id, sum(retrieved_context_tokens) AS retrieved, sum(tool_result_tokens) AS tool FROM trace_context_breakdown GROUP BY trace_id ORDER BY trace_id',
  'SELECT tool_name, sum(tokens_sent_to_next_llm)::numeric / nullif(sum(response_tokens_raw), 0) AS tool_context_ratio FROM trace_tool_event GROUP BY tool_name ORDER BY tool_name',
  'SELECT * FROM cost_per_resolved_task ORDER BY task_id',
  'SELECT e.eval_id, e.hard_success, e.failure_reason_codes, v.validator_name, v.passed, v.evidence_refs FROM eval_task_result e JOIN eval_validator_result v USING (eval_id) ORDER BY e.eval_id',
  'SELECT * FROM eval_state_result ORDER BY eval_id, state_object_id',
  'SELECT * FROM trace_price_snapshot ORDER BY trace_id, model_name',
];

export async function ingestAll(wh: Warehouse): Promise<void> {
  for (const rec of recordings) {
    const traceId = rec.events[0]?.traceId;
    await wh.ingest(
      rec,
      scores.filter((s) => s.task?.trace_id === traceId),
    );
  }
}

export async function answers(wh: Warehouse): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of QUERIES) {
    const r = await wh.query(q);
    out.push(r.rows.map((row) => ({ ...row, applied_at: undefined })));
  }
  return out;
}

/** The committed example recordings with their real evaluations (src/evaluate) against the example contract. */
export async function examplesWithScores(): Promise<Array<{ recording: Recording; scores: Scores }>> {
  const { existsSync, readdirSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { readRecording } = await import('../../src/recording/index.js');
  const { evaluateRecording, loadContract } = await import('../../src/evaluate/index.js');
  const root = 'recordings/examples';
  if (!existsSync(root)) return [];
  const contract = loadContract('examples/contracts/book-flight.yaml');
  const out: Array<{ recording: Recording; scores: Scores }> = [];
  for (const name of readdirSync(root).sort()) {
    if (!existsSync(join(root, name, 'manifest.json'))) continue;
    const recording = await readRecording(join(root, name));
    out.push({ recording, scores: normalizeScores(evaluateRecording(recording, contract)) });
  }
  return out;
}
