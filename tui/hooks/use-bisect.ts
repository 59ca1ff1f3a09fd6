// A bisect session: run bisectBelief, collect the search path as it narrows, keep the result.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Recording } from '../../src/recording/index.js';
import type { BisectProbe, BisectView, TuiServices } from '../data/engines.js';

export type BisectSession =
  | { phase: 'idle' }
  | { phase: 'running'; probes: BisectProbe[] }
  | { phase: 'done'; view: BisectView }
  | { phase: 'failed'; reason: string; probes: BisectProbe[] };

export function useBisectSession(services: TuiServices, recording: Recording | undefined) {
  const [session, setSession] = useState<BisectSession>({ phase: 'idle' });
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);
  const start = useCallback(async () => {
    if (!recording) return;
    setSession({ phase: 'running', probes: [] });
    const probes: BisectProbe[] = [];
    const result = await services.bisect(recording, (p) => {
      probes.push(p);
      if (alive.current) setSession({ phase: 'running', probes: [...probes] });
    });
    if (!alive.current) return;
    setSession(result.ok ? { phase: 'done', view: result.value } : { phase: 'failed', reason: result.reason, probes });
  }, [services, recording]);
  const reset = useCallback(() => setSession({ phase: 'idle' }), []);
  return { session, start, reset };
}
