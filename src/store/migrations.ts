// The warehouse schema, versioned: the seed's eval and trace tables (000 Parts I, II, VI) with
// their columns named exactly as the seed names them, plus a few additive columns and a view.
// Never edit a released migration; add the next version.
import type { SqlClient } from './sql.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'seed eval and trace tables',
    sql: `
CREATE TABLE eval_task_result (
  eval_id                         TEXT PRIMARY KEY,
  task_id                         TEXT NOT NULL,
  trace_id                        TEXT,
  agent_id                        TEXT,
  skill_id                        TEXT,
  hard_success                    BOOLEAN NOT NULL,
  outcome_score                   NUMERIC,
  completeness_score              NUMERIC,
  evidence_validity_score         NUMERIC,
  evidence_consistency_score      NUMERIC,
  methodology_score               NUMERIC,
  readability_score               NUMERIC,
  execution_success_score         NUMERIC,
  primary_failure_reason_code     TEXT,
  failure_reason_codes            JSONB,
  evaluator_version               TEXT,
  eval_contract_version           TEXT,
  created_at                      TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX eval_task_result_trace_id ON eval_task_result (trace_id);
CREATE INDEX eval_task_result_task_id ON eval_task_result (task_id);

CREATE TABLE eval_validator_result (
  eval_id                         TEXT NOT NULL,
  validator_name                  TEXT NOT NULL,
  validator_type                  TEXT NOT NULL,
  passed                          BOOLEAN NOT NULL,
  score                           NUMERIC,
  confidence                      NUMERIC,
  failure_reason_codes            JSONB,
  evidence_refs                   JSONB,
  diagnostic_message              TEXT,
  latency_ms                      INTEGER,
  evaluator_model                 TEXT,
  created_at                      TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX eval_validator_result_eval_id ON eval_validator_result (eval_id);

CREATE TABLE eval_state_result (
  eval_id                         TEXT NOT NULL,
  trace_id                        TEXT NOT NULL,
  state_object_id                 TEXT NOT NULL,
  state_object_type               TEXT,
  state_object_path               TEXT,
  state_action                    TEXT,
  exists_after_run                BOOLEAN,
  readable_after_run              BOOLEAN,
  non_empty_after_run             BOOLEAN,
  expected_state_match            BOOLEAN,
  side_effect_detected            BOOLEAN,
  target_state_match_score        NUMERIC,
  content_usability_score         NUMERIC,
  format_quality_score            NUMERIC,
  boundary_control_score          NUMERIC,
  state_change_score              NUMERIC,
  failure_reason_codes            JSONB,
  diff_summary                    JSONB,
  created_at                      TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX eval_state_result_eval_id ON eval_state_result (eval_id);
CREATE INDEX eval_state_result_trace_id ON eval_state_result (trace_id);

CREATE TABLE trace_run (
  trace_id                         TEXT PRIMARY KEY,
  task_id                          TEXT,
  agent_id                         TEXT,
  skill_id                         TEXT,
  start_time                       TIMESTAMP,
  end_time                         TIMESTAMP,
  total_latency_ms                 INTEGER,
  total_input_tokens               INTEGER,
  total_uncached_input_tokens      INTEGER,
  total_cached_input_tokens        INTEGER,
  total_output_tokens              INTEGER,
  total_reasoning_tokens           INTEGER,
  total_tokens                     INTEGER,
  total_llm_cost                   NUMERIC,
  total_tool_cost                  NUMERIC,
  total_compute_cost               NUMERIC,
  total_cost                       NUMERIC,
  currency                         TEXT,
  main_cost_state                  TEXT,
  created_at                       TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  -- additive: which recording, replay of what, cache writes (a subset of uncached), replay spend
  recording_id                     TEXT,
  replay_of                        TEXT,
  total_cache_write_input_tokens   INTEGER,
  replay_cost                      NUMERIC
);

CREATE TABLE trace_step (
  trace_id                         TEXT NOT NULL,
  step_id                          INTEGER NOT NULL,
  parent_step_id                   INTEGER,
  state_type                       TEXT NOT NULL,
  agent_id                         TEXT,
  skill_id                         TEXT,
  model_name                       TEXT,
  start_time                       TIMESTAMP,
  end_time                         TIMESTAMP,
  latency_ms                       INTEGER,
  input_tokens_total               INTEGER,
  input_tokens_uncached            INTEGER,
  input_tokens_cached              INTEGER,
  output_tokens                    INTEGER,
  reasoning_tokens                 INTEGER,
  total_tokens                     INTEGER,
  llm_cost                         NUMERIC,
  tool_cost                        NUMERIC,
  compute_cost                     NUMERIC,
  state_cost                       NUMERIC,
  status                           TEXT,
  error_type                       TEXT,
  -- additive
  input_tokens_cache_write         INTEGER,
  served_from                      TEXT,
  PRIMARY KEY (trace_id, step_id)
);

CREATE TABLE trace_context_breakdown (
  trace_id                         TEXT NOT NULL,
  step_id                          INTEGER NOT NULL,
  system_prompt_tokens             INTEGER,
  skill_instruction_tokens         INTEGER,
  user_instruction_tokens          INTEGER,
  history_tokens                   INTEGER,
  memory_tokens                    INTEGER,
  tool_result_tokens               INTEGER,
  retrieved_context_tokens         INTEGER,
  artifact_context_tokens          INTEGER,
  other_context_tokens             INTEGER,
  PRIMARY KEY (trace_id, step_id)
);

CREATE TABLE trace_tool_event (
  trace_id                         TEXT NOT NULL,
  step_id                          INTEGER NOT NULL,
  tool_type                        TEXT,
  tool_name                        TEXT,
  request_tokens                   INTEGER,
  response_tokens_raw              INTEGER,
  response_tokens_selected         INTEGER,
  tokens_sent_to_next_llm          INTEGER,
  tool_latency_ms                  INTEGER,
  tool_cost                        NUMERIC,
  status                           TEXT,
  created_at                       TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX trace_tool_event_trace_id ON trace_tool_event (trace_id, step_id);

CREATE TABLE trace_price_snapshot (
  trace_id                         TEXT NOT NULL,
  model_name                       TEXT NOT NULL,
  price_input_per_million          NUMERIC,
  price_cached_input_per_million   NUMERIC,
  price_output_per_million         NUMERIC,
  price_reasoning_per_million      NUMERIC,
  currency                         TEXT,
  price_version                    TEXT,
  created_at                       TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  -- additive
  price_cache_write_per_million    NUMERIC
);
CREATE INDEX trace_price_snapshot_trace_id ON trace_price_snapshot (trace_id);

-- Cost per resolved task (001 §6.6): mean run cost / resolution rate, per task.
CREATE VIEW cost_per_resolved_task AS
SELECT e.task_id,
       r.currency,
       count(*) AS runs,
       sum(CASE WHEN e.hard_success THEN 1 ELSE 0 END) AS resolved,
       avg(r.total_cost) AS cost_per_run,
       CASE WHEN sum(CASE WHEN e.hard_success THEN 1 ELSE 0 END) > 0
            THEN avg(r.total_cost) * count(*) / sum(CASE WHEN e.hard_success THEN 1 ELSE 0 END)
       END AS cost_per_resolved_task
FROM eval_task_result e
JOIN trace_run r ON r.trace_id = e.trace_id
GROUP BY e.task_id, r.currency;
`,
  },
  {
    version: 2,
    name: 'job queue',
    sql: `
-- A pg-boss-like queue: workers claim with FOR UPDATE SKIP LOCKED, so no job runs twice at once.
CREATE TABLE tapedeck_job (
  id                               BIGSERIAL PRIMARY KEY,
  kind                             TEXT NOT NULL,
  payload                          JSONB NOT NULL,
  state                            TEXT NOT NULL DEFAULT 'queued',
  attempts                         INTEGER NOT NULL DEFAULT 0,
  max_attempts                     INTEGER NOT NULL DEFAULT 3,
  run_after                        TIMESTAMP NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
  locked_by                        TEXT,
  locked_at                        TIMESTAMP,
  result                           JSONB,
  error                            TEXT,
  created_at                       TIMESTAMP NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
  finished_at                      TIMESTAMP
);
CREATE INDEX tapedeck_job_ready ON tapedeck_job (state, run_after, id);
`,
  },
  {
    version: 3,
    name: 'job queue on pg-boss; sweeps',
    sql: `
-- The hand-written job queue gives way to pg-boss (its own schema, tapedeck_queue).
DROP TABLE IF EXISTS tapedeck_job;

-- A sweep: recordings x prompt versions x k samples, each a probe (one replay) whose result is
-- the replay's trace (trace_run, eval_task_result). A probe is keyed by what it replays (the
-- recording's content, the prompt, the sample number, the contract, the mode and model endpoint),
-- so a probe answered once is never run again, by this sweep or another.
CREATE TABLE sweep (
  sweep_id                         TEXT PRIMARY KEY,
  k                                INTEGER NOT NULL,
  spec                             JSONB NOT NULL,
  created_at                       TIMESTAMP NOT NULL DEFAULT (now() AT TIME ZONE 'UTC')
);
CREATE TABLE sweep_probe (
  probe_key                        TEXT PRIMARY KEY,
  task_id                          TEXT NOT NULL,
  sample                           INTEGER NOT NULL,
  trace_id                         TEXT,
  eval_id                          TEXT,
  replay                           TEXT,
  job_id                           TEXT,
  completed_at                     TIMESTAMP
);
CREATE TABLE sweep_member (
  sweep_id                         TEXT NOT NULL,
  prompt_version                   TEXT NOT NULL,
  probe_key                        TEXT NOT NULL,
  PRIMARY KEY (sweep_id, prompt_version, probe_key)
);
`,
  },
];

/** The newest schema version this tapedeck knows. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.version), 0);

const LOCK_KEY = 7_414_151; // pg_advisory lock id for migrations (any constant shared by all tapedecks)

/**
 * Brings the database to SCHEMA_VERSION: each missing migration in its own transaction, recorded
 * in schema_migrations; concurrent tapedecks serialise on an advisory lock. Returns what it applied.
 */
export async function migrate(db: SqlClient): Promise<number[]> {
  await db.exec(
    `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
  );
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      const have = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (have.rows.length > 0) return false;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

/** Splits a migration into statements (no semicolons inside our DDL's strings or bodies). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*\n/)
    .map((s) =>
      s
        .split('\n')
        .filter((line) => !line.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter((s) => s.length > 0)
    .map((s) => s.replace(/;$/, ''));
}
