// A seeded generator of hostile recordings for the hostile-recording suite (issue 21): each case is
// a copy of a real recording (recordings/examples, recordings/support) with one attack or one
// kind of damage applied — truncation, byte flips, wrong types, huge and deeply nested values,
// path traversal, symlinks, FIFOs, recorded SQL and code, recorded command and env, contradictions
// (a path that is a file and a folder, a step started twice) — and, where a
// forger would, the integrity hash recomputed so the damage reaches past the hash check.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { seeded } from '../postgres/db-fixture.js';

/** What a case may point at, and what must never change or fill up. */
export interface Targets {
  /** A file outside every recording: its content must never show and it must never change. */
  outsideFile: string;
  /** Its canary text. */
  outsideCanary: string;
  /** A folder that must stay empty (hostile paths and commands aim at it). */
  canaryDir: string;
  /** A CommonJS file that writes into canaryDir when loaded (for NODE_OPTIONS --require). */
  payloadModule: string;
}

export interface HostileCase {
  /** 0-based number; the case folder is named after it. */
  n: number;
  /** The class of attack or damage (counted in the report). */
  kind: string;
  /** What was done, for a failure message. */
  what: string;
  /** The base recording it was made from. */
  base: string;
  /** The recording folder. */
  dir: string;
}

type Rng = () => number;
const int = (rng: Rng, n: number): number => Math.floor(rng() * n);
const pick = <T>(rng: Rng, list: readonly T[]): T => list[int(rng, list.length)] as T;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Ctx {
  rng: Rng;
  dir: string;
  t: Targets;
}

const EVENTS = 'events.jsonl';

function lines(dir: string): string[] {
  return readFileSync(path.join(dir, EVENTS), 'utf8').split('\n').slice(0, -1);
}

function writeLines(dir: string, list: string[]): void {
  writeFileSync(path.join(dir, EVENTS), list.length === 0 ? '' : `${list.join('\n')}\n`);
}

function readJson(file: string): Json {
  return JSON.parse(readFileSync(file, 'utf8')) as Json;
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, JSON.stringify(value, null, 2));
}

const manifestOf = (dir: string) => readJson(path.join(dir, 'manifest.json')) as { [key: string]: Json };
const writeManifest = (dir: string, m: unknown) => writeJson(path.join(dir, 'manifest.json'), m);

/** What a forger does after editing events.jsonl: the manifest's hash and count made to agree. */
export function reseal(dir: string): void {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path.join(dir, EVENTS));
  } catch {
    return;
  }
  let m: { [key: string]: Json };
  try {
    m = manifestOf(dir);
  } catch {
    return;
  }
  const count = bytes
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '').length;
  m.integrity = { events: count, eventsSha256: createHash('sha256').update(bytes).digest('hex') };
  writeManifest(dir, m);
}

/** Lines spliced in at `from`: seq kept increasing (renumbered from there on, after `seq`), written and resealed. */
function writeRenumbered(dir: string, list: string[], from: number, seq: number): void {
  for (let j = from; j < list.length; j++) {
    const e = JSON.parse(list[j] as string) as { seq: number };
    e.seq = seq + 1 + (j - from);
    list[j] = JSON.stringify(e);
  }
  writeLines(dir, list);
  reseal(dir);
}

/** Paths to every leaf (and, optionally, every container) of a JSON value, up to `limit`. */
function pathsOf(value: Json, withContainers: boolean, limit = 2000): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  const walk = (v: Json, at: Array<string | number>) => {
    if (out.length >= limit) return;
    if (v !== null && typeof v === 'object') {
      if (withContainers && at.length > 0) out.push(at);
      if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...at, i]);
      else for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
    } else out.push(at);
  };
  walk(value, []);
  return out;
}

function getAt(root: Json, at: Array<string | number>): Json {
  let v: Json = root;
  for (const k of at) v = (v as Record<string | number, Json>)[k] as Json;
  return v;
}

function setAt(root: Json, at: Array<string | number>, value: Json): void {
  const parent = getAt(root, at.slice(0, -1)) as Record<string | number, Json>;
  parent[at.at(-1) as string | number] = value;
}

/** A value of another JSON type than `v`. */
function otherType(rng: Rng, v: Json): Json {
  const options: Json[] = [null, true, 0, -1, 1.5, '', 'x', [], {}, [1, 'a'], { a: 1 }, 1e308, '1', 'true'];
  for (;;) {
    const o = pick(rng, options);
    if (typeof o !== typeof v || Array.isArray(o) !== Array.isArray(v) || (o === null) !== (v === null)) return o;
  }
}

function nested(depth: number, kind: 'array' | 'object', leaf: Json = 'x'): string {
  if (kind === 'array') return `${'['.repeat(depth)}${JSON.stringify(leaf)}${']'.repeat(depth)}`;
  return `${'{"a":'.repeat(depth)}${JSON.stringify(leaf)}${'}'.repeat(depth)}`;
}

/** Edits one event line (parsed), keeps the rest as they are. */
function editEvent(
  ctx: Ctx,
  edit: (event: { [key: string]: Json }, rng: Rng) => string | undefined,
): string | undefined {
  const list = lines(ctx.dir);
  for (let tries = 0; tries < 20; tries++) {
    const i = int(ctx.rng, list.length);
    const event = JSON.parse(list[i] as string) as { [key: string]: Json };
    const what = edit(event, ctx.rng);
    if (what === undefined) continue;
    list[i] = JSON.stringify(event);
    writeLines(ctx.dir, list);
    return `events.jsonl:${i + 1} (${String(event.type)}): ${what}`;
  }
  return undefined;
}

/** Replaces a random leaf of one event with raw JSON text (for values JSON.stringify cannot build cheaply). */
function spliceRaw(ctx: Ctx, raw: string, label: string): string | undefined {
  const marker = `__HOSTILE_${int(ctx.rng, 1e9)}__`;
  const what = editEvent(ctx, (event, rng) => {
    const leaves = pathsOf(event.payload ?? null, true).filter((p) => p.length > 0);
    if (leaves.length === 0) return undefined;
    const at = pick(rng, leaves);
    setAt(event.payload as Json, at, marker);
    return `payload.${at.join('.')} = ${label}`;
  });
  const file = path.join(ctx.dir, EVENTS);
  writeFileSync(file, readFileSync(file, 'utf8').replace(JSON.stringify(marker), raw));
  return what;
}

function filesOf(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...filesOf(dir, p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const SNAPSHOTS = [
  'snapshots/pre/fs.json',
  'snapshots/pre/db.json',
  'snapshots/post/fs.json',
  'snapshots/post/db.json',
];

function someFile(ctx: Ctx): string {
  const all = filesOf(ctx.dir);
  const r = ctx.rng();
  if (r < 0.45) return EVENTS;
  if (r < 0.6) return 'manifest.json';
  const snaps = all.filter((f) => f.startsWith('snapshots/'));
  if (r < 0.85 && snaps.length > 0) return pick(ctx.rng, snaps);
  const blobs = all.filter((f) => f.startsWith('blobs/'));
  return blobs.length > 0 ? pick(ctx.rng, blobs) : EVENTS;
}

/** The db.json files of a recording that has a database (for the SQL attacks). */
function dbFiles(dir: string): string[] {
  return SNAPSHOTS.filter((f) => f.endsWith('db.json') && filesOf(dir).includes(f));
}

/** Applies one attack and says what it did, or undefined when it does not fit this recording (nothing changed). */
type Mutation = (ctx: Ctx) => string | undefined;

/** Each class: its mutations. A case picks a class, then one of its mutations. */
const CLASSES: Record<string, Mutation[]> = {
  truncation: [
    (ctx) => {
      const file = someFile(ctx);
      const bytes = readFileSync(path.join(ctx.dir, file));
      const at = int(ctx.rng, bytes.length);
      writeFileSync(path.join(ctx.dir, file), bytes.subarray(0, at));
      if (file === EVENTS && ctx.rng() < 0.5) {
        reseal(ctx.dir);
        return `${file} cut at byte ${at}, resealed`;
      }
      return `${file} cut at byte ${at}`;
    },
    (ctx) => {
      // A killed writer: cut mid-line and marked incomplete, as a crash leaves it.
      const bytes = readFileSync(path.join(ctx.dir, EVENTS));
      const at = int(ctx.rng, bytes.length);
      writeFileSync(path.join(ctx.dir, EVENTS), bytes.subarray(0, at));
      const m = manifestOf(ctx.dir);
      m.status = 'incomplete';
      m.integrity = { events: 0 };
      writeManifest(ctx.dir, m);
      return `events.jsonl cut at ${at}, status incomplete, no hash`;
    },
    (ctx) => {
      const file = pick(ctx.rng, [EVENTS, 'manifest.json', ...SNAPSHOTS.filter((f) => filesOf(ctx.dir).includes(f))]);
      writeFileSync(path.join(ctx.dir, file), '');
      if (file === EVENTS) reseal(ctx.dir);
      return `${file} emptied`;
    },
  ],
  'byte-flip': [
    (ctx) => {
      const file = someFile(ctx);
      const bytes = readFileSync(path.join(ctx.dir, file));
      const n = 1 + int(ctx.rng, 8);
      const at: number[] = [];
      for (let i = 0; i < n && bytes.length > 0; i++) {
        const p = int(ctx.rng, bytes.length);
        bytes[p] = pick(ctx.rng, [0, 0x0a, 0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0xff, 0xc3, int(ctx.rng, 256)]);
        at.push(p);
      }
      writeFileSync(path.join(ctx.dir, file), bytes);
      const sealed = file === EVENTS && ctx.rng() < 0.7;
      if (sealed) reseal(ctx.dir);
      return `${file}: ${n} byte(s) changed at ${at.join(',')}${sealed ? ', resealed' : ''}`;
    },
  ],
  'wrong-type': [
    (ctx) => {
      const what = editEvent(ctx, (event, rng) => {
        const all = pathsOf(event, true);
        const at = pick(rng, all);
        const before = getAt(event, at);
        setAt(event, at, otherType(rng, before));
        return `${at.join('.')}: ${JSON.stringify(before)?.slice(0, 40)} -> ${JSON.stringify(getAt(event, at))}`;
      });
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const file = pick(ctx.rng, ['manifest.json', ...SNAPSHOTS.filter((f) => filesOf(ctx.dir).includes(f))]);
      const value = readJson(path.join(ctx.dir, file));
      const at = pick(ctx.rng, pathsOf(value, true));
      if (at.length === 0) return undefined;
      setAt(value, at, otherType(ctx.rng, getAt(value, at)));
      writeJson(path.join(ctx.dir, file), value);
      return `${file}: ${at.join('.')} -> ${JSON.stringify(getAt(value, at))?.slice(0, 40)}`;
    },
    (ctx) => {
      // A valid JSON line that is not an event at all.
      const list = lines(ctx.dir);
      const i = int(ctx.rng, list.length);
      list[i] = pick(ctx.rng, ['[]', '"event"', '42', 'null', '{}', '{"seq":"1"}', '{"__proto__":{"polluted":1}}']);
      writeLines(ctx.dir, list);
      reseal(ctx.dir);
      return `events.jsonl:${i + 1} = ${list[i]}`;
    },
  ],
  huge: [
    (ctx) => {
      const mb = 1 + int(ctx.rng, 8);
      const what = editEvent(ctx, (event, rng) => {
        const strings = pathsOf(event.payload ?? null, false).filter(
          (p) => typeof getAt(event.payload as Json, p) === 'string',
        );
        if (strings.length === 0) return undefined;
        const at = pick(rng, strings);
        setAt(event.payload as Json, at, pick(rng, ['x', '{"a":', '\u00e9', '\\n', '[']).repeat(mb * 2 ** 20));
        return `payload.${at.join('.')}: a ${mb} MiB string`;
      });
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const what = editEvent(ctx, (event, rng) => {
        const nums = pathsOf(event, false).filter((p) => typeof getAt(event, p) === 'number');
        if (nums.length === 0) return undefined;
        const at = pick(rng, nums);
        const v = pick(rng, [1e308, -1e308, 2 ** 53 + 2, -1, 0, 1e15, 4294967297, 5e-324]);
        setAt(event, at, v);
        return `${at.join('.')} = ${v}`;
      });
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const n = pick(ctx.rng, [10_000, 100_000, 400_000]);
      const what = spliceRaw(ctx, `[${Array.from({ length: n }, (_, i) => i % 7).join(',')}]`, `an array of ${n}`);
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      // Many events: the last one repeated with rising seq.
      const list = lines(ctx.dir);
      const last = JSON.parse(list.at(-1) as string) as { seq: number };
      const n = pick(ctx.rng, [5_000, 30_000]);
      for (let i = 1; i <= n; i++) list.push(JSON.stringify({ ...last, seq: last.seq + i }));
      writeLines(ctx.dir, list);
      reseal(ctx.dir);
      return `${n} copies of the last event appended`;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir);
      const field = pick(ctx.rng, ['name', 'id', 'createdAt']);
      m[field] = 'n'.repeat(2 ** 20 * (1 + int(ctx.rng, 4)));
      writeManifest(ctx.dir, m);
      return `manifest.${field}: a huge string`;
    },
    (ctx) => {
      const files = dbFiles(ctx.dir);
      if (files.length === 0) return undefined;
      const file = pick(ctx.rng, files);
      const db = readJson(path.join(ctx.dir, file)) as { tables: Array<{ rows: Json[] }> };
      const table = pick(ctx.rng, db.tables);
      const row = table.rows[0] ?? {};
      const n = pick(ctx.rng, [20_000, 100_000]);
      table.rows = Array.from({ length: n }, () => row);
      writeJson(path.join(ctx.dir, file), db);
      return `${file}: ${n} copies of a row`;
    },
  ],
  'deep-nesting': [
    (ctx) => {
      const depth = pick(ctx.rng, [150, 190, 199, 200, 201, 1000, 100_000]);
      const kind = pick(ctx.rng, ['array', 'object'] as const);
      const what = spliceRaw(ctx, nested(depth, kind), `${kind}s nested ${depth} deep`);
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const file = pick(ctx.rng, ['manifest.json', ...SNAPSHOTS.filter((f) => filesOf(ctx.dir).includes(f))]);
      const depth = pick(ctx.rng, [190, 199, 250, 50_000]);
      const value = readJson(path.join(ctx.dir, file));
      const leaves = pathsOf(value, false).filter((p) => p.length > 0);
      if (leaves.length === 0) return undefined;
      const at = pick(ctx.rng, leaves);
      setAt(value, at, '__DEEP__');
      writeFileSync(
        path.join(ctx.dir, file),
        JSON.stringify(value).replace('"__DEEP__"', nested(depth, pick(ctx.rng, ['array', 'object'] as const))),
      );
      return `${file}: ${at.join('.')} nested ${depth} deep`;
    },
    (ctx) => {
      // Deep but legal, where the engines walk: a model call's messages and a tool call's args.
      const depth = pick(ctx.rng, [100, 180, 199]);
      const what = editEvent(ctx, (event) => {
        const p = event.payload as { [key: string]: Json } | undefined;
        if (event.type === 'model.called' && p) {
          p.messages = JSON.parse(nested(depth - 3, 'object')) as Json;
          return `messages nested ${depth}`;
        }
        if (event.type === 'tool.called' && p) {
          p.args = JSON.parse(nested(depth - 2, 'object')) as Json;
          return `args nested ${depth}`;
        }
        return undefined;
      });
      reseal(ctx.dir);
      return what;
    },
  ],
  'path-traversal': [
    (ctx) => {
      const files = SNAPSHOTS.filter((f) => f.endsWith('fs.json') && filesOf(ctx.dir).includes(f));
      const file = files.length > 0 ? pick(ctx.rng, files) : 'snapshots/pre/fs.json';
      mkdirSync(path.dirname(path.join(ctx.dir, file)), { recursive: true });
      const fs = (files.length > 0 ? readJson(path.join(ctx.dir, file)) : { files: {} }) as {
        files: Record<string, Json>;
      };
      const entry = Object.values(fs.files)[0] ?? { mode: 420, size: 1, sha256: 'a'.repeat(64) };
      const evil = pick(ctx.rng, [
        `../../../../../..${ctx.t.canaryDir}/pwned`,
        `${ctx.t.canaryDir}/pwned`,
        'a/../../../pwned',
        '..',
        '.',
        'a/./b',
        'a//b',
        '~/.bashrc',
        'a\u0000b',
        'C:\\Windows\\x',
        `${'d/'.repeat(300)}f`,
      ]);
      fs.files[evil] = entry;
      writeJson(path.join(ctx.dir, file), fs);
      return `${file}: a file at ${JSON.stringify(evil.slice(0, 60))}`;
    },
    (ctx) => {
      const evil = pick(ctx.rng, [`../../..${ctx.t.canaryDir}/pwned`, `${ctx.t.canaryDir}/pwned`, '../x']);
      const list = lines(ctx.dir);
      const i = 1 + int(ctx.rng, list.length - 1);
      const prev = JSON.parse(list[i - 1] as string) as { seq: number; traceId: string; stepId: number; time: string };
      list.splice(
        i,
        0,
        JSON.stringify({
          seq: prev.seq,
          traceId: prev.traceId,
          stepId: prev.stepId,
          time: prev.time,
          type: 'fs.changed',
          payload: { path: evil, op: 'create', after: { mode: 420, size: 1, sha256: 'b'.repeat(64) } },
        }),
      );
      writeRenumbered(ctx.dir, list, i, prev.seq);
      return `fs.changed at ${evil}`;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir) as { [key: string]: Json } & { world?: { [key: string]: Json } };
      const which = int(ctx.rng, 6);
      if (which === 0) m.id = pick(ctx.rng, [`../../..${ctx.t.canaryDir}/x`, '../x', '..', '/tmp/x']);
      else if (which === 1) m.world = { ...(m.world ?? {}), fsRoot: ctx.t.canaryDir };
      else if (which === 2) (m.agent as { [key: string]: Json }).cwd = ctx.t.canaryDir;
      else if (which === 3) m.replayOf = `../../..${ctx.t.canaryDir}`;
      else if (which === 4) m.world = { ...(m.world ?? {}), fsRoot: path.dirname(ctx.t.outsideFile) };
      else m.world = { ...(m.world ?? {}), fsRoot: 'relative/../../root' };
      writeManifest(ctx.dir, m);
      return `manifest: ${['id', 'world.fsRoot = canary', 'agent.cwd = canary', 'replayOf', 'world.fsRoot = outside', 'relative fsRoot'][which]}`;
    },
    (ctx) => {
      // A body or a file entry naming its blob by a path instead of a hash.
      const evil = pick(ctx.rng, ['../../../../etc/passwd', `..${ctx.t.outsideFile}`, 'A'.repeat(64), 'zz']);
      const what = editEvent(ctx, (event) => {
        const text = JSON.stringify(event);
        const m = /"blob":"([0-9a-f]{64})"/.exec(text) ?? /"sha256":"([0-9a-f]{64})"/.exec(text);
        if (!m) return undefined;
        Object.assign(event, JSON.parse(text.replace(m[1] as string, evil)));
        return `a blob named ${JSON.stringify(evil)}`;
      });
      reseal(ctx.dir);
      return what;
    },
  ],
  symlink: [
    (ctx) => {
      const file = pick(ctx.rng, [
        'manifest.json',
        EVENTS,
        ...SNAPSHOTS,
        ...filesOf(ctx.dir).filter((f) => f.startsWith('blobs/')),
      ]);
      rmSync(path.join(ctx.dir, file), { force: true });
      mkdirSync(path.dirname(path.join(ctx.dir, file)), { recursive: true });
      const target = pick(ctx.rng, [
        ctx.t.outsideFile,
        '/etc/passwd',
        '/dev/zero',
        '/dev/urandom',
        '/proc/self/environ',
      ]);
      symlinkSync(target, path.join(ctx.dir, file));
      return `${file} -> ${target}`;
    },
    (ctx) => {
      const folder = pick(ctx.rng, ['snapshots', 'snapshots/pre', 'blobs', 'blobs/sha256']);
      rmSync(path.join(ctx.dir, folder), { recursive: true, force: true });
      mkdirSync(path.dirname(path.join(ctx.dir, folder)), { recursive: true });
      const target = pick(ctx.rng, [ctx.t.canaryDir, path.dirname(ctx.t.outsideFile), '/etc']);
      symlinkSync(target, path.join(ctx.dir, folder));
      return `${folder}/ -> ${target}`;
    },
    (ctx) => {
      // A leftover spool folder that is a link: whatever cleans it up must not follow it.
      symlinkSync(ctx.t.canaryDir, path.join(ctx.dir, '.spool'));
      return '.spool -> canary folder';
    },
  ],
  fifo: [
    (ctx) => {
      const file = pick(ctx.rng, ['manifest.json', EVENTS, ...SNAPSHOTS.slice(0, 2)]);
      rmSync(path.join(ctx.dir, file), { force: true });
      mkdirSync(path.dirname(path.join(ctx.dir, file)), { recursive: true });
      if (ctx.rng() < 0.8) execFileSync('mkfifo', [path.join(ctx.dir, file)]);
      else mkdirSync(path.join(ctx.dir, file));
      return `${file} is a FIFO or a folder`;
    },
    (ctx) => {
      const blobs = filesOf(ctx.dir).filter((f) => f.startsWith('blobs/'));
      if (blobs.length === 0) return undefined;
      const file = pick(ctx.rng, blobs);
      rmSync(path.join(ctx.dir, file));
      execFileSync('mkfifo', [path.join(ctx.dir, file)]);
      return `${file} is a FIFO`;
    },
  ],
  'recorded-sql': [
    (ctx) => {
      // SQL text where a recording keeps its readable DDL: never to be run.
      const files = dbFiles(ctx.dir);
      const file = files.length > 0 ? pick(ctx.rng, files) : 'snapshots/pre/db.json';
      mkdirSync(path.dirname(path.join(ctx.dir, file)), { recursive: true });
      const db = (files.length > 0 ? readJson(path.join(ctx.dir, file)) : { schemas: [], ddl: [], tables: [] }) as {
        ddl: string[];
        sequences?: Json;
      };
      const attack = pick(ctx.rng, [
        'DROP DATABASE IF EXISTS postgres',
        `COPY (SELECT 1) TO PROGRAM 'touch ${ctx.t.canaryDir}/copy-program'`,
        `CREATE TABLE x (a text); COPY x FROM PROGRAM 'id > ${ctx.t.canaryDir}/copy-from'`,
        'ALTER ROLE postgres PASSWORD NULL',
        'CREATE EXTENSION IF NOT EXISTS plpython3u',
        'DO $$BEGIN PERFORM pg_sleep(3600); END$$',
        `SELECT lo_export(lo_import('/etc/passwd'), '${ctx.t.canaryDir}/lo')`,
      ]);
      db.ddl = [...db.ddl.slice(0, int(ctx.rng, db.ddl.length + 1)), attack, ...db.ddl];
      // Half the cases look like an old recording (no description): the DDL text is all there is.
      if (ctx.rng() < 0.5) delete db.sequences;
      writeJson(path.join(ctx.dir, file), db);
      return `${file}: ddl holds ${attack.slice(0, 50)}`;
    },
    (ctx) => {
      // SQL where the description holds names and types.
      const files = dbFiles(ctx.dir);
      if (files.length === 0) return undefined;
      const file = pick(ctx.rng, files);
      const db = readJson(path.join(ctx.dir, file)) as {
        schemas: string[];
        tables: Array<{ name: string; schema: string; columns: Array<{ name: string; type: string; default?: Json }> }>;
      };
      const table = pick(ctx.rng, db.tables);
      const column = pick(ctx.rng, table.columns);
      const evil = pick(ctx.rng, [
        `x"; DROP DATABASE postgres; --`,
        `a'); COPY (SELECT 1) TO PROGRAM 'touch ${ctx.t.canaryDir}/n'; --`,
        `${'"'.repeat(20)}`,
        'pg_catalog',
      ]);
      const where = int(ctx.rng, 4);
      if (where === 0) column.type = `text); COPY (SELECT 1) TO PROGRAM 'touch ${ctx.t.canaryDir}/t'; --`.slice(0, 200);
      else if (where === 1) column.name = evil.slice(0, 63);
      else if (where === 2) column.default = { kind: 'value', value: `'); DROP TABLE ${table.name}; --` };
      else {
        table.schema = evil.slice(0, 63);
        db.schemas.push(table.schema);
      }
      writeJson(path.join(ctx.dir, file), db);
      return `${file}: ${['a column type', 'a column name', 'a column default', 'a schema name'][where]} carries SQL`;
    },
    (ctx) => {
      // Row values that would be SQL if pasted into text.
      const files = dbFiles(ctx.dir);
      if (files.length === 0) return undefined;
      const file = pick(ctx.rng, files);
      const db = readJson(path.join(ctx.dir, file)) as { tables: Array<{ rows: Array<Record<string, Json>> }> };
      const table = db.tables.find((t) => t.rows.length > 0);
      const row = table?.rows[0];
      if (!row) return undefined;
      const key = pick(ctx.rng, Object.keys(row));
      row[key] = pick(ctx.rng, [
        "'); DROP DATABASE postgres; --",
        "\\'; COPY (SELECT 1) TO PROGRAM 'true'; --",
        '\u0000',
        { nested: ['object'] },
        1e308,
      ]);
      writeJson(path.join(ctx.dir, file), db);
      return `${file}: a row value ${key} carries SQL or a wrong type`;
    },
  ],
  'recorded-command': [
    (ctx) => {
      const m = manifestOf(ctx.dir) as { agent: { command: Json; env?: Record<string, Json> } };
      const which = int(ctx.rng, 5);
      const env = m.agent.env ?? {};
      if (which === 0) m.agent.command = ['sh', '-c', `touch ${ctx.t.canaryDir}/command`];
      else if (which === 1) env.NODE_OPTIONS = `--require ${ctx.t.payloadModule}`;
      else if (which === 2) env.LD_PRELOAD = `${ctx.t.canaryDir}/x.so`;
      else if (which === 3) {
        env.BASH_ENV = ctx.t.payloadModule;
        env.NODE_PATH = ctx.t.canaryDir;
      } else env['x; touch pwned'] = 'y';
      m.agent.env = env;
      writeManifest(ctx.dir, m);
      return [
        'command runs sh -c touch',
        'env NODE_OPTIONS --require',
        'env LD_PRELOAD',
        'env BASH_ENV',
        'bad env name',
      ][which] as string;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir) as { world?: { db?: Record<string, Json> } };
      if (!m.world?.db) return undefined;
      m.world.db.env = pick(ctx.rng, ['NODE_OPTIONS', 'LD_PRELOAD', 'PATH', 'TAPEDECK_REPLAY_CONFIG']);
      writeManifest(ctx.dir, m);
      return `world.db.env = ${String(m.world.db.env)}`;
    },
  ],
  structure: [
    (ctx) => {
      const list = lines(ctx.dir);
      const op = int(ctx.rng, 6);
      const i = int(ctx.rng, list.length);
      const j = int(ctx.rng, list.length);
      if (op === 0) [list[i], list[j]] = [list[j] as string, list[i] as string];
      else if (op === 1) list.splice(i, 1);
      else if (op === 2) list.splice(i, 0, list[j] as string);
      else if (op === 3) list.reverse();
      else if (op === 4) list.splice(i, 0, '');
      else list.length = Math.max(1, i);
      writeLines(ctx.dir, list);
      reseal(ctx.dir);
      return `events: ${['two lines swapped', 'a line removed', 'a line duplicated', 'reversed', 'an empty line', 'cut to a prefix'][op]}`;
    },
    (ctx) => {
      const file = path.join(ctx.dir, EVENTS);
      const text = readFileSync(file, 'utf8');
      const op = int(ctx.rng, 4);
      if (op === 0) writeFileSync(file, text.replaceAll('\n', '\r\n'));
      else if (op === 1) writeFileSync(file, `\ufeff${text}`);
      else if (op === 2) writeFileSync(file, Buffer.concat([Buffer.from(text), Buffer.from([0xc3, 0x28, 0x0a])]));
      else writeFileSync(file, text.replace('}', '}\u0000'));
      reseal(ctx.dir);
      return `events: ${['CRLF', 'a BOM', 'invalid UTF-8 line', 'a NUL'][op]}`;
    },
  ],
  'hostile-values': [
    (ctx) => {
      // Schema-valid values that are wrong: URLs, statuses, ids, times.
      const what = editEvent(ctx, (event, rng) => {
        const p = event.payload as Record<string, Json> | undefined;
        if (!p) return undefined;
        if (event.type === 'http.exchange') {
          const req = p.request as Record<string, Json>;
          const choice = int(rng, 5);
          if (choice === 0) req.url = pick(rng, ['::::', 'file:///etc/passwd', 'http://[::1', '', 'javascript:1']);
          else if (choice === 1)
            (p.response as Record<string, Json> | undefined) &&
              ((p.response as Record<string, Json>).status = pick(rng, [0, 99, 600, 999999]));
          else if (choice === 2) req.headers = { 'x-a': 'b\r\nInjected: 1', '': 'empty' };
          else if (choice === 3) req.method = pick(rng, ['', 'GET /x HTTP/1.1\r\n', 'CONNECT']);
          else p.startedAt = 'not a time';
          return `http.exchange: ${['url', 'status', 'header injection', 'method', 'startedAt'][choice]}`;
        }
        if (event.type === 'step.started' || event.type === 'step.completed') {
          event.stepId = pick(rng, [0, -1, 999_999, 2_000_001]);
          return `stepId ${event.stepId}`;
        }
        if (event.type === 'model.called') {
          p.provider = pick(rng, ['../../x', 'nope', '']);
          p.api = pick(rng, ['responses', 'messages', 'x']);
          return `model.called provider ${p.provider}, api ${p.api}`;
        }
        if (event.type === 'nondeterminism') {
          p.values = pick(rng, [[], [-1e308], ['x'], Array.from({ length: 50_000 }, () => 0.5)]);
          return 'nondeterminism values';
        }
        return undefined;
      });
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir) as Record<string, Json>;
      const choice = int(ctx.rng, 5);
      if (choice === 0) m.status = 'incomplete';
      else if (choice === 1) m.prices = { models: { 'gpt-4.1-mini': { input: -1, output: 1e308 } } } as Json;
      else if (choice === 2) m.createdAt = '0000-00-00';
      else if (choice === 3) m.replayOf = 'openai-baseline';
      else m.integrity = { events: 1e9 };
      writeManifest(ctx.dir, m);
      return `manifest: ${['status incomplete', 'prices', 'createdAt', 'replayOf', 'integrity count'][choice]}`;
    },
  ],
  'proto-keys': [
    (ctx) => {
      // Keys that would reach Object.prototype through `target[key] = …` or `target[a][b] = …`.
      const key = pick(ctx.rng, ['__proto__', 'constructor', 'prototype']);
      const inner: Json = { polluted: 'yes', toString: 'x', hasOwnProperty: 1 };
      const what = editEvent(ctx, (event, rng) => {
        const objects = pathsOf(event, true).filter((p) => {
          const v = getAt(event, p);
          return v !== null && typeof v === 'object' && !Array.isArray(v);
        });
        const at = objects.length > 0 ? pick(rng, objects) : [];
        const target = (at.length === 0 ? event : getAt(event, at)) as Record<string, Json>;
        // Through raw text: JSON.stringify of an own __proto__ key is what JSON.parse gives back.
        Object.defineProperty(target, key, { value: inner, enumerable: true, configurable: true, writable: true });
        return `${at.join('.') || '(root)'}.${key} = {polluted…}`;
      });
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir) as Record<string, Json>;
      const where = int(ctx.rng, 4);
      const poison = JSON.parse(
        '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}',
      ) as Json;
      if (where === 0) (m.agent as Record<string, Json>).env = poison;
      else if (where === 1) (m.runtime as Record<string, Json>).sdkVersions = poison;
      else if (where === 2) m.prices = { models: poison } as Json;
      else (m.replay as Json) = { mode: 'exact', overrides: poison };
      writeManifest(ctx.dir, m);
      return `manifest: ${['agent.env', 'runtime.sdkVersions', 'prices.models', 'replay.overrides'][where]} holds __proto__ and constructor keys`;
    },
  ],
  metacharacters: [
    (ctx) => {
      // SQL and shell text in every string of one event (values, not keys): data, never run.
      const evil = [
        `'; DROP TABLE x; --`,
        `$(touch ${ctx.t.canaryDir}/dollar)`,
        `\`touch ${ctx.t.canaryDir}/tick\``,
        `"; touch ${ctx.t.canaryDir}/quote #`,
        `x' OR '1'='1`,
        `%s%s%n{{7*7}}\${7*7}`,
        `a\r\nSet-Cookie: x=1`,
      ];
      const what = editEvent(ctx, (event, rng) => {
        const strings = pathsOf(event, false).filter((p) => typeof getAt(event, p) === 'string' && p[0] !== 'type');
        if (strings.length === 0) return undefined;
        for (const at of strings) setAt(event, at, pick(rng, evil));
        return `${strings.length} strings carry SQL and shell text`;
      });
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir) as Record<string, Json>;
      const evil = `$(touch ${ctx.t.canaryDir}/m); '; DROP DATABASE postgres; --`;
      for (const at of pathsOf(m, false)) {
        const v = getAt(m, at);
        if (
          typeof v === 'string' &&
          !['format', 'createdAt', 'status', 'id', 'seal', 'integrity'].includes(String(at[0]))
        )
          setAt(m, at, `${v}${evil}`);
      }
      writeManifest(ctx.dir, m);
      return 'manifest: every free-text string carries shell and SQL text';
    },
  ],
  'odd-numbers': [
    (ctx) => {
      // Numbers as text a lenient parser would take, and numbers JSON.parse makes infinite.
      const raw = pick(ctx.rng, ['"NaN"', '"Infinity"', '"-0"', '"1e999"', '1e999', '-1e999', '-0', '"0x10"', '""']);
      const marker = `__NUM_${int(ctx.rng, 1e9)}__`;
      const what = editEvent(ctx, (event, rng) => {
        const nums = pathsOf(event, false).filter((p) => typeof getAt(event, p) === 'number');
        if (nums.length === 0) return undefined;
        const at = pick(rng, nums);
        setAt(event, at, marker);
        return `${at.join('.')} = ${raw}`;
      });
      const file = path.join(ctx.dir, EVENTS);
      writeFileSync(file, readFileSync(file, 'utf8').replace(JSON.stringify(marker), raw));
      reseal(ctx.dir);
      return what;
    },
    (ctx) => {
      const m = manifestOf(ctx.dir) as Record<string, Json>;
      const which = int(ctx.rng, 3);
      const raw = pick(ctx.rng, ['1e999', '-1', '"NaN"', '1.5', '9007199254740993']);
      const text = JSON.stringify(m, null, 2);
      const out =
        which === 0
          ? text.replace(/"events": \d+/, `"events": ${raw}`)
          : which === 1
            ? text.replace(
                /"createdAt": "[^"]*"/,
                `"createdAt": ${pick(ctx.rng, ['"2026-02-31T00:00:00.000Z"', '"0000-00-00"', '"yesterday"', '0'])}`,
              )
            : text.replace(/"status": "[^"]*"/, `"status": ${pick(ctx.rng, ['"COMPLETE"', '""', 'null', '1'])}`);
      writeFileSync(path.join(ctx.dir, 'manifest.json'), out);
      return `manifest: ${['integrity.events', 'createdAt', 'status'][which]} odd`;
    },
  ],
  encoding: [
    (ctx) => {
      // Bytes that are not UTF-8, or escapes that are not a character, inside a string of one event.
      const list = lines(ctx.dir);
      const i = int(ctx.rng, list.length);
      const line = list[i] as string;
      // Inside free text (a message, a body, a name), where a value reaches the engines and the warehouse.
      const free = [...line.matchAll(/"(?:text|content|name|url|path|data|arguments|system|model)":"/g)];
      const hit = free.length > 0 ? pick(ctx.rng, free) : undefined;
      const at = hit ? (hit.index as number) + hit[0].length - 3 : line.indexOf('":"');
      if (at === -1) return undefined;
      const insert = pick(ctx.rng, [
        Buffer.from([0xff, 0xfe]),
        Buffer.from([0xc3]),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('\\ud800'),
        Buffer.from('\\udfff\\ud800'),
        Buffer.from('\\u0000'),
      ]);
      const before = Buffer.from(line.slice(0, at + 3));
      const out = list.map((l) => Buffer.from(`${l}\n`));
      out[i] = Buffer.concat([before, insert, Buffer.from(`${line.slice(at + 3)}\n`)]);
      writeFileSync(path.join(ctx.dir, EVENTS), Buffer.concat(out));
      reseal(ctx.dir);
      return `events.jsonl:${i + 1}: ${insert.toString('hex')} inside a string`;
    },
  ],
  blobs: [
    (ctx) => {
      const blobs = filesOf(ctx.dir).filter((f) => f.startsWith('blobs/'));
      if (blobs.length === 0) return undefined;
      const file = pick(ctx.rng, blobs);
      rmSync(path.join(ctx.dir, file));
      const op = int(ctx.rng, 3);
      if (op === 0) mkdirSync(path.join(ctx.dir, file));
      else if (op === 1)
        writeFileSync(path.join(ctx.dir, file), readFileSync(path.join(ctx.dir, EVENTS)).subarray(0, 10));
      return `${file} ${['is a folder', 'holds other bytes', 'is missing'][op]}`;
    },
    (ctx) => {
      // An event naming a blob the recording does not hold.
      const what = editEvent(ctx, (event) => {
        const text = JSON.stringify(event);
        const m = /"(?:blob|sha256)":"([0-9a-f]{64})"/.exec(text);
        if (!m) return undefined;
        Object.assign(event, JSON.parse(text.replace(m[1] as string, 'e'.repeat(64))));
        return 'names a blob that is not there';
      });
      reseal(ctx.dir);
      return what;
    },
  ],
  contradictions: [
    (ctx) => {
      // A path that is a file and a folder at once: in a snapshot, or made so by an fs.changed event.
      const entry = (text: string): Json => ({
        mode: 420,
        size: Buffer.byteLength(text),
        sha256: createHash('sha256').update(text).digest('hex'),
        text,
      });
      const where = int(ctx.rng, 3);
      if (where < 2) {
        const file = where === 0 ? 'snapshots/pre/fs.json' : 'snapshots/post/fs.json';
        mkdirSync(path.dirname(path.join(ctx.dir, file)), { recursive: true });
        const fs = (filesOf(ctx.dir).includes(file) ? readJson(path.join(ctx.dir, file)) : { files: {} }) as {
          files: Record<string, Json>;
        };
        const [dir, under] = pick(ctx.rng, [
          ['a', 'a/b'],
          ['notes', 'notes/deep/x.txt'],
        ] as const);
        fs.files[dir] = entry('file');
        fs.files[under] = entry('under a file');
        writeJson(path.join(ctx.dir, file), fs);
        return `${file}: "${dir}" a file and "${under}" under it`;
      }
      const list = lines(ctx.dir);
      const i = 1 + int(ctx.rng, list.length - 1);
      const prev = JSON.parse(list[i - 1] as string) as { seq: number; traceId: string; stepId: number; time: string };
      const change = (p: string) =>
        JSON.stringify({
          seq: 0,
          traceId: prev.traceId,
          stepId: prev.stepId,
          time: prev.time,
          type: 'fs.changed',
          payload: { path: p, op: 'create', after: entry(p) },
        });
      list.splice(i, 0, change('x'), change('x/y'));
      writeRenumbered(ctx.dir, list, i, prev.seq);
      return `fs.changed: "x" a file and "x/y" under it in step ${prev.stepId}`;
    },
    (ctx) => {
      // Two steps with one id: a later step renumbered as an earlier one, or a step.started repeated.
      const list = lines(ctx.dir);
      const events = list.map((l) => JSON.parse(l) as { seq: number; stepId: number; type: string });
      const steps = [...new Set(events.filter((e) => e.type === 'step.started').map((e) => e.stepId))];
      if (steps.length < 2) return undefined;
      const a = int(ctx.rng, steps.length - 1);
      const from = steps[a + 1 + int(ctx.rng, steps.length - a - 1)] as number;
      const to = steps[a] as number;
      if (int(ctx.rng, 2) === 0) {
        for (const [j, e] of events.entries()) if (e.stepId === from) list[j] = JSON.stringify({ ...e, stepId: to });
        writeLines(ctx.dir, list);
        reseal(ctx.dir);
        return `step ${from}'s events renumbered as step ${to}`;
      }
      const started = events.findIndex((e) => e.type === 'step.started' && e.stepId === to);
      const last = events.at(-1) as { seq: number };
      list.push(JSON.stringify({ ...events[started], seq: last.seq + 1 }));
      writeLines(ctx.dir, list);
      reseal(ctx.dir);
      return `step ${to}'s step.started repeated at the end`;
    },
  ],
  'unknown-kinds': [
    (ctx) => {
      const what = editEvent(ctx, (event, rng) => {
        const p = event.payload as Record<string, Json> | undefined;
        const choice = int(rng, 4);
        if (choice === 0) event.type = pick(rng, ['model.streamed', 'TOOL.CALLED', '', 'constructor', '__proto__']);
        else if (choice === 1 && p && 'stateType' in p) p.stateType = pick(rng, ['EXEC', 'observe', '']);
        else if (choice === 2 && p && 'kind' in p) p.kind = pick(rng, ['rpc', 'constructor', 'toString']);
        else if (choice === 3) event.extra = 'unknown field';
        else return undefined;
        return `${['type', 'stateType', 'kind', 'an extra field'][choice]} unknown`;
      });
      reseal(ctx.dir);
      return what;
    },
  ],
};

export const KINDS = Object.keys(CLASSES);

/**
 * Makes `count` cases under `into` (one folder each: <n>/rec), cycling over the classes so each
 * gets its share, from the given base recordings.
 * @example makeHostileCases({ seed: 21, count: 300, bases, into: tmp, targets })
 */
export function makeHostileCases(options: {
  seed: number;
  count: number;
  bases: string[];
  into: string;
  targets: Targets;
  first?: number;
}): HostileCase[] {
  const out: HostileCase[] = [];
  const first = options.first ?? 0;
  for (let n = first; n < first + options.count; n++) {
    // One stream per case: a case is the same whatever the count.
    const rng = seeded(options.seed * 100_003 + n);
    const kind = KINDS[n % KINDS.length] as string;
    const base = pick(rng, options.bases);
    const dir = path.join(options.into, String(n).padStart(4, '0'), 'rec');
    mkdirSync(path.dirname(dir), { recursive: true });
    cpSync(base, dir, { recursive: true });
    // A mutation that does not fit this recording (no database, no blob) gives way to another of its class.
    let what: string | undefined;
    for (let tries = 0; what === undefined && tries < 8; tries++)
      what = pick(rng, CLASSES[kind] as Mutation[])({ rng, dir, t: options.targets });
    out.push({ n, kind, what: what ?? 'unchanged (no mutation of its class fits)', base: path.basename(base), dir });
  }
  return out;
}
