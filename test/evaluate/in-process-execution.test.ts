// Actions an agent's tool carries out in-process count as executions: a note INSERTed through the agent's own
// database client (the step the recorder names after the tool, with no request), a file a tool writes. Their
// target and parameters are checked on what they wrote; bookkeeping the contract allows is not an action.
import { describe, expect, it } from 'vitest';
import { type Contract, evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import type { DbSnapshot, Row } from '../../src/recording/index.js';
import { RecordingBuilder } from './recording-builder.js';

const USER = 'What is the weather in Paris? Save a note.';
const NOTE = { id: 1, thread: 't1', note: 'Paris forecast checked', approved_by: 'alice' };
const CHECKPOINT = { thread_id: 't1', checkpoint_id: 'c1', data: '{}' };

function notesDb(notes: Row[], drafts: Row[] = [], checkpoints: Row[] = []): DbSnapshot {
  const cols = (names: string[]) => names.map((name) => ({ name, type: 'text', nullable: false }));
  const table = (schema: string, name: string, columns: string[], primaryKey: string[], rows: Row[]) => ({
    schema,
    name,
    columns: cols(columns),
    primaryKey,
    rows,
  });
  return {
    schemas: ['app', 'public'],
    ddl: [],
    tables: [
      table('app', 'notes', ['id', 'thread', 'note', 'approved_by'], ['id'], notes),
      table('app', 'drafts', ['id', 'thread', 'note', 'approved_by'], ['id'], drafts),
      table(
        'public',
        'checkpoints',
        ['thread_id', 'checkpoint_id', 'data'],
        ['thread_id', 'checkpoint_id'],
        checkpoints,
      ),
    ],
  };
}

const contract = (execution: string, expected = 'rows: [{ table: app.notes, where: { thread: t1 } }]') =>
  parseContract(`
task_id: lg_weather_note_001
input: { user_instruction: '${USER}' }
success_criteria:
  required_outputs: [final_answer]
  execution_result: { required: true }
${execution}
expected_state:
  ${expected}
  allow: { tables: [public.checkpoints] }
`);

const withAction: Contract = contract(`
execution:
  action: { tool: save_note }
  target: { table: app.notes, approved_by: alice }
  parameters: { note: Paris forecast checked }
  max_executions: 1
`);
const withoutAction: Contract = contract(`
execution:
  target: { table: app.notes }
`);

/** A LangGraph-style run: save_note INSERTs through pg in-process; the recorder names the step after the call. */
function dbNoteRun(options: { note?: Row; table?: 'notes' | 'drafts'; writes?: boolean; twice?: boolean } = {}) {
  const note = options.note ?? NOTE;
  const table = options.table ?? 'notes';
  const b = new RecordingBuilder('lg-note', 'trace-lg-note');
  b.pre = { db: notesDb([]) };
  const think = b.model({
    messages: [{ role: 'user', content: USER }],
    toolCalls: [{ id: 'call_1', name: 'save_note', arguments: { note: note.note, thread: 't1' } }],
  });
  const checkpoint = {
    schema: 'public',
    table: 'checkpoints',
    op: 'insert' as const,
    key: { thread_id: 't1', checkpoint_id: 'c1' },
    after: CHECKPOINT,
  };
  const insert = { schema: 'app', table, op: 'insert' as const, key: { id: 1 }, after: note };
  b.changes(think, {
    toolCallName: 'save_note',
    toolCallId: 'call_1',
    db: options.writes === false ? [checkpoint] : [insert, checkpoint],
  });
  const rows = options.writes === false ? [] : [note];
  if (options.twice) {
    const again = b.model({
      messages: [{ role: 'user', content: USER }],
      toolCalls: [{ id: 'call_2', name: 'save_note', arguments: { note: note.note, thread: 't1' } }],
    });
    const second = { ...note, id: 2 };
    b.changes(again, {
      toolCallName: 'save_note',
      toolCallId: 'call_2',
      db: [{ schema: 'app', table, op: 'insert', key: { id: 2 }, after: second }],
    });
    rows.push(second);
  }
  b.post = {
    db: notesDb(table === 'notes' ? rows : [], table === 'drafts' ? rows : [], [CHECKPOINT]),
  };
  const answer = 'Cloudy in Paris. I saved the note.';
  b.model({ messages: [{ role: 'user', content: USER }], text: answer });
  return b.complete(answer).build();
}

const execution = (e: ReturnType<typeof evaluateRecording>) =>
  e.validators.find((v) => v.validatorName === 'execution')!;

describe('a tool that writes the database in-process', () => {
  it('counts as executed by the step named after the tool, its target and parameters checked on the row it wrote', () => {
    for (const c of [withAction, withoutAction]) {
      const e = evaluateRecording(dbNoteRun(), c);
      expect(execution(e).failureReasonCodes).toEqual([]);
      expect(execution(e).passed).toBe(true);
      expect(execution(e).evidenceRefs).toEqual([{ kind: 'step', ref: 'save_note (wrote app.notes)', stepId: 2 }]);
      expect(e.findings.filter((f) => f.hard)).toEqual([]);
      expect(e.task.hardSuccess).toBe(true);
    }
  });

  it('still catches a wrong target and wrong parameters in what it wrote, naming the step', () => {
    const wrong = evaluateRecording(dbNoteRun({ note: { ...NOTE, approved_by: 'mallory' } }), withAction);
    expect(execution(wrong).failureReasonCodes).toEqual(['WRONG_EXECUTION_TARGET']);
    expect(execution(wrong).diagnosticMessage).toContain(
      'step 2 save_note (wrote app.notes): approved_by="mallory" (expected "alice")',
    );
    const params = evaluateRecording(dbNoteRun({ note: { ...NOTE, note: 'Rome forecast checked' } }), withAction);
    expect(execution(params).failureReasonCodes).toEqual(['WRONG_EXECUTION_PARAMETERS']);
    expect(params.task.primaryFailureStepId).toBe(2);
  });

  it('is not executed when the tool only wrote bookkeeping the contract allows', () => {
    const e = evaluateRecording(dbNoteRun({ writes: false }), withAction);
    expect(execution(e).failureReasonCodes).toEqual(['ACTION_NOT_EXECUTED']);
    expect(execution(e).diagnosticMessage).toContain('claims the action was done');
  });

  it('names a write that landed outside the target table, and a second note as a duplicate', () => {
    const elsewhere = evaluateRecording(dbNoteRun({ table: 'drafts' }), withAction);
    expect(execution(elsewhere).failureReasonCodes).toEqual(['EXECUTION_RESULT_NOT_FOUND']);
    expect(execution(elsewhere).diagnosticMessage).toContain(
      'step 2 save_note (wrote app.drafts): no record of it in app.notes',
    );
    const twice = evaluateRecording(dbNoteRun({ twice: true }), withAction);
    expect(execution(twice).failureReasonCodes).toEqual(['DUPLICATE_EXECUTION']);
    expect(twice.findings.find((f) => f.code === 'DUPLICATE_EXECUTION')?.stepId).toBe(4);
  });
});

const fileContract: Contract = contract(
  `
execution:
  action: { tool: save_note }
  target: { path: notes/paris.md }
  parameters: { city: Paris, sky: cloudy }
`,
  'files: [{ path: notes/paris.md, exists: true }]',
);

/** save_note writes a markdown note: through the fs wrapper (a write_file step) or as an in-process tool(). */
function fileNoteRun(content: string, via: 'fs-wrapper' | 'tool', path = 'notes/paris.md') {
  const b = new RecordingBuilder('file-note', 'trace-file-note');
  b.pre = { fs: { files: {} } };
  const think = b.model({
    messages: [{ role: 'user', content: USER }],
    toolCalls: [{ id: 'call_1', name: 'save_note', arguments: { city: 'Paris' } }],
  });
  const fs = [{ path, op: 'create' as const, content }];
  if (via === 'fs-wrapper')
    b.tool(think, {
      name: 'write_file',
      stateType: 'FILE_WRITE',
      args: { path },
      result: { ok: true },
      mutating: true,
      fs,
    });
  else b.tool(think, { name: 'save_note', stateType: 'FILE_WRITE', args: { city: 'Paris' }, result: 'saved', fs });
  b.post = { fs: { files: { [path]: b.file(content) } } };
  const answer = 'Cloudy in Paris. I saved the note.';
  b.model({ messages: [{ role: 'user', content: USER }], text: answer });
  return b.complete(answer).build();
}

describe('a tool that writes a file', () => {
  it('counts as executed, its target and parameters read from the file it wrote', () => {
    for (const via of ['fs-wrapper', 'tool'] as const) {
      const e = evaluateRecording(fileNoteRun('# Note\nCity: Paris\nSky: cloudy\n', via), fileContract);
      expect(execution(e).failureReasonCodes, via).toEqual([]);
      expect(execution(e).evidenceRefs.map((r) => r.stepId)).toEqual([2]);
    }
  });

  it('still catches the wrong file and the wrong contents', () => {
    for (const via of ['fs-wrapper', 'tool'] as const) {
      const params = evaluateRecording(fileNoteRun('# Note\nCity: Paris\nSky: sunny\n', via), fileContract);
      expect(execution(params).failureReasonCodes, via).toEqual(['WRONG_EXECUTION_PARAMETERS']);
      expect(execution(params).diagnosticMessage).toContain('sky="sunny" (expected "cloudy")');
      const target = evaluateRecording(fileNoteRun('City: Paris\nSky: cloudy\n', via, 'notes/rome.md'), fileContract);
      expect(execution(target).failureReasonCodes, via).toEqual(['WRONG_EXECUTION_TARGET']);
    }
  });
});

// A tool that calls a payments API and then records the refund through the agent's own database
// client: the recorder writes the request's step, then a DB_QUERY step of the same tool call with the
// row. The row is the request's record: found, its values checked, and not a second execution.
describe('a request whose record the same tool call writes through its own client', () => {
  const REFUND = { refund_id: 'RF-0001', order_id: 4412, amount_cents: 12999 };
  function refundRun(row: Row = REFUND) {
    const b = new RecordingBuilder('refund', 'trace-refund');
    const refunds = (rows: Row[]): DbSnapshot => ({
      schemas: ['support'],
      ddl: [],
      tables: [
        {
          schema: 'support',
          name: 'refunds',
          columns: ['refund_id', 'order_id', 'amount_cents'].map((name) => ({ name, type: 'text', nullable: false })),
          primaryKey: ['refund_id'],
          rows,
        },
      ],
    });
    b.pre = { db: refunds([]) };
    const args = { order_id: 4412, amount_usd: 129.99 };
    const think = b.model({
      messages: [{ role: 'user', content: 'Refund my order #4412.' }],
      toolCalls: [{ id: 'call_r', name: 'issue_refund', arguments: args }],
    });
    b.tool(think, {
      name: 'issue_refund',
      args,
      mutating: true,
      result: { refund_id: 'RF-0001', status: 'issued' },
      http: { method: 'POST', url: 'http://127.0.0.1:18403/refunds', status: 201, body: args },
    });
    b.changes(think, {
      toolCallName: 'issue_refund',
      toolCallId: 'call_r',
      db: [{ schema: 'support', table: 'refunds', op: 'insert', key: { refund_id: row.refund_id }, after: row }],
    });
    b.post = { db: refunds([row]) };
    const answer = 'Refunded $129.99 for order 4412. Confirmation: RF-0001.';
    b.model({ messages: [{ role: 'user', content: 'Refund my order #4412.' }], text: answer });
    return b.complete(answer).build();
  }
  const refundContract = (action: string) =>
    parseContract(`
task_id: refund_4412
input: { user_instruction: 'Refund my order #4412.' }
success_criteria:
  required_outputs: [final_answer]
  execution_result: { required: true }
execution:
  ${action}
  target: { table: support.refunds, order_id: 4412 }
  parameters: { amount_cents: 12999 }
  max_executions: 1
`);
  const actions = ['action: { method: POST, url: /refunds }', 'action: { tool: issue_refund }', '# no action'];
  it.each(actions)('its record is found and it is one execution (%s)', (action) => {
    const e = evaluateRecording(refundRun(), refundContract(action));
    expect(execution(e).failureReasonCodes).toEqual([]);
    expect(execution(e).evidenceRefs).toHaveLength(1);
  });
  it.each(actions)('a wrong value in its record is a wrong parameter (%s)', (action) => {
    const e = evaluateRecording(refundRun({ ...REFUND, amount_cents: 1299900 }), refundContract(action));
    expect(execution(e).failureReasonCodes).toEqual(['WRONG_EXECUTION_PARAMETERS']);
  });
});
