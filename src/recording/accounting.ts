// Honest accounting of a recording: tool calls a model decided on that never showed up as a step,
// and connections the run opened that no capture layer records (ConnectionAccount, below).
// An agent whose tool runs a program (curl, psql), writes through a socket, or reaches anything
// the capture layers do not see leaves exactly this trace: the model asks for the tool, the next
// model call carries its result, and nothing in between. Such a recording cannot be replayed
// faithfully (the tool will act again, or act differently), so it is said at record time and by
// `tapedeck verify`.
import type {
  EventOf,
  EventType,
  RecordingEvent,
  UnhookedPython,
  UnrecordedConnection,
  UnwatchedProgram,
} from './types.js';

export interface SilentToolCall {
  /** The step of the model call that asked for the tool. */
  step: number;
  toolCallId: string;
  name: string;
}

/** What the account needs of an event: its type, step and payload (as written or as read back). */
interface AccountedEvent {
  type: EventType;
  stepId: number;
  payload: unknown;
}

/**
 * The decided tool calls with no step of their own: no step names their tool-call id, and no
 * step at all (a tool, an HTTP call, a file or row change) came between the model call and the
 * next one. Kept as the events go by (the recorder feeds it what it writes, so `record` needs no
 * read-back of the recording), holding ids only: a step number per step, the decided calls.
 */
export class ToolCallAccount {
  private readonly answered = new Set<string>();
  private readonly steps: number[] = [];
  private readonly models: Array<{ step: number; calls: ReadonlyArray<{ id: string; name: string }> }> = [];

  see(e: AccountedEvent): void {
    if (e.type === 'step.started') {
      const payload = e.payload as EventOf<'step.started'>['payload'];
      this.steps.push(e.stepId);
      if (payload.toolCallId) this.answered.add(payload.toolCallId);
    } else if (e.type === 'model.called') {
      const payload = e.payload as EventOf<'model.called'>['payload'];
      // An embeddings call decides nothing and carries no tool's result: it is work done between
      // two decisions (a RAG tool embedding its query), a step like any other.
      if (payload.output.embeddings !== undefined) return;
      this.models.push({
        step: e.stepId,
        calls: payload.output.toolCalls.map(({ id, name }) => ({ id, name })),
      });
    }
  }

  silent(): SilentToolCall[] {
    const models = [...this.models].sort((a, b) => a.step - b.step);
    const steps = [...this.steps].sort((a, b) => a - b);
    const out: SilentToolCall[] = [];
    let s = 0;
    models.forEach((m, i) => {
      const next = models[i + 1]?.step ?? Number.POSITIVE_INFINITY;
      while (s < steps.length && steps[s]! <= m.step) s++;
      const between = s < steps.length && steps[s]! < next;
      for (const call of m.calls) {
        if (this.answered.has(call.id) || between) continue;
        out.push({ step: m.step, toolCallId: call.id, name: call.name });
      }
    });
    return out;
  }

  warnings(world: AccountedWorld = {}): string[] {
    return silentWarnings(this.silent(), world);
  }
}

export function silentToolCalls(events: readonly RecordingEvent[]): SilentToolCall[] {
  const account = new ToolCallAccount();
  for (const e of events) account.see(e);
  return account.silent();
}

/** What the run captured that bears on what a silent tool call may have done. */
export interface AccountedWorld {
  /** A database was captured (--db): a tool that only read it leaves no step, and the replay's sandbox answers it. */
  database?: boolean;
}

/** One warning line per silent tool call, saying what to do. */
export function silentToolCallWarnings(events: readonly RecordingEvent[], world: AccountedWorld = {}): string[] {
  return silentWarnings(silentToolCalls(events), world);
}

/** One line per tool name: a pure tool the model asks for fifty times is one warning, not fifty. */
function silentWarnings(calls: readonly SilentToolCall[], world: AccountedWorld): string[] {
  const byName = new Map<string, SilentToolCall[]>();
  for (const c of calls) {
    const group = byName.get(c.name);
    if (group === undefined) byName.set(c.name, [c]);
    else group.push(c);
  }
  return [...byName.values()].map((group) => warning(group, world));
}

const SHOWN = 5;

function warning(group: readonly SilentToolCall[], world: AccountedWorld): string {
  const c = group[0] as SilentToolCall;
  const more = group.length > SHOWN ? `, … ${group.length - SHOWN} more` : '';
  const listed = group.slice(0, SHOWN);
  // Parallel tool calls of one turn are asked for in one step: the step is named once.
  const stepsListed = [...new Set(listed.map((g) => g.step))];
  const where = stepsListed.length === 1 && more === '' ? `step ${c.step}` : `steps ${stepsListed.join(', ')}${more}`;
  const head =
    group.length === 1
      ? `step ${c.step}: the model asked for tool "${c.name}" (${c.toolCallId}) and no call of it shows in the recording`
      : `${where}: the model asked for tool "${c.name}" ${group.length} times (${listed.map((g) => g.toolCallId).join(', ')}${more}) and no call of it shows in the recording`;
  // Database reads are not steps (change capture records writes): with a database captured, a
  // tool that only read it (psql -c 'select …') is answered by the replay's sandbox database.
  if (world.database === true)
    return `${head} — it may only have read the captured database (reads are not steps; a replay's sandbox database answers them), or worked on files outside the recorded folder (record with --fs <folder>), or used a program such as curl or a socket that was not captured (record with --isolate to capture every process's HTTP calls), which a replay cannot answer.`;
  return `${head} — it may work on files outside the recorded folder (record with --fs <folder>), or use a program such as curl or psql or a socket that was not captured (record with --isolate to capture every process's HTTP calls); a replay cannot answer it.`;
}

/** A connection as the recorder's socket watcher reports it (record-sockets.mjs). */
export type SeenConnection = Omit<UnrecordedConnection, 'connections'>;

/** Kinds and targets a manifest names at most. */
const KEPT = 100;

/**
 * The connections a run opened that no capture layer records, once per kind, target, protocol
 * and opener, counted. `recorded` says which of those reported are recorded after all (the
 * database the run was given: src/record/recorder.ts).
 */
export class ConnectionAccount {
  private readonly seen = new Map<string, UnrecordedConnection>();

  constructor(private readonly recorded: (connection: SeenConnection) => boolean = () => false) {}

  see(connection: SeenConnection): void {
    if (this.recorded(connection)) return;
    const key = JSON.stringify([connection.kind, connection.target, connection.protocol, connection.by]);
    const known = this.seen.get(key);
    if (known !== undefined) known.connections++;
    else if (this.seen.size < KEPT) this.seen.set(key, { ...connection, connections: 1 });
  }

  list(): UnrecordedConnection[] {
    return [...this.seen.values()];
  }

  warnings(): string[] {
    return this.list().map(unrecordedWarning);
  }
}

/** One line: what was not recorded, and what a replay does with it. */
export function unrecordedWarning(c: UnrecordedConnection): string {
  const by = c.by === undefined ? '' : ` (opened by ${c.by})`;
  const times = c.connections > 1 ? `, ${c.connections} connections` : '';
  // A WebSocket is recorded turn by turn; named here when it could not be followed to its end.
  if (c.kind === 'upgrade' && c.protocol === 'websocket')
    return `not recorded whole: a WebSocket at ${c.target}${by}${times}: tapedeck could not read what followed its recorded turns (frames it cannot read, a message over 64 MiB) or, under --isolate, any of it; a replay answers the recorded turns and closes it there`;
  if (c.kind === 'python')
    return `not recorded: a connection a Python process opened to ${c.target}${by}${times}: without --isolate tapedeck records the calls of Node processes only (record with --isolate to record every program's); a replay cannot answer it`;
  const what =
    c.kind === 'upgrade'
      ? `an HTTP upgrade to ${c.protocol ?? 'another protocol'} at ${c.target}${by}${times}: tapedeck records HTTP, not what goes over an upgraded connection`
      : c.kind === 'http2'
        ? `an HTTP/2 connection to ${c.target}${by}${times}: tapedeck records node:http2 (gRPC) except under --isolate, where the sandbox refuses it`
        : c.kind === 'postgres'
          ? `a PostgreSQL connection to ${c.target}${by}${times}: give the database's URL (--db) to record it`
          : `a ${c.kind === 'tls' ? 'TLS' : c.kind === 'unix' ? 'Unix socket' : 'TCP'} connection to ${c.target}${by}${times}: it does not carry HTTP, which is what tapedeck records`;
  return `not recorded: ${what}; a replay refuses it`;
}

/** A Python program started without the hook, as a preload or the Python hook reports it. */
export type SeenUnhooked = Omit<UnhookedPython, 'processes'>;

/**
 * The Python programs a run started without tapedeck's hook (sandbox/preload/shared-python.mjs),
 * once per program, flag and cause, counted: the recorder's (manifest `unhooked`) and the replayer's.
 */
export class UnhookedAccount {
  private readonly seen = new Map<string, UnhookedPython>();

  see(found: SeenUnhooked): void {
    const key = JSON.stringify([found.program, found.flag, found.uncovered === true]);
    const known = this.seen.get(key);
    if (known !== undefined) known.processes++;
    else if (this.seen.size < KEPT)
      this.seen.set(key, {
        program: found.program.slice(0, 2048),
        flag: found.flag,
        ...(found.uncovered ? { uncovered: true } : {}),
        processes: 1,
      });
  }

  list(): UnhookedPython[] {
    return [...this.seen.values()];
  }

  warnings(doing: 'recorded' | 'served'): string[] {
    return this.list().map((u) => unhookedWarning(u, doing));
  }
}

const FLAG_MEANS = {
  '-S': 'imports no site module, so no sitecustomize',
  '-I': 'ignores PYTHONPATH and the PYTHON* variables',
  '-E': 'ignores PYTHONPATH and the PYTHON* variables',
} as const;

/** One line: which Python program ran without the hook, why, and what it means for its values. */
export function unhookedWarning(u: UnhookedPython, doing: 'recorded' | 'served'): string {
  const times = u.processes > 1 ? ` (${u.processes} processes)` : '';
  const why = u.uncovered
    ? `its interpreter has no sitecustomize of its own that the OS sandbox could cover, and ${u.flag} ${FLAG_MEANS[u.flag]}`
    : u.flag === '-S'
      ? `-S ${FLAG_MEANS['-S']}`
      : `${u.flag} ${FLAG_MEANS[u.flag]} (where tapedeck's hook is; record and replay with --isolate to hook it)`;
  const then =
    doing === 'recorded'
      ? 'its clock and random values are not recorded, and a replay hands it fresh ones'
      : 'its clock and random values are not served from the recording: they are fresh, and what it does with them may differ';
  return `${u.program} ${u.flag}${times} ran without tapedeck's Python hook: ${why}; ${then}`;
}

/**
 * The programs a run started that reach a network service no capture layer sees (curl, psql:
 * sandbox/preload/shared-commands.mjs), once per program, counted (manifest `unwatched`).
 */
export class UnwatchedAccount {
  private readonly seen = new Map<string, UnwatchedProgram>();

  see(found: { program: string }): void {
    const program = found.program.slice(0, 200);
    const known = this.seen.get(program);
    if (known !== undefined) known.processes++;
    else if (this.seen.size < KEPT) this.seen.set(program, { program, processes: 1 });
  }

  list(): UnwatchedProgram[] {
    return [...this.seen.values()];
  }
}

/** Postgres's own clients: with the database recorded (--db), what they change is recorded as the database's changes. */
const POSTGRES_CLIENTS = new Set(['psql', 'pg_dump', 'pg_dumpall', 'pg_restore', 'pgcli']);

/**
 * One line: which program's calls are not in the recording, and what to do. `database` is how the
 * run's database was recorded, when it was: a Postgres client's changes to the recorded schemas
 * are in the recording all the same (snapshot mode sees every session's), and a replay in the OS
 * sandbox runs it against the sandbox database.
 */
export function unwatchedWarning(u: UnwatchedProgram, database?: 'snapshot' | 'observed'): string {
  const times = u.processes > 1 ? ` (${u.processes} processes)` : '';
  if (database === 'snapshot' && POSTGRES_CLIENTS.has(u.program))
    return `not recorded: what ${u.program}${times} read from the database, a program the run started that is not Node (without --isolate tapedeck records the calls of Node processes only); the changes it made to the recorded schemas are recorded all the same (--db), and a replay in the OS sandbox runs it against the sandbox database built from the recording`;
  return `not recorded: the calls of ${u.program}${times}, a program the run started that reaches a network service: without --isolate tapedeck records the calls of Node processes only (record with --isolate to record every program's; in a server, run the tool through Node or record it as a tool()); a replay cannot answer them`;
}
