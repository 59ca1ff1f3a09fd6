// A counterfactual replay session: run it with a changed prompt, follow its progress, then
// index the replay, align it with the baseline and load its ledger and scores.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Recording } from '../../src/recording/index.js';
import { alignByPosition } from '../components/side-by-side.js';
import type {
  AlignmentView,
  Available,
  LedgerView,
  ReplayOutcome,
  ReplayProgress,
  ScoreView,
  TuiServices,
} from '../data/engines.js';
import { indexSteps, type StepIndex } from '../data/steps.js';

export type ReplaySession =
  | { phase: 'idle' }
  | { phase: 'running'; progress: ReplayProgress[] }
  | {
      phase: 'done';
      outcome: ReplayOutcome;
      index: StepIndex;
      alignment: AlignmentView;
      /** Why the alignment is by position, when the engine's alignRuns was not used. */
      alignmentNote?: string;
      ledger?: Available<LedgerView>;
      score?: Available<ScoreView>;
    }
  | { phase: 'failed'; reason: string };

export function useReplaySession(
  services: TuiServices,
  baseline: Recording | undefined,
  baselineIndex: StepIndex | undefined,
) {
  const [session, setSession] = useState<ReplaySession>({ phase: 'idle' });
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  const start = useCallback(
    async (systemPrompt: string, promptFor?: string) => {
      if (!baseline || !baselineIndex) return;
      setSession({ phase: 'running', progress: [] });
      const result = await services.replay(
        {
          baseline,
          systemPrompt,
          ...(promptFor !== undefined ? { promptFor } : {}),
          onProgress: (p) => {
            if (!alive.current) return;
            setSession((s) =>
              s.phase === 'running' ? { phase: 'running', progress: [...s.progress.slice(-50), p] } : s,
            );
          },
        },
        baselineIndex.rows.length,
      );
      if (!alive.current) return;
      if (!result.ok) {
        setSession({ phase: 'failed', reason: result.reason });
        return;
      }
      const outcome = result.value;
      const index = indexSteps(outcome.recording);
      const aligned = await services.align(baseline, outcome.recording);
      const done: Extract<ReplaySession, { phase: 'done' }> = aligned.ok
        ? { phase: 'done', outcome, index, alignment: aligned.value }
        : {
            phase: 'done',
            outcome,
            index,
            alignment: alignByPosition(baselineIndex, index),
            alignmentNote: aligned.reason,
          };
      if (!alive.current) return;
      setSession(done);
      const [ledger, score] = await Promise.all([
        services.ledger(outcome.recording),
        services.score(outcome.recording),
      ]);
      if (!alive.current) return;
      setSession((s) => (s.phase === 'done' && s.outcome === outcome ? { ...s, ledger, score } : s));
    },
    [services, baseline, baselineIndex],
  );

  const reset = useCallback(() => setSession({ phase: 'idle' }), []);
  return { session, start, reset };
}
