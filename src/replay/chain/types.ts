// The answer chain's side of the replay's decision seam: a call the recording cannot serve, and an
// answerer that may answer it (sandbox service, msw mock, simulator), each with its provenance.
import type { StreamChunk } from '../../recording/index.js';
import type { LiveRequest } from '../normalize.js';

/** A call the recording cannot serve, as the agent made it (secrets and all: it never leaves the replayer). */
export interface ChainAsk {
  kind: 'http' | 'tool';
  request: LiveRequest;
  bytes?: Buffer;
  isModel: boolean;
}

/** The response an answerer produced, or the error it met. Times are epoch milliseconds. */
export interface HttpAnswer {
  /** Where the request went (the sandboxed instance, the mock, the simulator's endpoint). */
  url: string;
  started: number;
  durationMs: number;
  ttfbMs?: number;
  response?: {
    status: number;
    statusText: string;
    headers: Record<string, string>;
    bytes: Buffer;
    chunks?: StreamChunk[];
  };
  error?: { code: string; message: string };
}

export interface ChainAnswerer {
  readonly name: string;
  readonly servedFrom: 'sandbox' | 'mock' | 'simulated';
  /** Whether it may answer this call; never in the prefix (exact mode, or before fork-at K). */
  accepts(ask: ChainAsk, context: { prefix: boolean }): boolean;
  /** Its answer; undefined when it turns out not to have one (no mock handler matched), so the next one is asked. */
  answer(ask: ChainAsk): Promise<HttpAnswer | undefined>;
}
