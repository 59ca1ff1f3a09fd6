// Types of desk-agent.mjs for the TypeScript that imports it.
import type pg from 'pg';

export interface DeskOutcome {
  answer: string;
  drawn: { clock: number[]; random: number[]; uuid: string[] };
}
export function runDeskSession(pool: pg.Pool, input: Record<string, unknown>, apiKey: string): Promise<DeskOutcome>;
