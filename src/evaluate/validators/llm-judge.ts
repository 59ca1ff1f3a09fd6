// LLM Judge (Readability / intent): an OpenAI-compatible chat endpoint grades the final answer against the
// task. Off by default. It calls the endpoint with fetch, so running `tapedeck eval` under the recorder
// records the judge's calls too and the judgement replays like any other run.
import { answerText } from '../../providers/index.js';
import type { Recording } from '../../recording/index.js';
import type { Contract } from '../contract.js';
import { trajectoryOf } from '../trajectory.js';
import type { Finding, ValidatorContext, ValidatorOutcome } from './types.js';

export interface JudgeOptions {
  /** Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}

export interface JudgeVerdict {
  model: string;
  score: number;
  confidence: number;
  reasons: string;
  latencyMs: number;
  /** Set when the judge could not be asked or its answer could not be read. */
  error?: string;
}

const DEFAULT_RUBRIC =
  'Grade the final answer for readability and fit to the user intent: is it clear, well structured, ' +
  'appropriate for the domain, and does it answer what the user asked? Ignore whether the actions succeeded.';

/** Asks the judge about a recording's final answer. Never throws: a failure is a verdict with `error`. */
export async function judgeRecording(
  recording: Recording,
  contract: Contract,
  options: JudgeOptions,
): Promise<JudgeVerdict> {
  const t = trajectoryOf(recording, contract.input?.user_instruction);
  const started = performance.now();
  const verdict = (v: Partial<JudgeVerdict>): JudgeVerdict => ({
    model: options.model,
    score: 0,
    confidence: 0,
    reasons: '',
    latencyMs: Math.round(performance.now() - started),
    ...v,
  });
  const body = {
    model: options.model,
    temperature: 0,
    messages: [
      {
        role: 'system',
        content:
          'You are an evaluation judge. Reply with one JSON object only: ' +
          '{"score": <0-10>, "confidence": <0-1>, "reasons": "<one sentence>"}.',
      },
      {
        role: 'user',
        content: `Rubric: ${contract.judge?.rubric ?? DEFAULT_RUBRIC}\n\nTask: ${contract.input?.user_instruction ?? contract.task_name ?? contract.task_id}\n\nFinal answer:\n${t.finalAnswer ?? '(none)'}`,
      },
    ],
  };
  try {
    const res = await fetch(`${options.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
    if (!res.ok) return verdict({ error: `judge endpoint answered HTTP ${res.status}` });
    const content = answerText('openai.chat.completions', await res.json()) ?? '';
    const match = /\{[\s\S]*\}/.exec(content);
    if (!match) return verdict({ error: `judge reply is not JSON: ${content.slice(0, 80)}` });
    const parsed = JSON.parse(match[0]) as { score?: unknown; confidence?: unknown; reasons?: unknown };
    const score = Number(parsed.score);
    if (!Number.isFinite(score) || score < 0 || score > 10)
      return verdict({ error: `judge score out of range: ${String(parsed.score)}` });
    const confidence = Number.isFinite(Number(parsed.confidence))
      ? Math.min(1, Math.max(0, Number(parsed.confidence)))
      : 0.5;
    return verdict({ score, confidence, reasons: String(parsed.reasons ?? '') });
  } catch (error) {
    return verdict({ error: `judge call failed: ${error instanceof Error ? error.message : String(error)}` });
  }
}

/** The judge's verdict as a validator; without a verdict, a cheap readability heuristic stands in. */
export function readabilityValidator(ctx: ValidatorContext, verdict?: JudgeVerdict): ValidatorOutcome {
  if (verdict) {
    const findings: Finding[] = verdict.error
      ? [{ code: 'EVALUATOR_FAILURE', hard: false, message: verdict.error }]
      : [];
    if (!verdict.error && verdict.confidence < 0.5)
      findings.push({
        code: 'LOW_CONFIDENCE_EVALUATION',
        hard: false,
        message: `judge confidence ${verdict.confidence}`,
      });
    return {
      validatorName: 'llm_judge',
      validatorType: 'llm_judge',
      metric: 'readability',
      score: verdict.score,
      confidence: verdict.confidence,
      findings,
      evidenceRefs: [],
      message: verdict.error ?? verdict.reasons,
      evaluatorModel: verdict.model,
    };
  }
  const answer = ctx.trajectory.finalAnswer ?? '';
  const notes: string[] = [];
  let score = 10;
  const penalty = (when: boolean, points: number, note: string) => {
    if (!when) return;
    score -= points;
    notes.push(note);
  };
  if (!answer.trim()) penalty(true, 10, 'empty answer');
  else {
    penalty((answer.match(/[A-Za-z]/g) ?? []).length / answer.length < 0.4, 4, 'mostly non-letters');
    penalty(/^\s*[[{]/.test(answer), 3, 'raw data instead of prose');
    penalty(answer.length > 6000, 2, 'very long');
    penalty(
      answer.split(/\n/).some((l) => l.length > 1000),
      1,
      'very long lines',
    );
  }
  return {
    validatorName: 'readability',
    validatorType: 'heuristic',
    metric: 'readability',
    score: Math.max(0, score),
    confidence: 0.4,
    findings: [],
    evidenceRefs: [],
    message: `heuristic readability (no LLM judge configured)${notes.length > 0 ? `: ${notes.join(', ')}` : ''}`,
  };
}
