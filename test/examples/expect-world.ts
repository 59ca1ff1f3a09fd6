// Shared assertions: what each prompt must leave in the example world's database and workspace.
import { expect } from 'vitest';
import type { AgentRun, PromptName, WorldState } from '../../examples/world/index.js';

/** The end state both agents must reach under a prompt (see examples/README.md, "The scenario"). */
export function expectEndState(prompt: PromptName, run: AgentRun, state: WorldState): void {
  expect(run.exitCode, run.stderr).toBe(0);
  const passengerId = prompt === 'fixed' ? 'P-102' : 'P-100';
  // Exactly one booking, on the cheapest flight under $300; under the baseline it is for the
  // wrong person (P-100 is Priya Natarajan), under the fixed prompt for Dana Reyes.
  expect(state.db.bookings).toEqual([
    { id: 'BK-0001', flight_id: 'FL-102', passenger_id: passengerId, price_usd: 189, status: 'confirmed' },
  ]);
  expect(state.db.flights?.find((f) => f.id === 'FL-102')?.seats_left).toBe(3);
  expect(state.db.agent_notes).toHaveLength(1);
  expect(state.db.agent_notes?.[0]).toMatchObject({
    id: 'N-BK-0001',
    booking_id: 'BK-0001',
    passenger_id: passengerId,
  });
  expect(state.db.agent_notes?.[0]?.run_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(Object.keys(state.files).sort()).toEqual(['confirmations/BK-0001.md', 'traveler.json']);
  expect(state.files['confirmations/BK-0001.md']).toContain(`Passenger: Dana Reyes (${passengerId})`);
  // Both answers claim Dana Reyes; only the fixed one is true in the world.
  expect(run.answer).toContain(`for Dana Reyes (${passengerId}) — $189. Confirmation: BK-0001.`);
  if (prompt === 'fixed') expect(run.answer).toContain('I verified the booking');
  else expect(run.answer).not.toContain('verified');
}

/** The tool calls an agent made, from its stderr trace, in order. */
export function toolTrace(run: AgentRun): string[] {
  return run.stderr
    .split('\n')
    .map((line) => /^\[agent \+\d+ms\] (\w+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

export const TRAJECTORIES: Record<PromptName, string[]> = {
  baseline: ['search_flights', 'book_flight', 'write_file', 'save_note'],
  fixed: [
    'search_flights',
    'read_file',
    'search_policies',
    'get_passenger',
    'book_flight',
    'get_booking',
    'write_file',
    'save_note',
  ],
};
