// What a tapedeck process makes outside a recording — temp folders, IPC sockets, sandbox
// databases, change-capture schemas — is written down here with the owner's pid before it is made,
// and crossed out when it is removed. A process that is SIGKILLed cannot clean up; the next
// tapedeck command (any of them) finds its entry, sees the owner gone, and removes what it left.
// Entries hold paths and database URLs without passwords, never a secret.
import { randomBytes } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { redactDbUrl } from '../src/postgres/sql.js';
import { stateHome } from '../src/recording/state-home.js';

const ItemSchema = z.discriminatedUnion('kind', [
  /** A temp folder or socket whose name starts with `tapedeck-`, or a recorder's `.spool` folder. */
  z.object({ kind: z.literal('path'), path: z.string() }).strict(),
  /** A sandbox database and its role (same name) on a server. */
  z.object({ kind: z.literal('pg-sandbox'), url: z.string(), name: z.string() }).strict(),
  /** Change capture on a recorded database (its schema, once it exists). */
  z.object({ kind: z.literal('pg-capture'), url: z.string(), schema: z.string().optional() }).strict(),
]);
export type LeftoverItem = z.infer<typeof ItemSchema>;

const EntrySchema = z
  .object({ pid: z.number().int(), start: z.string(), items: z.array(ItemSchema), triedAt: z.number().optional() })
  .strict();
type Entry = z.infer<typeof EntrySchema>;

/** Where entries live: `live/` in TAPEDECK_STATE_DIR, else in tapedeck's state folder (stateHome). */
export function leftoverDir(): string {
  return path.join(process.env.TAPEDECK_STATE_DIR ?? stateHome(), 'live');
}

/** The start time of a process (field 22 of /proc/<pid>/stat), to tell it from a later one with the same pid. */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isAlive(entry: Entry): boolean {
  try {
    process.kill(entry.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = startOf(entry.pid);
  return start === undefined || start === entry.start;
}

function writeEntry(file: string, entry: Entry): void {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
  renameSync(tmp, file);
}

let own: { file: string; entry: Entry } | undefined;

function ownEntry(): { file: string; entry: Entry } {
  if (own) return own;
  const dir = leftoverDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const start = startOf(process.pid) ?? '0';
  own = { file: path.join(dir, `${process.pid}-${start}.json`), entry: { pid: process.pid, start, items: [] } };
  return own;
}

const sameItem = (a: LeftoverItem, b: LeftoverItem) => JSON.stringify(a) === JSON.stringify(b);

/** Notes `item` before it is made; returns the function that crosses it out once it is removed. */
export function noteLeftover(item: LeftoverItem): () => void {
  const stored: LeftoverItem = item.kind === 'path' ? item : { ...item, url: redactDbUrl(item.url) };
  try {
    const { file, entry } = ownEntry();
    entry.items.push(stored);
    writeEntry(file, entry);
  } catch {
    // No state folder (read-only home): the run goes on; only a crash would leave things behind.
    return () => {};
  }
  return () => {
    if (!own) return;
    const { file, entry } = own;
    const at = entry.items.findIndex((i) => sameItem(i, stored));
    if (at >= 0) entry.items.splice(at, 1);
    try {
      if (entry.items.length === 0) rmSync(file, { force: true });
      else writeEntry(file, entry);
    } catch {}
  };
}

/** Removes a temp folder or socket named by an entry: only `tapedeck-…` and `.spool` names, never through a link. */
function removePath(p: string): void {
  const name = path.basename(p);
  if (!path.isAbsolute(p) || !(name.startsWith('tapedeck-') || name === '.spool')) return;
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(p);
  } catch {
    return;
  }
  if (info.isDirectory()) rmSync(p, { recursive: true, force: true });
  else if (info.isSocket() || info.isFile()) unlinkSync(p);
}

/**
 * Makes a private temp folder (`<tmpdir>/<prefix><random>`, mode 0700), noted before it exists.
 * `remove` deletes it and crosses it out.
 */
export async function makeNotedTempDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  for (;;) {
    const dir = path.join(tmpdir(), `${prefix}${randomBytes(6).toString('hex')}`);
    const forget = noteLeftover({ kind: 'path', path: dir });
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (error) {
      forget();
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    return {
      path: dir,
      async remove() {
        await rm(dir, { recursive: true, force: true });
        forget();
      },
    };
  }
}

export interface ReapReport {
  removed: string[];
  failed: string[];
}

/** Prefers a URL the user gave this command (it may carry the password) over the stored one. */
function withCredentials(stored: string, given: string[]): string {
  try {
    const s = new URL(stored);
    for (const g of given) {
      const u = new URL(g);
      if (u.hostname === s.hostname && u.port === s.port && u.username === s.username) {
        s.password = u.password;
        return s.toString();
      }
    }
  } catch {}
  return stored;
}

/**
 * Removes what dead tapedeck processes left behind (their entries), and returns what it did.
 * `urls`: database URLs given to this command, whose passwords may be needed to connect.
 */
export async function reapLeftovers(options: { urls?: string[]; retryAfterMs?: number } = {}): Promise<ReapReport> {
  const report: ReapReport = { removed: [], failed: [] };
  const dir = leftoverDir();
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return report;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    let entry: Entry;
    try {
      entry = EntrySchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    if (entry.pid === process.pid || isAlive(entry)) continue;
    const retryAfter = options.retryAfterMs ?? 10 * 60_000;
    const left: LeftoverItem[] = [];
    for (const item of entry.items) {
      if (item.kind === 'path') {
        try {
          removePath(item.path);
          report.removed.push(item.path);
        } catch (error) {
          report.failed.push(`${item.path}: ${(error as Error).message}`);
        }
        continue;
      }
      if (entry.triedAt !== undefined && Date.now() - entry.triedAt < retryAfter) {
        left.push(item);
        continue;
      }
      try {
        const { reapDatabaseItem } = await import('../src/postgres/reap.js');
        report.removed.push(...(await reapDatabaseItem(item, withCredentials(item.url, options.urls ?? []))));
      } catch (error) {
        left.push(item);
        report.failed.push(`${redactDbUrl(item.url)}: ${(error as Error).message}`);
      }
    }
    try {
      if (left.length === 0) rmSync(file, { force: true });
      else writeEntry(file, { ...entry, items: left, triedAt: Date.now() });
    } catch {}
  }
  return report;
}
