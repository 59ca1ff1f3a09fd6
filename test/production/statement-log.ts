// The Postgres server's statement log, read through the server itself (pg_read_file, as a
// superuser): the log file of the logging collector when it runs, else the file the server's
// stderr goes to (Debian's pg_ctlcluster: /var/log/postgresql/…, seen as /proc/self/fd/2 by a
// backend). A test marks where the log ends, lets the work run against a database whose
// statements are logged (ALTER DATABASE … SET log_statement = 'all'), and reads back the
// statements of that database: log_line_prefix must name the database (%d; Debian's default
// '%m [%p] %q%u@%d ' does).
import pg from 'pg';

export interface LoggedStatement {
  /** user@database as the prefix has it. */
  who: string;
  /** The statement text (simple protocol `statement:`, or extended protocol `execute <name>:`). */
  text: string;
}

export interface StatementLog {
  /** Why the log cannot be read here, or undefined when it can. */
  unavailable: string | undefined;
  /** Where the log ends now. */
  mark(): Promise<number>;
  /** The statements logged for `database` since `mark`. */
  since(mark: number, database: string): Promise<LoggedStatement[]>;
  close(): Promise<void>;
}

const ENTRY = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ /;

/** Opens the server's log through an admin (superuser) connection. */
export async function openStatementLog(adminUrl: string): Promise<StatementLog> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const settings = (
    await admin.query(
      `SELECT current_setting('logging_collector') AS collector, current_setting('log_line_prefix') AS prefix,
              current_setting('log_destination') AS destination, pg_current_logfile('stderr') AS file,
              (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser`,
    )
  ).rows[0] as { collector: string; prefix: string; destination: string; file: string | null; superuser: boolean };
  const file = settings.collector === 'on' ? settings.file : '/proc/self/fd/2';
  let unavailable: string | undefined;
  if (!settings.superuser) unavailable = 'the admin role is not a superuser (pg_read_file)';
  else if (!settings.destination.split(',').includes('stderr'))
    unavailable = `log_destination is ${settings.destination}`;
  else if (!settings.prefix.includes('%d'))
    unavailable = `log_line_prefix '${settings.prefix}' does not name the database`;
  else if (file === null) unavailable = 'the logging collector has no current stderr file';
  const size = async () =>
    Number((await admin.query('SELECT (pg_stat_file($1)).size AS size', [file])).rows[0]?.size ?? 0);
  if (unavailable === undefined) {
    try {
      if ((await size()) === 0) unavailable = `the server's log (${file}) is empty or not a file`;
    } catch (error) {
      unavailable = `the server's log (${file}) cannot be read: ${(error as Error).message}`;
    }
  }
  return {
    unavailable,
    mark: size,
    async since(mark, database) {
      const end = await size();
      const statements: LoggedStatement[] = [];
      const suffix = `@${database} `;
      const take = (entry: string) => {
        const m = /^\S+ \S+ .*?(\S+@\S+) LOG:\s+(?:statement|execute [^:]+):\s([\s\S]*)$/.exec(entry);
        if (m === null) return;
        const who = m[1] as string;
        if (!`${who} `.endsWith(suffix)) return;
        statements.push({ who, text: (m[2] as string).trim() });
      };
      // Read in pieces: other tests on a shared server may log gigabytes meanwhile. One entry per
      // line that starts with a time stamp; a multi-line statement continues on the lines after it.
      const PIECE = 8 << 20;
      let entry: string | undefined;
      let rest = '';
      for (let at = mark; at < end; at += PIECE) {
        const length = Math.min(PIECE, end - at);
        const { rows } = await admin.query('SELECT pg_read_binary_file($1, $2, $3) AS bytes', [file, at, length]);
        const text = rest + ((rows[0]?.bytes as Buffer | undefined)?.toString('utf8') ?? '');
        const lines = text.split('\n');
        rest = at + length < end ? (lines.pop() ?? '') : '';
        for (const line of lines) {
          if (ENTRY.test(line) || entry === undefined) {
            if (entry !== undefined) take(entry);
            entry = line;
          } else entry += `\n${line}`;
        }
      }
      if (entry !== undefined) take(entry);
      return statements;
    },
    close: () => admin.end(),
  };
}

/** A statement that changes the schema or makes an object (DDL), in any case and spacing, at the start of any statement. */
export const DDL =
  /(?:^|;)\s*(?:CREATE|ALTER|DROP|TRUNCATE|COMMENT|GRANT|REVOKE|REINDEX|CLUSTER|VACUUM|ANALYZE|REFRESH|SECURITY\s+LABEL|IMPORT\s+FOREIGN)\b|\bINTO\s+(?:TEMP|TEMPORARY|UNLOGGED)\b/i;
