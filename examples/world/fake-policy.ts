// The FAKE model's brain: a deterministic scripted policy, not a language model. It reads the
// system prompt's rules, the user's task and the tool results so far, and picks the next tool
// calls or the final answer, so a prompt change changes the trajectory.
import { TRAVEL_TODAY } from './schema.js';

export interface ToolCallSeen {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool result the agent sent back, if any. */
  result?: string;
}

/** A chat request normalised across the OpenAI and Anthropic wire formats. */
export interface Conversation {
  system: string;
  userText: string;
  calls: ToolCallSeen[];
  toolNames: string[];
}

export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
}

export type Decision = { kind: 'tool_calls'; say: string; calls: PlannedCall[] } | { kind: 'final'; text: string };

/** The rules a system prompt switches on; each is one line of prompts/fixed.txt. */
export interface PromptRules {
  /** "look up the passenger ... use only ids returned by tools": without it the model assumes P-100. */
  verifyIds: boolean;
  /** "check the booking policy": search_policies before booking. */
  checkPolicy: boolean;
  /** "verify the booking": get_booking after booking. */
  verifyBooking: boolean;
}

/** The id the scripted model invents when nothing tells it to look the traveler up. */
export const ASSUMED_PASSENGER_ID = 'P-100';

export function readRules(system: string): PromptRules {
  const s = system.toLowerCase().replace(/\s+/g, ' ');
  return {
    verifyIds: s.includes('look up the passenger') && s.includes('only ids returned by tools'),
    checkPolicy: s.includes('check the booking policy'),
    verifyBooking: s.includes('verify the booking'),
  };
}

interface Task {
  destination: string | null;
  date: string;
  budget: number | null;
  travelerName: string | null;
}

const CITIES: Record<string, string> = { denver: 'DEN', seattle: 'SEA', 'new york': 'JFK', 'san francisco': 'SFO' };

export function parseTask(text: string): Task {
  const lower = text.toLowerCase();
  let destination: string | null = null;
  for (const [city, code] of Object.entries(CITIES)) if (lower.includes(`to ${city}`)) destination = code;
  const today = /today is (\d{4}-\d{2}-\d{2})/i.exec(text)?.[1] ?? TRAVEL_TODAY;
  const explicit = /\bon (\d{4}-\d{2}-\d{2})/i.exec(text)?.[1];
  const date = explicit ?? (lower.includes('tomorrow') ? addDays(today, 1) : today);
  const budgetMatch = /(?:under|below|max(?:imum)?|less than) \$?(\d+)/i.exec(text);
  const nameMatch = /(?:this is|i'm|i am|it's|my name is) ([A-Z][a-z]+ [A-Z][a-z]+)/.exec(text);
  return {
    destination,
    date,
    budget: budgetMatch ? Number(budgetMatch[1]) : null,
    travelerName: nameMatch?.[1] ?? null,
  };
}

function addDays(isoDate: string, days: number): string {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

type Obj = Record<string, unknown>;

/** A tool result as the scripted model reads it: a JSON object (ok unless it has `error`), or text. */
export function parseResult(text: string | undefined): { ok: boolean; value: Obj; text: string } {
  const raw = text ?? '';
  try {
    const value = JSON.parse(raw) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return { ok: !('error' in value), value: value as Obj, text: raw };
    }
  } catch {
    // not JSON: a file's text
  }
  return { ok: true, value: {}, text: raw };
}

/** The message of a tool result's `error` (a string or `{ code, message }`). */
export function errorMessage(value: Obj): string {
  const err = value.error as Obj | string | undefined;
  if (typeof err === 'string') return err;
  return String(err?.message ?? err?.code ?? 'unknown error');
}

interface Flight {
  id: string;
  airline: string;
  flight_no: string;
  origin: string;
  destination: string;
  depart_date: string;
  depart_time: string;
  price_usd: number;
}

/**
 * What every scripted policy needs: `done(name, pred?)` finds the latest call of a tool that has a
 * result; `call(say, ...calls)` decides tool calls (or says a tool the request does not offer is missing).
 */
export function moves(c: Conversation): {
  done: (name: string, pred?: (call: ToolCallSeen) => boolean) => ToolCallSeen | undefined;
  call: (say: string, ...calls: PlannedCall[]) => Decision;
} {
  // A model can only call the tools the request offers (no tools listed: anything goes).
  const offered = (name: string) => c.toolNames.length === 0 || c.toolNames.includes(name);
  return {
    done: (name, pred) =>
      [...c.calls].reverse().find((call) => call.name === name && call.result !== undefined && (!pred || pred(call))),
    call: (say, ...calls) => {
      const missing = calls.find((planned) => !offered(planned.name));
      if (missing)
        return { kind: 'final', text: `I need the ${missing.name} tool to do this, and it is not available.` };
      return { kind: 'tool_calls', say, calls };
    },
  };
}

/** The next move, given everything the model can see. Pure and deterministic. */
export function decide(c: Conversation): Decision {
  const rules = readRules(c.system);
  const task = parseTask(c.userText);
  const { done, call } = moves(c);

  if (task.destination === null) return { kind: 'final', text: 'Where would you like to fly to?' };

  const search = done('search_flights');
  if (!search) {
    const args: Obj = { to: task.destination, date: task.date };
    if (task.budget !== null) args.max_price = task.budget;
    const budget = task.budget === null ? '' : ` under $${task.budget}`;
    return call(`Searching flights to ${task.destination} on ${task.date}${budget}.`, {
      name: 'search_flights',
      args,
    });
  }
  const found = parseResult(search.result);
  if (!found.ok) return { kind: 'final', text: `The flight search failed: ${errorMessage(found.value)}.` };
  const flights = ((found.value.flights ?? []) as Flight[]).filter(
    (f) => task.budget === null || f.price_usd <= task.budget,
  );
  const choice = [...flights].sort(
    (a, b) => a.price_usd - b.price_usd || a.depart_time.localeCompare(b.depart_time),
  )[0];
  if (choice === undefined) {
    return { kind: 'final', text: `There are no flights to ${task.destination} on ${task.date} within your budget.` };
  }

  let passengerId: string;
  let passengerName: string;
  const policy = done('search_policies');
  if (rules.verifyIds) {
    const profile = done('read_file', (x) => String(x.args.path ?? '').endsWith('traveler.json'));
    const needed: PlannedCall[] = [];
    if (!profile) needed.push({ name: 'read_file', args: { path: 'traveler.json' } });
    if (rules.checkPolicy && !policy) needed.push(policyCall());
    if (needed.length > 0) return call('Reading the traveler profile before booking.', ...needed);
    const profileResult = parseResult(profile?.result);
    if (!profileResult.ok) {
      return { kind: 'final', text: `I could not read the traveler profile: ${errorMessage(profileResult.value)}.` };
    }
    const profileId = profileResult.value.passenger_id;
    if (typeof profileId !== 'string') {
      return { kind: 'final', text: 'I need your passenger id to book; the traveler profile does not have one.' };
    }
    const pax = done('get_passenger');
    if (!pax)
      return call(`Looking up passenger ${profileId}.`, { name: 'get_passenger', args: { passenger_id: profileId } });
    const paxResult = parseResult(pax.result);
    if (!paxResult.ok) {
      return { kind: 'final', text: `I could not find your passenger record: ${errorMessage(paxResult.value)}.` };
    }
    const p = paxResult.value.passenger as Obj;
    passengerId = String(p.id);
    passengerName = String(p.name);
  } else {
    if (rules.checkPolicy && !policy) return call('Checking the booking policy.', policyCall());
    // The scripted mistake: with no rule to look the traveler up, the model fills in a
    // plausible passenger id that no tool returned and the user never gave.
    passengerId = ASSUMED_PASSENGER_ID;
    passengerName = task.travelerName ?? 'you';
  }

  const booked = done('book_flight');
  if (!booked) {
    return call(`Booking ${choice.airline} ${choice.flight_no} at $${choice.price_usd} for ${passengerName}.`, {
      name: 'book_flight',
      args: { flight_id: choice.id, passenger_id: passengerId },
    });
  }
  const bookedResult = parseResult(booked.result);
  if (!bookedResult.ok)
    return { kind: 'final', text: `I could not book the flight: ${errorMessage(bookedResult.value)}.` };
  const b = bookedResult.value.booking as Obj;
  const bookingId = String(b.id);

  let verified = '';
  if (rules.verifyBooking) {
    const check = done('get_booking');
    if (!check)
      return call(`Verifying booking ${bookingId}.`, { name: 'get_booking', args: { booking_id: bookingId } });
    const checked = parseResult(check.result);
    const status = checked.ok ? String((checked.value.booking as Obj).status) : 'missing';
    if (status !== 'confirmed') {
      return { kind: 'final', text: `Booking ${bookingId} could not be verified (status: ${status}).` };
    }
    verified = ' I verified the booking: it is confirmed.';
  }

  const summary = `${choice.airline} ${choice.flight_no} from ${choice.origin} to ${choice.destination} on ${choice.depart_date} at ${choice.depart_time}`;
  if (!done('write_file')) {
    const content = [
      `# Booking ${bookingId}`,
      '',
      `Passenger: ${passengerName} (${passengerId})`,
      `Flight: ${summary}`,
      `Price: $${choice.price_usd}`,
      'Status: confirmed',
      '',
    ].join('\n');
    return call('Writing the confirmation file.', {
      name: 'write_file',
      args: { path: `confirmations/${bookingId}.md`, content },
    });
  }
  if (!done('save_note')) {
    return call('Recording a note for the booking.', {
      name: 'save_note',
      args: {
        booking_id: bookingId,
        passenger_id: passengerId,
        note: `Booked ${choice.flight_no} for ${passengerName} at $${choice.price_usd}.`,
      },
    });
  }
  const policyLine = policy ? ' Cancellation within 24 hours of booking is free.' : '';
  return {
    kind: 'final',
    text: `Booked ${summary} for ${passengerName} (${passengerId}) — $${choice.price_usd}. Confirmation: ${bookingId}.${verified}${policyLine}`,
  };
}

function policyCall(): PlannedCall {
  return { name: 'search_policies', args: { query: 'passenger identity basic fare cancellation' } };
}
