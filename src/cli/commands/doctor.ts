// `tapedeck doctor [--db URL…]`: removes what killed tapedeck processes left behind — temp
// folders, sockets and recorders' spools named in the leftover register, change capture (schemas,
// triggers) of dead recordings in each database given, and sandbox databases and roles of dead
// replays on each server given — and prints what it removed, what a live run still holds, and
// what it could not remove. Every other command does the register part quietly before it runs.
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { writeOut } from '../output.js';

interface DoctorOptions {
  db: string[];
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .exitOverride(exitOnUsageError)
    .description(
      'Removes what killed tapedeck processes left behind. Without --db: the temp folders, sockets, spools, and any database objects named in the leftover register (live/ in the state folder: $TAPEDECK_HOME, else ~/.local/state/tapedeck; or TAPEDECK_STATE_DIR). With --db URL: also every change-capture schema and trigger of a recording that is no longer running in that database, and every sandbox database and role of a replay that is no longer running on that server. A live recording or replay holds an advisory lock and is left alone. Exits 1 when something could not be removed.',
    )
    .option('--db <url...>', 'a postgres:// URL of a database that was recorded or replayed against (repeatable)', [])
    .option('--json', 'print {removed, live, failed} as JSON')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck doctor
  tapedeck doctor --db postgres://app@localhost:5432/shop`,
    )
    .action(async (opts: DoctorOptions) => {
      const { isPostgresUrl, redactDbUrl } = await import('../../postgres/sql.js');
      for (const url of opts.db) {
        if (!isPostgresUrl(url))
          throw new TapedeckError('BAD_OPTION', `--db ${redactDbUrl(url)} is not a postgres:// URL`);
      }
      const { reapLeftovers } = await import('../../../sandbox/leftovers.js');
      const reaped = await reapLeftovers({ urls: opts.db, retryAfterMs: 0 });
      const report = { removed: [...reaped.removed], live: [] as string[], failed: [...reaped.failed] };
      if (opts.db.length > 0) {
        const { connectDb, removeCaptureLeftovers, removeSandboxLeftovers } = await import('../../postgres/index.js');
        for (const url of opts.db) {
          const where = redactDbUrl(url);
          let client: Awaited<ReturnType<typeof connectDb>>;
          try {
            client = await connectDb(url, { application: 'tapedeck doctor', timeoutMs: 10_000 });
          } catch (error) {
            report.failed.push((error as Error).message);
            continue;
          }
          try {
            for (const part of [await removeCaptureLeftovers(client), await removeSandboxLeftovers(client)]) {
              report.removed.push(...part.removed.map((r) => `${r} (${where})`));
              report.live.push(...part.live.map((r) => `${r} (${where})`));
              report.failed.push(...part.failed.map((r) => `${r} (${where})`));
            }
          } finally {
            await client.end().catch(() => {});
          }
        }
      }
      if (opts.json) writeOut(`${JSON.stringify(report, null, 2)}\n`);
      else {
        for (const r of report.removed) writeOut(`removed  ${r}\n`);
        for (const r of report.live) writeOut(`live     ${r}\n`);
        for (const r of report.failed) writeOut(`failed   ${r}\n`);
        if (report.removed.length + report.live.length + report.failed.length === 0) {
          writeOut('nothing left behind\n');
        }
      }
      if (report.failed.length > 0) process.exitCode = 1;
    });
}
