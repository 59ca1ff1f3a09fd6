// Scores to ingest beside a recording: the outcome engine's eval_task_result,
// eval_validator_result and eval_state_result rows, in camelCase (as src/evaluate and src/diff
// return them) or snake_case (as the seed's tables name them).
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { TapedeckError } from '../recording/errors.js';

type Row = Record<string, unknown>;

export interface Scores {
  task?: Row;
  validators: Row[];
  state: Row[];
}

/** What the warehouse takes: Scores, or what `evaluateRecording` returns (normalised on ingest). */
export interface ScoresInput {
  task?: object;
  validators: readonly object[];
  state: readonly object[];
}

const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function toSnake(row: unknown): Row {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return {};
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[snake(k)] = v;
  return out;
}

const TaskRow = z.looseObject({ eval_id: z.string().min(1), task_id: z.string().min(1), hard_success: z.boolean() });
const ValidatorRow = z.looseObject({
  eval_id: z.string().min(1),
  validator_name: z.string().min(1),
  validator_type: z.string().min(1),
  passed: z.boolean(),
});
const StateRow = z.looseObject({ eval_id: z.string().min(1), state_object_id: z.string().min(1) });

function check<T extends z.ZodType>(schema: T, row: Row, where: string): Row {
  const r = schema.safeParse(row);
  if (r.success) return row;
  const issue = r.error.issues[0];
  throw new TapedeckError(
    'SCORES_INVALID',
    `${where}.${issue?.path.join('.') || '(row)'}: ${issue?.message ?? 'invalid'} (a scores file holds {task, validators, state} as src/evaluate returns them, or a list of them)`,
  );
}

/** Rows of a list field: an array, or an object holding `rows`. */
function rowsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null) {
    const rows = (value as Row).rows;
    if (Array.isArray(rows)) return rows;
    return [value];
  }
  return [];
}

/** Normalises one {task, validators, state} entry (or the seed's table-named form). */
export function normalizeScores(value: unknown, where = 'scores'): Scores {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TapedeckError('SCORES_INVALID', `${where}: expected an object with task, validators and state`);
  }
  const v = value as Row;
  const taskValue = v.task ?? (Array.isArray(v.eval_task_result) ? v.eval_task_result[0] : v.eval_task_result);
  const task = taskValue === undefined ? undefined : check(TaskRow, toSnake(taskValue), `${where}.task`);
  const evalId = typeof task?.eval_id === 'string' ? task.eval_id : undefined;
  const withEval = (row: Row): Row => (row.eval_id === undefined && evalId ? { ...row, eval_id: evalId } : row);
  const validators = rowsOf(v.validators ?? v.eval_validator_result).map((r, i) =>
    check(ValidatorRow, withEval(toSnake(r)), `${where}.validators.${i}`),
  );
  const state = rowsOf(v.state ?? v.eval_state_result).map((r, i) =>
    check(StateRow, withEval(toSnake(r)), `${where}.state.${i}`),
  );
  // An object with none of the three is not a scores entry (a price table or a typo'd file, say):
  // storing "no scores" silently would hide the mistake.
  if (!task && validators.length === 0 && state.length === 0) {
    throw new TapedeckError(
      'SCORES_INVALID',
      `${where}: holds no task, validators or state (a scores file holds {task, validators, state} as \`tapedeck eval --scores-out\` writes them, or a list of them)`,
    );
  }
  const out: Scores = { validators, state };
  if (task) out.task = task;
  return out;
}

/** Reads a scores file: one entry or a list of entries. */
export function loadScores(file: string): Scores[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TapedeckError('SCORES_INVALID', `cannot read scores ${file}: ${(error as Error).message}`);
  }
  const list = Array.isArray(json) ? json : [json];
  return list.map((entry, i) => normalizeScores(entry, Array.isArray(json) ? `${file}[${i}]` : file));
}

/** The trace a score entry belongs to, when it says. */
export function scoresTraceId(scores: Scores): string | undefined {
  const fromTask = scores.task?.trace_id;
  if (typeof fromTask === 'string') return fromTask;
  const fromState = scores.state.find((s) => typeof s.trace_id === 'string')?.trace_id;
  return typeof fromState === 'string' ? fromState : undefined;
}
