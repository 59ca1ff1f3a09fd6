// The travel desk's tools, shared by both agents: the REST API over fetch, files in the
// workspace, and one direct Postgres write with `pg`. Configured by env (see examples/README.md).
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = dirname(fileURLToPath(import.meta.url));

export const config = {
  apiUrl: (process.env.TRAVEL_API_URL ?? 'http://127.0.0.1:8787').replace(/\/$/, ''),
  databaseUrl: process.env.DATABASE_URL,
  workspace: resolve(process.env.WORKSPACE ?? process.cwd()),
  today: process.env.TRAVEL_TODAY ?? '2026-11-24',
  task: process.env.TRAVEL_TASK ?? "Hi, it's Dana Reyes. Book me a flight to Denver tomorrow under $300.",
  stream: process.argv.includes('--stream') || /^(1|true|yes)$/i.test(process.env.AGENT_STREAM ?? ''),
};

// One id per run: the prefix of x-request-id and stored with the agent's note. Nondeterministic on
// purpose, so a recorder has a value to capture and a replay has one to reproduce.
export const runId = randomUUID();
const startedAt = Date.now();

/** The system prompt: env SYSTEM_PROMPT, else the file SYSTEM_PROMPT_FILE, else prompts/baseline.txt. */
export async function systemPrompt() {
  // AGENT_OWN_PROMPT=1: the agent keeps the baseline and ignores the prompt a replay hands it
  // (SYSTEM_PROMPT), as an agent with its prompt in its code does: only the request's rewrite changes it.
  const own = process.env.AGENT_OWN_PROMPT === '1';
  if (process.env.SYSTEM_PROMPT && !own) return process.env.SYSTEM_PROMPT;
  const file = (!own && process.env.SYSTEM_PROMPT_FILE) || resolve(here, '../prompts/baseline.txt');
  return (await readFile(file, 'utf8')).trim();
}

export function userMessage() {
  return `Today is ${config.today}. ${config.task}`;
}

const str = { type: 'string' };
const num = { type: 'number' };

/** Tool definitions: name, description, JSON schema of the arguments. */
export const TOOLS = [
  {
    name: 'search_flights',
    description: 'Search flights by destination airport code, date (YYYY-MM-DD) and optional maximum price in USD.',
    parameters: { to: str, date: str, max_price: num, from: str },
    required: ['to'],
  },
  {
    name: 'get_passenger',
    description: 'Look up a passenger by passenger id (P-...).',
    parameters: { passenger_id: str },
    required: ['passenger_id'],
  },
  {
    name: 'book_flight',
    description: 'Book a seat on a flight for a passenger. Returns the booking with its confirmation id.',
    parameters: { flight_id: str, passenger_id: str },
    required: ['flight_id', 'passenger_id'],
  },
  {
    name: 'get_booking',
    description: 'Read a booking by its confirmation id (BK-...).',
    parameters: { booking_id: str },
    required: ['booking_id'],
  },
  {
    name: 'cancel_booking',
    description: 'Cancel a booking by its confirmation id.',
    parameters: { booking_id: str },
    required: ['booking_id'],
  },
  {
    name: 'search_policies',
    description: "Search the travel desk's policy knowledge base.",
    parameters: { query: str },
    required: ['query'],
  },
  {
    name: 'read_file',
    description: 'Read a text file from the workspace.',
    parameters: { path: str },
    required: ['path'],
  },
  {
    name: 'write_file',
    description: 'Write a text file in the workspace (folders are created).',
    parameters: { path: str, content: str },
    required: ['path', 'content'],
  },
  {
    name: 'save_note',
    description: 'Save a note about a booking in the desk database.',
    parameters: { booking_id: str, passenger_id: str, note: str },
    required: ['booking_id', 'passenger_id', 'note'],
  },
];

export { jsonSchema } from './json-schema.mjs';

async function api(method, path, body) {
  const res = await fetch(`${config.apiUrl}${path}`, {
    method,
    // A per-request id from Math.random: only in a header, so the world stays deterministic.
    headers: {
      'content-type': 'application/json',
      'x-request-id': `${runId}.${Math.random().toString(36).slice(2, 8)}`,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return await res.text();
}

function inWorkspace(path) {
  const full = resolve(config.workspace, String(path));
  if (full !== config.workspace && !full.startsWith(config.workspace + sep)) {
    throw new Error(`path ${path} is outside the workspace`);
  }
  return full;
}

async function saveNote({ booking_id, passenger_id, note }) {
  const client = new pg.Client({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    const id = `N-${booking_id}`;
    await client.query(
      'INSERT INTO travel.agent_notes (id, booking_id, passenger_id, note, run_id) VALUES ($1, $2, $3, $4, $5)',
      [id, booking_id, passenger_id, note, runId],
    );
    return JSON.stringify({ ok: true, note_id: id });
  } finally {
    await client.end();
  }
}

/** Run one tool; the result is the text handed back to the model (errors included, as JSON). */
export async function runTool(name, args) {
  try {
    switch (name) {
      case 'search_flights': {
        const q = new URLSearchParams();
        for (const key of ['to', 'date', 'max_price', 'from'])
          if (args[key] !== undefined) q.set(key, String(args[key]));
        return await api('GET', `/flights?${q}`);
      }
      case 'get_passenger':
        return await api('GET', `/passengers/${encodeURIComponent(args.passenger_id)}`);
      case 'book_flight':
        return await api('POST', '/bookings', { flight_id: args.flight_id, passenger_id: args.passenger_id });
      case 'get_booking':
        return await api('GET', `/bookings/${encodeURIComponent(args.booking_id)}`);
      case 'cancel_booking':
        return await api('DELETE', `/bookings/${encodeURIComponent(args.booking_id)}`);
      case 'search_policies':
        return await api('GET', `/policies?${new URLSearchParams({ q: String(args.query ?? '') })}`);
      case 'read_file':
        return await readFile(inWorkspace(args.path), 'utf8');
      case 'write_file': {
        const full = inWorkspace(args.path);
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, String(args.content));
        return JSON.stringify({ ok: true, path: args.path, bytes: Buffer.byteLength(String(args.content)) });
      }
      case 'save_note':
        return await saveNote(args);
      default:
        return JSON.stringify({ error: { code: 'unknown_tool', message: `no tool named ${name}` } });
    }
  } catch (err) {
    return JSON.stringify({
      error: { code: 'tool_failed', message: err instanceof Error ? err.message : String(err) },
    });
  }
}

/** Log a line to stderr (the answer alone goes to stdout). */
export function trace(message) {
  process.stderr.write(`[agent +${Date.now() - startedAt}ms] ${message}\n`);
}

export const MAX_TURNS = 20;
