// `tapedeck snapshot save|list|rm`: named development snapshots (the schema and rows of a
// development or staging database) that a replay's database sandbox can be seeded from
// (`tapedeck replay --seed-snapshot NAME`). The store is src/postgres/named-snapshots.ts.
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { writeOut } from '../output.js';

const WHERE = `Snapshots live in .tapedeck/snapshots/<name>/ of the project (the folder of the project
file: --config, else the nearest tapedeck.config.*, else the current folder), in the project file's
snapshotsDir, or in $TAPEDECK_SNAPSHOTS_DIR: snapshot.json (what it
is, and the sha256 of db.json) and db.json (the schema description and every row, in a recording's
db.json format). A snapshot is read as untrusted data: size and depth limits, the schema checked,
the sha256 compared; a changed db.json is refused.`;

function collect(value: string, list: string[] = []): string[] {
  return [...list, value];
}

/** The project's snapshots folder, as a replay with the same --config finds it. */
async function folderOf(opts: { config?: string }): Promise<string> {
  const [{ snapshotsDir }, { loadConfig, projectSnapshotsDir }] = await Promise.all([
    import('../../postgres/named-snapshots.js'),
    import('../../config/index.js'),
  ]);
  const loaded = await loadConfig(opts.config === undefined ? {} : { file: opts.config });
  return snapshotsDir(process.cwd(), process.env, projectSnapshotsDir(loaded));
}

const CONFIG_HELP = 'the project file whose snapshots these are (default: tapedeck.config.* found upward from the cwd)';

export function register(program: Command): void {
  const snapshot = program
    .command('snapshot')
    .exitOverride(exitOnUsageError)
    .description(
      "Named development snapshots for replays. A production run recorded with the observed world (the in-process default) holds only the rows it read and wrote; replayed under a changed prompt, the agent may read rows the run never touched and find empty tables. `snapshot save` takes the schema and rows of a development or staging database once; `tapedeck replay REC --seed-snapshot NAME` (or `seedSnapshot` in tapedeck.config.*) seeds the sandbox from it and lays the recorded run's rows over it by primary key, the run's rows winning.",
    )
    .addHelpText(
      'after',
      `
Examples:
  tapedeck snapshot save dev --db postgres://app@127.0.0.1:5432/app_dev --schema shop
  tapedeck snapshot list
  tapedeck replay recordings/prod-run --seed-snapshot dev --mode counterfactual --system-prompt new.txt
  tapedeck snapshot rm dev

${WHERE}`,
    );

  snapshot
    .command('save')
    .exitOverride(exitOnUsageError)
    .description(
      'Takes the schema (tables, columns, keys, indexes, sequences) and every row of the named schemas of a database, in one REPEATABLE READ transaction, and stores them under NAME. Point it at a development or staging database: it reads every row (for production, record with the observed world instead). Nothing stays in the database (the read uses a temporary table and function of its own session, gone when it ends); the snapshot is stored whole or not at all.',
    )
    .argument('<name>', "the snapshot's name: 1-64 letters, digits, '.', '_' or '-' (e.g. dev, staging-2026-11)")
    .requiredOption('--db <url>', 'the postgres:// URL of the database to take')
    .option('--schema <schema>', 'a schema to take (repeat for more; default: every non-system schema)', collect)
    .option('--force', 'replace a snapshot of the same name')
    .option('--config <file>', CONFIG_HELP)
    .option('--json', 'print what was saved as JSON')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck snapshot save dev --db postgres://app@127.0.0.1:5432/app_dev
  tapedeck snapshot save staging --db "$STAGING_URL" --schema shop --schema billing --force

${WHERE}`,
    )
    .action(
      async (
        name: string,
        opts: { db: string; schema?: string[]; force?: boolean; config?: string; json?: boolean },
      ) => {
        const { checkSnapshotName, saveNamedSnapshot } = await import('../../postgres/named-snapshots.js');
        checkSnapshotName(name);
        if (!/^postgres(ql)?:\/\//.test(opts.db)) {
          const { redactDbUrl } = await import('../../postgres/sql.js');
          throw new TapedeckError('BAD_OPTION', `--db ${redactDbUrl(opts.db)} is not a postgres:// URL`);
        }
        const dir = await folderOf(opts);
        const info = await saveNamedSnapshot(name, opts.db, {
          dir,
          ...(opts.schema ? { schemas: opts.schema } : {}),
          ...(opts.force ? { force: true } : {}),
        });
        if (opts.json) {
          writeOut(`${JSON.stringify({ ...info, dir })}\n`);
          return;
        }
        writeOut(
          `saved snapshot ${info.name}: ${info.tables} table(s), ${info.rows} row(s) of ${info.schemas.join(', ') || 'no schema'} from ${info.source} (${info.bytes} bytes, sha256 ${info.sha256.slice(0, 12)}) in ${dir}\n`,
        );
      },
    );

  snapshot
    .command('list')
    .exitOverride(exitOnUsageError)
    .description('Lists the saved snapshots: name, when, from where, tables and rows.')
    .option('--config <file>', CONFIG_HELP)
    .option('--json', 'print them as JSON')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const { listNamedSnapshots } = await import('../../postgres/named-snapshots.js');
      const dir = await folderOf(opts);
      const list = await listNamedSnapshots(dir);
      if (opts.json) {
        writeOut(`${JSON.stringify({ dir, snapshots: list })}\n`);
        return;
      }
      if (list.length === 0) {
        writeOut(`no snapshots in ${dir} (tapedeck snapshot save NAME --db URL makes one)\n`);
        return;
      }
      for (const s of list) {
        writeOut(
          'problem' in s
            ? `${s.name}  unreadable: ${s.problem}\n`
            : `${s.name}  ${s.createdAt}  ${s.source}  ${s.tables} table(s), ${s.rows} row(s)  ${s.bytes} bytes\n`,
        );
      }
    });

  snapshot
    .command('rm')
    .exitOverride(exitOnUsageError)
    .description('Removes a saved snapshot.')
    .argument('<name>', "the snapshot's name")
    .option('--config <file>', CONFIG_HELP)
    .option('--json', 'print what was removed as JSON')
    .action(async (name: string, opts: { config?: string; json?: boolean }) => {
      const { removeNamedSnapshot } = await import('../../postgres/named-snapshots.js');
      const dir = await folderOf(opts);
      await removeNamedSnapshot(name, dir);
      writeOut(opts.json ? `${JSON.stringify({ removed: name, dir })}\n` : `removed snapshot ${name}\n`);
    });
}
