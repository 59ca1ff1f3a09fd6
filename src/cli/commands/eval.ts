// `tapedeck eval <recording…> --contract FILE`: score runs (or replays) against an eval contract — hard gate,
// soft score, validators, failure codes, state diff, trajectory classes — and aggregate many runs.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AgainstDiff, StateChange } from '../../diff/index.js';
import {
  aggregate,
  type Evaluation,
  evaluateRecording,
  type JudgeOptions,
  judgeRecording,
  loadContract,
} from '../../evaluate/index.js';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import {
  answerProvenance,
  describeProvenance,
  type ProvenanceCounts,
  unsoundAnswers,
} from '../../recording/provenance.js';
import type { Recording } from '../../recording/types.js';
import { writeOut } from '../output.js';
import { readGivenRecording } from '../read-recording.js';

interface EvalCliOptions {
  contract: string;
  json?: boolean;
  against?: string;
  judgeUrl?: string;
  judgeModel?: string;
  judgeKeyEnv?: string;
  k: string;
  strict?: boolean;
  scoresOut?: string;
}

async function load(dir: string): Promise<Recording> {
  try {
    return await readGivenRecording(dir);
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError(
      'BAD_RECORDING',
      `cannot read recording ${dir}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function describeChange(c: StateChange): string {
  if (c.kind === 'file') return `${c.op} file ${c.path}`;
  if (c.kind === 'row')
    return `${c.op} ${c.schema}.${c.table} ${JSON.stringify(c.key)}${c.op === 'update' ? ` (${c.changedColumns.join(', ')})` : ''}${c.serverClock ? ' [server clock: the database fills it with now()]' : ''}`;
  // Named after the agent's tool when the step carried one out: "issue_refund (POST http://…/refunds)".
  const request = `${c.method} ${c.target}`;
  const what = c.route !== undefined ? `${c.name} (${request})` : request;
  return c.heldBack ? `held back ${what}` : what;
}

function at(stepId: number | null): string {
  return stepId === null ? '' : ` @step ${stepId}`;
}

function formatAgainst(a: AgainstDiff): string[] {
  const lines = [`  vs ${a.recordingId}: ${a.files.length} file, ${a.rows.length} row difference(s) in the post-world`];
  for (const c of [...a.files, ...a.rows].slice(0, 20)) lines.push(`    ${describeChange(c)}`);
  for (const r of a.requestsOnlyHere) lines.push(`    only here: ${r.method} ${r.target}${at(r.stepId)}`);
  for (const r of a.requestsOnlyThere) lines.push(`    only there: ${r.method} ${r.target}${at(r.stepId)}`);
  return lines;
}

const WIDTH = 80;

/** Words of `text` wrapped to WIDTH, the first line after `first`, the rest indented by `indent`. */
function wrap(first: string, text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line.length === 0 || /\s$/.test(line) ? `${line}${word}` : `${line} ${word}`;
    if (candidate.length > WIDTH && line.trim().length > 0 && line !== indent && line !== first) {
      lines.push(line);
      line = `${indent}${word}`;
    } else line = candidate;
  }
  lines.push(line);
  return lines;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
/** Scores to at most 2 decimals (7.333… prints 7.33). */
const num = (n: number): string => String(Math.round(n * 100) / 100);

/**
 * Why `--strict` refuses a replay's outcome: it rests on answers a model made up (simulated) or
 * never got (held back). Undefined when it stands (or without --strict).
 */
function refusal(answers: ProvenanceCounts, strict: boolean | undefined): string | undefined {
  if (!strict) return undefined;
  const { simulated, heldBack } = unsoundAnswers(answers);
  const parts = [
    ...(simulated > 0 ? [`${plural(simulated, 'simulated answer')}`] : []),
    ...(heldBack > 0 ? [`${plural(heldBack, 'held-back call')}`] : []),
  ];
  return parts.length === 0 ? undefined : `the outcome rests on ${parts.join(' and ')}`;
}

function formatEvaluation(dir: string, e: Evaluation, answers?: ProvenanceCounts, strict?: boolean): string {
  const t = e.task;
  const lines: string[] = [];
  const refused = answers ? refusal(answers, strict) : undefined;
  const verdict = refused ? 'REFUSED' : t.hardSuccess ? 'PASS' : 'FAIL';
  lines.push(`${verdict}  ${dir}`);
  if (answers)
    lines.push(
      `  rests on: ${describeProvenance(answers) || 'no answers'}${refused ? ` — refused (--strict): ${refused}` : ''}`,
    );
  lines.push(`  task ${t.taskId}, trace ${t.traceId}`);
  if (t.primaryFailureReasonCode)
    lines.push(
      ...wrap(
        `  ${t.hardSuccess ? 'note' : 'primary failure'}: ${t.primaryFailureReasonCode}${at(t.primaryFailureStepId)}`,
        t.primaryFailureMessage ? `— ${t.primaryFailureMessage}` : '',
        '    ',
      ),
    );
  lines.push(
    ...wrap(
      `  outcome score ${t.outcomeScore.toFixed(2)}`,
      `(completeness ${num(t.completenessScore)}, evidence validity ${num(t.evidenceValidityScore)}, ` +
        `evidence consistency ${num(t.evidenceConsistencyScore)}, methodology ${num(t.methodologyScore)}, ` +
        `readability ${num(t.readabilityScore)}); execution ${num(t.executionSuccessScore)}; state ${num(t.stateChangeScore)}`,
      '    ',
    ),
  );
  if (t.failureReasonCodes.length > 0) lines.push(...wrap('  failure codes:', t.failureReasonCodes.join(', '), '    '));
  if (e.trajectory.length > 0)
    lines.push(
      ...wrap('  trajectory:', e.trajectory.map((f) => `${f.failureClass}${at(f.stepId)}`).join(', '), '    '),
    );
  lines.push('  validators:');
  for (const v of e.validators) {
    const mark = v.passed ? 'ok  ' : 'FAIL';
    const codes = v.failureReasonCodes.join(', ');
    const head = `    ${mark} ${v.validatorName.padEnd(14)} ${num(v.score).padStart(4)}${codes ? `  ${codes}` : ''}`;
    const inline = `${head}  ${v.diagnosticMessage}`;
    if (v.passed && inline.length <= WIDTH) {
      lines.push(inline);
      continue;
    }
    lines.push(head);
    // A failure's findings (the diagnostic joins them with "; ") each on their own lines under it.
    const findings = v.passed ? [v.diagnosticMessage] : v.diagnosticMessage.split('; ');
    for (const finding of findings.filter(Boolean)) lines.push(...wrap('         ', finding, '           '));
  }
  const ch = e.diff.changes;
  lines.push(
    `  world changes: ${plural(ch.files.length, 'file')}, ${plural(ch.rows.length, 'row')}, ${plural(ch.requests.length, 'request')}`,
  );
  const shown = [...ch.files, ...ch.rows, ...ch.requests];
  for (const c of shown.slice(0, 30)) lines.push(...wrap('    ', `${describeChange(c)}${at(c.stepId)}`, '      '));
  if (shown.length > 30) lines.push(`    … and ${shown.length - 30} more (--json has them all)`);
  if (e.diff.sideEffects.length > 0) {
    lines.push(`  side effects (not asked for by the contract; policy ${e.diff.sideEffectPolicy}):`);
    for (const c of e.diff.sideEffects) lines.push(...wrap('    ', `${describeChange(c)}${at(c.stepId)}`, '      '));
  }
  if (e.diff.against) lines.push(...formatAgainst(e.diff.against));
  return lines.join('\n');
}

export function register(program: Command): void {
  program
    .command('eval')
    .exitOverride(exitOnUsageError)
    .description(
      "Evaluates each recording (or replay) against an eval contract (YAML in the form of seed 000 §3: task_id, input, success_criteria with required_outputs, must_include, must_not_include and execution_result; plus fields, execution, expected_state, rules, budgets — see docs/scoring.md). The validator mesh (required field, evidence, claim-fact, rule/SOP, readability or an LLM judge, execution, state) produces the hard gate (hardSuccess), the soft outcome score (0.30 completeness + 0.20 evidence validity + 0.20 evidence consistency + 0.20 methodology + 0.10 readability, weights configurable) and the seed's failure codes, the primary one chosen by a documented precedence and tied to the step that caused it. The state diff compares the post-world with the pre-world (files, rows, mutating requests, each attributed to its step), checks the contract's expected state and lists side effects: changes the contract did not ask for. The trajectory is checked for the five failure classes (wrong tool, bad args, hallucinated state, gave up, loop). With several recordings it also prints Task Success Rate, Average Outcome Score, pass@k and pass^k per task, cost per resolved task and the failure Pareto.",
    )
    .argument('<recording...>', 'recording or replay folders, or <store>/<id> URLs (pg://…, file://…, s3://…)')
    .requiredOption('--contract <file>', 'eval contract YAML (e.g. examples/contracts/book-flight.yaml)')
    .option(
      '--json',
      'print JSON: evaluations[] {recording, task (eval_task_result), validators (eval_validator_result[]), state (eval_state_result[]), sideEffects, trajectory, against} and aggregate',
    )
    .option('--against <recording>', "also compare each post-world with this recording's post-world")
    .option(
      '--judge-url <url>',
      'OpenAI-compatible base URL for the optional LLM judge (off by default), e.g. http://127.0.0.1:8080/v1',
    )
    .option('--judge-model <model>', 'model name for the LLM judge', 'gpt-4.1-mini')
    .option('--judge-key-env <name>', 'environment variable holding the judge API key', 'OPENAI_API_KEY')
    .option('--k <list>', 'k values for pass@k and pass^k, comma separated', '1,5,10')
    .option(
      '--strict',
      "exit with status 1 when any run fails the hard gate, or when a replay's outcome rests on simulated or held-back answers (for CI)",
    )
    .option(
      '--scores-out <file>',
      'also write the rows as a scores file for `tapedeck ingest --scores`: a list of {task, validators, state}',
    )
    .addHelpText(
      'after',
      `
Examples:
  tapedeck eval recordings/examples/openai-baseline --contract examples/contracts/book-flight.yaml
  tapedeck eval recordings/examples/* --contract examples/contracts/book-flight.yaml --json | jq .aggregate
  tapedeck eval recordings/<replay> --contract examples/contracts/book-flight.yaml --against recordings/examples/openai-baseline
  tapedeck eval recordings/<run> --contract c.yaml --judge-url http://127.0.0.1:8080/v1 --judge-model judge-1
  tapedeck record -- tapedeck eval recordings/<run> --contract c.yaml --judge-url ...   records the judge's calls too

Reading the result: FAIL means the hard gate failed; "primary failure" is the first code by precedence
(docs/scoring.md) with the step it points at. Side effects are changes nobody asked for. A replay also says
what its outcome rests on — its answers: recorded, sandbox, mock, simulated, live, held back (docs/replay.md);
with --strict an outcome resting on simulated or held-back answers is REFUSED (exit 1).`,
    )
    .action(async (dirs: string[], options: EvalCliOptions) => {
      const contract = loadContract(options.contract);
      const ks = options.k.split(',').map((s) => Number(s.trim()));
      if (ks.some((k) => !Number.isInteger(k) || k < 1))
        throw new TapedeckError('BAD_ARGUMENT', `--k takes positive integers separated by commas (got "${options.k}")`);
      const against = options.against ? await load(options.against) : undefined;
      let judge: JudgeOptions | undefined;
      if (options.judgeUrl && !/^https?:\/\/[^/]/.test(options.judgeUrl))
        throw new TapedeckError(
          'BAD_ARGUMENT',
          `--judge-url must be an http(s) base URL such as http://127.0.0.1:8080/v1 (got "${options.judgeUrl}")`,
        );
      if (options.judgeUrl) {
        const apiKey = options.judgeKeyEnv ? process.env[options.judgeKeyEnv] : undefined;
        judge = {
          baseUrl: options.judgeUrl,
          model: options.judgeModel ?? 'gpt-4.1-mini',
          ...(apiKey ? { apiKey } : {}),
        };
      }
      const evaluations: Array<{ dir: string; evaluation: Evaluation; answers?: ProvenanceCounts }> = [];
      for (const dir of dirs) {
        const recording = await load(dir);
        const verdict = judge ? await judgeRecording(recording, contract, judge) : undefined;
        const evaluation = evaluateRecording(recording, contract, {
          ...(against ? { against } : {}),
          ...(verdict ? { judge: verdict } : {}),
        });
        // A replay's outcome rests on how its calls were answered: recorded, sandbox, mock, simulated, held back.
        const answers = recording.manifest.replayOf === undefined ? undefined : answerProvenance(recording).counts;
        evaluations.push({ dir, evaluation, ...(answers ? { answers } : {}) });
      }
      const agg = aggregate(
        evaluations.map((e) => e.evaluation.task),
        { k: ks },
      );
      if (options.scoresOut) {
        const rows = evaluations.map(({ evaluation: e }) => ({
          task: e.task,
          validators: e.validators,
          state: e.state,
        }));
        try {
          writeFileSync(options.scoresOut, `${JSON.stringify(rows, null, 2)}\n`);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? String(error);
          throw new TapedeckError(
            'BAD_ARGUMENT',
            `--scores-out ${options.scoresOut}: cannot write the scores file (${code})`,
          );
        }
      }
      if (options.json) {
        writeOut(
          `${JSON.stringify(
            {
              evaluations: evaluations.map(({ dir, evaluation: e, answers }) => ({
                recording: dir,
                ...(answers ? { answers, refused: refusal(answers, options.strict) ?? null } : {}),
                task: e.task,
                validators: e.validators,
                state: e.state,
                sideEffects: e.diff.sideEffects,
                expectations: e.diff.expectations,
                trajectory: e.trajectory,
                ...(e.diff.against ? { against: e.diff.against } : {}),
              })),
              aggregate: {
                ...agg,
                costPerResolvedTask: Number.isFinite(agg.costPerResolvedTask) ? agg.costPerResolvedTask : null,
              },
            },
            null,
            2,
          )}\n`,
        );
      } else {
        for (const { dir, evaluation, answers } of evaluations)
          writeOut(`${formatEvaluation(dir, evaluation, answers, options.strict)}\n\n`);
        if (evaluations.length > 1) {
          const lines = [
            `${agg.runs} runs: Task Success Rate ${(agg.taskSuccessRate * 100).toFixed(1)}%`,
            `Average Outcome Score ${agg.averageOutcomeScore === null ? 'n/a (no run passed)' : `${agg.averageOutcomeScore.toFixed(2)} (over the runs that passed the hard gate)`}`,
            `cost per run ${agg.meanCostPerRun.toFixed(4)}, cost per resolved task ${Number.isFinite(agg.costPerResolvedTask) ? agg.costPerResolvedTask.toFixed(4) : 'n/a (nothing resolved)'}`,
          ];
          for (const t of agg.tasks) {
            const at = Object.entries(t.passAtK).map(([k, v]) => `pass@${k} ${v.toFixed(3)}`);
            const hat = Object.entries(t.passHatK).map(([k, v]) => `pass^${k} ${v.toFixed(3)}`);
            lines.push(`task ${t.taskId}: ${t.c}/${t.n} passed`);
            if (at.length > 0) lines.push(...wrap('  ', at.join(', '), '    '), ...wrap('  ', hat.join(', '), '    '));
          }
          if (agg.failurePareto.length > 0) {
            lines.push('failure Pareto (primary reason of failed runs):');
            for (const b of agg.failurePareto)
              lines.push(
                `  ${b.key.padEnd(32)} ${String(b.count).padStart(4)}  ${(b.share * 100).toFixed(0).padStart(3)}%  cum ${(b.cumulativeShare * 100).toFixed(0)}%`,
              );
          }
          if (agg.trajectoryPareto.length > 0)
            lines.push(`trajectory classes: ${agg.trajectoryPareto.map((b) => `${b.key} ${b.count}`).join(', ')}`);
          writeOut(`${lines.join('\n')}\n`);
        }
      }
      if (
        options.strict &&
        evaluations.some((e) => !e.evaluation.task.hardSuccess || (e.answers && refusal(e.answers, true)))
      )
        process.exitCode = 1;
    });
}
