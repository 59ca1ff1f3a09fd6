// The backend's one session handed from connection to connection: the settings each connection
// made (at startup or by SET) saved and restored, the statements another's DEALLOCATE ALL removed
// made again, and the advisory locks of a connection that holds none any more let go.
import type { PGlite } from '@electric-sql/pglite';
import { CAPTURE_LOCK_CLASS, SANDBOX_LOCK_CLASS } from '../../src/postgres/index.js';
import { restoreStatements } from './names.js';
import { type Conn, exec, isLive, query, type ServerState } from './state.js';

/** The GUCs a server reports in ParameterStatus at startup. */
export const REPORTED = [
  'server_version',
  'server_encoding',
  'client_encoding',
  'application_name',
  'default_transaction_read_only',
  'in_hot_standby',
  'is_superuser',
  'session_authorization',
  'DateStyle',
  'IntervalStyle',
  'TimeZone',
  'integer_datetimes',
  'standard_conforming_strings',
];
/** Startup parameters that are not settings. */
const NOT_SETTINGS = new Set(['user', 'database', 'replication', 'options']);
/**
 * SQL that may change session settings: SET, RESET, DISCARD, set_config(), a SET run by EXECUTE
 * in a DO block (any "set name =|to", so an UPDATE's SET too: one read more, never one less).
 */
const SETTING_RE = /(?:^|;)\s*(?:set|reset|discard)\b|\bset_config\s*\(|\bset\s+(?:session\s+)?[\w."]+\s*(?:=|\bto\b)/i;

export const maySetSettings = (sql: string): boolean => SETTING_RE.test(sql);

/** What the backend reports of the REPORTED settings before any connection changed them. */
export async function reportedSettings(db: PGlite): Promise<Map<string, string>> {
  const reported = new Map<string, string>();
  const { rows } = await db.query<{ n: string; v: string | null }>(
    'SELECT n, current_setting(n, true) AS v FROM unnest($1::text[]) AS n',
    [REPORTED],
  );
  for (const row of rows) if (row.v !== null) reported.set(row.n, row.v);
  return reported;
}

/** The settings a startup message asks for: its parameters, and options' "-c name=value" and "--name=value". */
export function startupSettings(params: Map<string, string>, reported: Map<string, string>): Map<string, string> {
  const settings = new Map<string, string>();
  for (const [name, value] of params) {
    // Asking for what the backend has anyway (client_encoding UTF8) is no setting to carry.
    const base = [...reported].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
    if (!NOT_SETTINGS.has(name) && base !== value) settings.set(name, value);
  }
  const words = (params.get('options') ?? '').match(/(?:\\.|\S)+/g) ?? [];
  for (let i = 0; i < words.length; i++) {
    const word = (words[i] as string).replaceAll(/\\(.)/g, '$1');
    const setting =
      word === '-c'
        ? (words[++i] ?? '').replaceAll(/\\(.)/g, '$1')
        : word.startsWith('--')
          ? word.slice(2)
          : word.startsWith('-c')
            ? word.slice(2)
            : '';
    const eq = setting.indexOf('=');
    if (eq > 0) settings.set(setting.slice(0, eq).replaceAll('-', '_'), setting.slice(eq + 1));
  }
  return settings;
}

/** Reads the session's settings (what SET changed), to hand them back later. */
async function sessionSettings(state: ServerState): Promise<Map<string, string>> {
  const result = await query<{ name: string; setting: string }>(
    state,
    "SELECT name, setting FROM pg_settings WHERE source = 'session' ORDER BY name",
  );
  return new Map(result.rows.map((r) => [r.name, r.setting]));
}

const sameSettings = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

async function restoreSettings(state: ServerState, conn: Conn): Promise<void> {
  // Read back only when the holder may have changed them (or left): a hand-over per query of
  // a pool costs no query then.
  const previous = state.sessionOf;
  let current: Map<string, string>;
  if (isLive(previous) && !state.settingsTouched) current = previous.settings;
  else {
    current = await sessionSettings(state);
    if (isLive(previous)) previous.settings = current;
  }
  state.settingsTouched = false;
  if (sameSettings(current, conn.settings)) return;
  await state.db.exec('RESET ALL');
  try {
    await query(state, 'SELECT set_config(n, v, false) FROM unnest($1::text[], $2::text[]) AS s(n, v)', [
      [...conn.settings.keys()],
      [...conn.settings.values()],
    ]);
  } catch {
    // One setting the backend refuses (an unknown startup parameter) does not cost the others.
    for (const [name, value] of conn.settings)
      await query(state, 'SELECT set_config($1, $2, false)', [name, value]).catch(() => {});
  }
}

/**
 * The advisory locks of the connection that took session-level ones, once it holds none: taken
 * by no one. Asked between turns, when no transaction is open, so every advisory lock the
 * session holds is a session-level one of that connection, but tapedeck's own (its classes).
 */
async function releaseIdleLocks(state: ServerState, conn: Conn): Promise<void> {
  const holder = state.lockOwner;
  if (!isLive(holder) || holder === conn) return;
  const { rows } = await query<{ n: number }>(
    state,
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
       AND NOT (objsubid = 2 AND classid::bigint = ANY($1::bigint[]))`,
    [[CAPTURE_LOCK_CLASS, SANDBOX_LOCK_CLASS]],
  );
  if (rows[0]?.n === 0) state.lockOwner = undefined;
}

/** Gives the backend's session to `conn`: the previous holder's settings saved, this one's restored. */
export async function handTo(state: ServerState, conn: Conn): Promise<void> {
  if (state.sessionOf !== conn) await restoreSettings(state, conn);
  state.sessionOf = conn;
  await releaseIdleLocks(state, conn);
  await restoreStatements(conn, (message) => exec(state, message));
}
