// Seeded fuzz of every command that takes a recording. Real recordings (recordings/examples,
// recordings/support) are mutated by test/support/hostile-recordings.ts, a fixed number of cases of
// each class, and each case goes through verify, ledger, eval, bisect, diff, ingest and query (an
// embedded warehouse in a temp folder), export, push to and pull from a folder store (the case
// itself served by a hostile store), the TUI's loader, and a few through replay (`--isolation none`
// and the default). In process, as the CLI runs them; the CLI's own printing is checked once.
// For every run: exit 0, 1 or 2; a refusal is one `tapedeck:` line naming the recording's file,
// never a stack trace, "TypeError" or "undefined"; under 30 s; nothing written outside the
// command's own output; the sentinel file, folder and warehouse table unchanged; Object.prototype
// untouched; no process left behind.
//
// Then truncation at any byte (fast-check, seeded): events.jsonl, manifest.json, a snapshot or a
// blob cut where a killed writer or a short copy would leave it. verify says which file, which line
// and what is lost; an unclosed recording is read up to its last whole line with a warning by
// every reading command, a closed one that lost bytes is refused by every command (docs/recording-format.md).
// TAPEDECK_FUZZ_SEED (29) and TAPEDECK_FUZZ_PER_CLASS (2) scale it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTapedeckError, RecordingError, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { root, tapedeck } from '../cli/run-cli.js';
import { type HostileCase, KINDS, makeHostileCases, type Targets } from '../support/hostile-recordings.js';
import { loadAsTui, type Run, runInProcess } from '../support/in-process-cli.js';
import { ownChildren } from '../support/processes.js';

const SEED = Number(process.env.TAPEDECK_FUZZ_SEED ?? 29);
const PER_CLASS = Number(process.env.TAPEDECK_FUZZ_PER_CLASS ?? 2);
const LIMIT_MS = 30_000;
const CONTRACT = path.join(root, 'examples/contracts/book-flight.yaml');
const BASELINE = path.join(root, 'recordings/examples/openai-baseline');
const BASES = [
  ...readdirSync(path.join(root, 'recordings/examples')).map((n) => path.join(root, 'recordings/examples', n)),
  ...readdirSync(path.join(root, 'recordings/support')).map((n) => path.join(root, 'recordings/support', n)),
];
/** What a refusal or a warning must never show: a JavaScript fault, a stack, a value that was not there. */
const FAULT =
  /^\s+at .+(?:\(|:\d+)|\b(?:TypeError|RangeError|ReferenceError|SyntaxError|AssertionError)\b|\bundefined\b|\bNaN\b|node:internal|Maximum call stack|\[object Object\]/m;

let tmp: string;
let targets: Targets;
let cases: HostileCase[] = [];
let sentinelText: string;
let childrenBefore: string[];
const problems: string[] = [];
const counts = new Map<string, number>();
const spent = new Map<string, number>();

/** Everything under `dir`, as relative paths (a link or a FIFO listed, never followed or opened). */
function tree(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel === '' ? entry.name : `${rel}/${entry.name}`;
    out.push(p);
    if (entry.isDirectory()) out.push(...tree(dir, p));
  }
  return out;
}

const readable = (dir: string): Promise<boolean> =>
  readRecording(dir).then(
    () => true,
    () => false,
  );

/** Every path under `dir` with its type and size: what a command must leave as it found it. */
function listing(dir: string): string[] {
  return tree(dir).map((p) => {
    const st = lstatSync(path.join(dir, p));
    return `${p} ${st.isSymbolicLink() ? 'link' : st.isFIFO() ? 'fifo' : st.isDirectory() ? 'dir' : st.size}`;
  });
}

/** What is wrong with one run's exit and output, or undefined. */
function runProblem(command: string, run: Run, names: string[], limitMs: number): string | undefined {
  if (run.code === 'hang' || run.ms > limitMs) return `no answer within ${limitMs} ms (${run.ms} ms)`;
  if (run.crash) return `crashed: ${run.crash.slice(0, 600)}`;
  if (run.code !== 0 && run.code !== 1 && run.code !== 2) return `exit ${run.code}`;
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  // Ours: `tapedeck: …` lines, and a command's own progress (`bisect: [1/4] step 6: …`).
  const own = `${command.split(' ')[0]}: `;
  if (lines.some((l) => !l.startsWith('tapedeck: ') && !l.startsWith(own)))
    return `stderr not ours: ${run.stderr.slice(0, 600)}`;
  if (FAULT.test(run.stderr)) return `a fault shows: ${run.stderr.slice(0, 600)}`;
  if (run.code !== 2) return undefined;
  const errors = lines.filter((l) => !l.startsWith('tapedeck: warning: '));
  if (errors.length !== 1) return `refused in ${errors.length} lines: ${run.stderr.slice(0, 600)}`;
  // The recording's file is named (its folder, or the copy a pull made of it).
  if (!names.some((n) => (errors[0] as string).includes(n)))
    return `the refusal names no file of the recording: ${errors[0]}`;
  return undefined;
}

/** Judges one run of one command on one case, and what it may have harmed; a problem is kept with what it was. */
function judge(command: string, c: HostileCase, run: Run, names: string[], limitMs = LIMIT_MS): void {
  const where = `case ${c.n} [${c.kind}: ${c.what.slice(0, 120)}] from ${c.base}, ${command}`;
  const outcome = run.code === 'hang' || run.ms > limitMs ? 'hang' : run.crash ? 'crash' : `exit ${run.code}`;
  counts.set(`${command} ${outcome}`, (counts.get(`${command} ${outcome}`) ?? 0) + 1);
  spent.set(command, (spent.get(command) ?? 0) + run.ms);
  const problem = runProblem(command, run, names, limitMs);
  if (problem) problems.push(`${where}: ${problem}`);
  if (Object.keys(Object.prototype).length > 0 || ({} as { polluted?: unknown }).polluted !== undefined) {
    for (const key of Object.keys(Object.prototype)) delete (Object.prototype as Record<string, unknown>)[key];
    problems.push(`${where}: Object.prototype was polluted`);
  }
  const canary = readdirSync(targets.canaryDir);
  if (canary.length > 0) {
    for (const name of canary) rmSync(path.join(targets.canaryDir, name), { recursive: true, force: true });
    problems.push(`${where}: wrote ${canary.join(', ')} into the canary folder`);
  }
  if (readFileSync(targets.outsideFile, 'utf8') !== sentinelText) problems.push(`${where}: the sentinel file changed`);
  if (run.stdout.includes(targets.outsideCanary) || run.stderr.includes(targets.outsideCanary))
    problems.push(`${where}: the sentinel file outside was read into the output`);
}

beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-fuzz-'));
  for (const folder of ['outside', 'canary', 'out', 'stores', 'tmp']) mkdirSync(path.join(tmp, folder));
  targets = {
    outsideFile: path.join(tmp, 'outside', 'secret.json'),
    outsideCanary: `OUTSIDE-${SEED}-${process.pid}`,
    canaryDir: path.join(tmp, 'canary'),
    payloadModule: path.join(tmp, 'outside', 'payload.cjs'),
  };
  sentinelText = `{"canary":"${targets.outsideCanary}"}\n`;
  writeFileSync(targets.outsideFile, sentinelText);
  writeFileSync(
    targets.payloadModule,
    `require('node:fs').writeFileSync(${JSON.stringify(path.join(targets.canaryDir, 'loaded'))}, 'x');\n`,
  );
  childrenBefore = ownChildren();
  // One case of each class in turn, PER_CLASS times over.
  cases = makeHostileCases({
    seed: SEED,
    count: KINDS.length * PER_CLASS,
    bases: BASES,
    into: path.join(tmp, 'cases'),
    targets,
  });
});

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('seeded hostile recordings through every command that takes one', () => {
  const warehouse = () => path.join(tmp, 'warehouse');

  it('refuse in one line or read, within bounds, harming nothing', async () => {
    problems.length = 0;
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = path.join(tmp, 'tmp');
    let peakRss = 0;
    const accepted: HostileCase[] = [];
    const started = Date.now();
    const casesBefore = listing(path.join(tmp, 'cases'));
    try {
      // A table the SQL text in recordings would aim at: never touched by ingesting them.
      const first = await runInProcess(['ingest', BASELINE, '--db', warehouse()], LIMIT_MS);
      expect(first.code, first.stderr).toBe(0);
      const made = await runInProcess(
        ['query', 'CREATE TABLE sentinel (v text); INSERT INTO sentinel VALUES ($$kept$$)', '--db', warehouse()],
        LIMIT_MS,
      );
      expect(made.code, made.stderr).toBe(0);
      for (const c of cases) {
        const out = path.join(tmp, 'out', String(c.n));
        const names = [c.dir];
        const runs: Array<[string, string[]]> = [
          ['verify', ['verify', c.dir]],
          ['ledger', ['ledger', c.dir, '--json']],
          ['eval', ['eval', c.dir, '--contract', CONTRACT]],
          ['bisect', ['bisect', c.dir]],
          ['diff', ['diff', BASELINE, c.dir]],
          ['export', ['export', c.dir, ['--otlp', '--har', '--msw'][c.n % 3] as string, '--out', `${out}.export`]],
          ['push', ['push', c.dir, `file://${path.join(tmp, 'stores', `push-${c.n}`)}`]],
        ];
        for (const [command, args] of runs) judge(command, c, await runInProcess(args, LIMIT_MS), names);
        // Ingest opens the warehouse (a second or two): a case the reader refuses is tried alone, the
        // ones it accepts all at once below.
        if (await readable(c.dir)) accepted.push(c);
        else judge('ingest', c, await runInProcess(['ingest', c.dir, '--db', warehouse()], LIMIT_MS), names);
        // Pull: the case as a folder store serves it (links and FIFOs kept as they are: cp -a).
        const store = path.join(tmp, 'stores', `hostile-${c.n}`);
        mkdirSync(store);
        execFileSync('cp', ['-a', c.dir, path.join(store, 'case')]);
        const pulled = await runInProcess(['pull', `file://${store}/case`, '--out', `${out}.pulled`], LIMIT_MS);
        judge('pull', c, pulled, [`${out}.pulled`, store]);
        if (pulled.code !== 0 && readdirSync(path.join(tmp, 'out')).includes(`${c.n}.pulled`))
          problems.push(`case ${c.n}, pull: a refused pull left ${out}.pulled behind`);
        judge('tui loader', c, await loadAsTui(c.dir, CONTRACT), names);
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }
      const all: HostileCase = { n: -1, kind: 'accepted', what: `${accepted.length} cases`, base: '', dir: tmp };
      judge(
        'ingest',
        all,
        await runInProcess(['ingest', ...accepted.map((c) => c.dir), '--db', warehouse()], LIMIT_MS),
        [tmp],
      );
      const kept = await runInProcess(['query', 'SELECT v FROM sentinel', '--db', warehouse(), '--json'], LIMIT_MS);
      expect(kept.code, kept.stderr).toBe(0);
      expect(JSON.parse(kept.stdout)).toEqual([{ v: 'kept' }]);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    console.log(
      `fuzz (seed ${SEED}): ${cases.length} cases × 11 commands in ${Math.round((Date.now() - started) / 1000)} s, peak RSS ${Math.round(peakRss / 2 ** 20)} MiB\n  ${[
        ...counts,
      ]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}\n  ms by command: ${[...spent].map(([k, ms]) => `${k} ${ms}`).join(', ')}`,
    );
    expect(problems).toEqual([]);
    // Bounded memory: the largest case holds an 8 MiB string and 400 000-element arrays.
    expect(peakRss).toBeLessThan(2.5 * 2 ** 30);
    // Written nowhere but the commands' own outputs: the stores, out/, the warehouse.
    const written = tree(tmp).filter(
      (p) => !/^(?:cases|stores|out|warehouse|outside|canary|tmp)(?:\/|$)/.test(p) || p.startsWith('outside/'),
    );
    expect(written.sort()).toEqual(['outside/payload.cjs', 'outside/secret.json']);
    expect(listing(path.join(tmp, 'cases'))).toEqual(casesBefore);
    expect(readdirSync(path.join(tmp, 'tmp'))).toEqual([]);
    expect(ownChildren()).toEqual(childrenBefore);
  }, 600_000);

  it('replays accepted hostile cases, with --isolation none and the default, leaving nothing behind', async () => {
    problems.length = 0;
    const accepted: HostileCase[] = [];
    for (const c of cases) {
      if (!['metacharacters', 'proto-keys', 'odd-numbers', 'recorded-command', 'path-traversal'].includes(c.kind))
        continue;
      if (await readable(c.dir)) accepted.push(c);
    }
    expect(accepted.length).toBeGreaterThan(0);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = path.join(tmp, 'tmp');
    try {
      // One case with the preload alone (--isolation none), another in the default (the OS sandbox here).
      const runs: Array<[HostileCase, 'none' | 'auto']> = [
        [accepted[0] as HostileCase, 'none'],
        [(accepted[1] ?? accepted[0]) as HostileCase, 'auto'],
      ];
      for (const [i, [c, isolation]] of runs.entries()) {
        const started = Date.now();
        const agent = c.base.startsWith('anthropic')
          ? 'examples/agents/anthropic-agent.mjs'
          : c.base.startsWith('openai')
            ? 'examples/agents/openai-agent.mjs'
            : 'examples/support/agent.mjs';
        let run: Run;
        try {
          // Trusted on purpose (its recorded env applied): even so nothing gets out of the sandbox.
          await replay({
            recording: c.dir,
            mode: 'exact',
            out: path.join(tmp, 'out', `replay-${i}-${isolation}`),
            command: [process.execPath, path.join(root, agent)],
            trustRecording: true,
            isolation,
            stdio: 'pipe',
            timeoutMs: 120_000,
          });
          run = { code: 0, stdout: '', stderr: '', ms: Date.now() - started };
        } catch (error) {
          run = isTapedeckError(error)
            ? { code: 2, stdout: '', stderr: `tapedeck: ${error.message}\n`, ms: Date.now() - started }
            : { code: 1, stdout: '', stderr: '', ms: Date.now() - started, crash: String((error as Error).stack) };
        }
        // A replay runs the agent too (a few seconds alone, far more on a loaded machine).
        judge(`replay --isolation ${isolation}`, c, run, [c.dir], 120_000);
      }
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    expect(problems).toEqual([]);
    expect(readdirSync(path.join(tmp, 'tmp'))).toEqual([]);
    expect(ownChildren()).toEqual(childrenBefore);
  }, 600_000);
});

describe('truncation at any byte', () => {
  /** A copy of the baseline, cut: a file at a byte, the manifest left closed or made what a killed writer leaves. */
  function cutCopy(n: number, file: string, at: number, killed: boolean): string {
    const dir = path.join(tmp, 'cut', String(n));
    cpSync(BASELINE, dir, { recursive: true });
    const full = path.join(dir, file);
    writeFileSync(full, readFileSync(full).subarray(0, at));
    if (killed) {
      const m = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
      m.status = 'incomplete';
      m.integrity = { events: 0 }; // what the writer has written before it closes
      writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(m, null, 2));
    }
    return dir;
  }

  const events = readFileSync(path.join(BASELINE, 'events.jsonl'));
  const lineEnds = [...events.entries()].filter(([, b]) => b === 10).map(([i]) => i + 1);
  const total = lineEnds.length;
  /** How many whole lines the first `at` bytes hold, and how many bytes of the next. */
  const wholeLines = (at: number) => {
    const whole = lineEnds.filter((end) => end <= at).length;
    return { whole, partial: at - (whole === 0 ? 0 : (lineEnds[whole - 1] as number)) };
  };
  const snapshotFiles = ['manifest.json', 'snapshots/pre/fs.json', 'snapshots/pre/db.json', 'snapshots/post/db.json'];
  const blobFiles = tree(BASELINE)
    .filter((p) => p.startsWith('blobs/sha256/') && p.split('/').length === 4)
    .slice(0, 3);

  it('verify says which line and what is lost; a killed writer is read up to its last whole line', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: events.length - 1 }), fc.boolean(), async (at, killed) => {
        const dir = cutCopy(n++, 'events.jsonl', at, killed);
        const { whole, partial } = wholeLines(at);
        if (killed) {
          // Read up to the loss, with a warning naming the cut line.
          const rec = await readRecording(dir);
          expect(rec.events).toHaveLength(whole);
          if (partial > 0)
            expect(rec.warnings).toContain(
              `events.jsonl:${whole + 1}: ignored a cut-off last line (${partial} bytes without a newline): the writer stopped mid-write`,
            );
          expect(rec.warnings.join('\n')).toMatch(/the recording is incomplete/);
          return;
        }
        const error = await readRecording(dir).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(RecordingError);
        const e = error as RecordingError;
        const left = whole === 0 ? 'no whole event is left' : `${whole} whole event${whole === 1 ? '' : 's'} left`;
        const lost = `${total - whole} of the ${total} events manifest.json counts are lost`;
        if (partial > 0) {
          expect(e.line).toBe(whole + 1);
          expect(e.problem).toMatch(new RegExp(`^is cut off ${partial} bytes into line ${whole + 1}: ${left}`));
        } else expect(e.problem).toMatch(new RegExp(`^ends after line ${whole}: ${left}`));
        expect(e.problem).toContain(lost);
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('a cut manifest, snapshot or blob is refused naming the file, never read as something else', async () => {
    let n = 1000;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...snapshotFiles, ...blobFiles),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (file, where) => {
          const size = statSync(path.join(BASELINE, file)).size;
          const at = Math.min(size - 1, Math.floor(where * size));
          const dir = cutCopy(n++, file, at, false);
          const text = readFileSync(path.join(BASELINE, file), 'utf8').slice(0, at);
          const error = await readRecording(dir).then(
            () => undefined,
            (e: unknown) => e,
          );
          if (file.endsWith('.json') && text.trimEnd() === readFileSync(path.join(BASELINE, file), 'utf8').trimEnd()) {
            expect(error).toBeUndefined(); // only the trailing newline went
            return;
          }
          expect(error).toBeInstanceOf(RecordingError);
          const e = error as RecordingError;
          expect(e.file).toBe(file);
          expect(e.message).not.toContain('\n');
          if (file.endsWith('.json')) expect(e.problem).toMatch(/^is cut off: it ends mid-value after \d+ bytes/);
          else expect(e.problem).toMatch(/^content hashes to [0-9a-f]{64}, not to its name/);
        },
      ),
      { seed: SEED, numRuns: 40 },
    );
  });

  it('every reading command treats a cut recording alike: reads a killed writer with a warning, refuses a cut closed one', async () => {
    const at = (lineEnds[Math.floor(total / 2)] as number) + 20; // 20 bytes into a line, mid-run
    const { whole } = wholeLines(at);
    const killed = cutCopy(9000, 'events.jsonl', at, true);
    const closed = cutCopy(9001, 'events.jsonl', at, false);
    for (const [command, extra] of [
      ['verify', []],
      ['ledger', []],
      ['eval', ['--contract', CONTRACT]],
      ['bisect', []],
      ['export', ['--har', '--out', path.join(tmp, 'out', 'cut.har')]],
    ] as Array<[string, string[]]>) {
      const read = await runInProcess([command, killed, ...extra], LIMIT_MS);
      expect(read.crash).toBeUndefined();
      expect([0, 1], `${command}: ${read.stderr}`).toContain(read.code);
      expect(`${read.stdout}${read.stderr}`, command).toContain(
        `events.jsonl:${whole + 1}: ignored a cut-off last line`,
      );
      const refused = await runInProcess([command, closed, ...extra], LIMIT_MS);
      const said = `${closed}/events.jsonl:${whole + 1}: field (line): is cut off 20 bytes into line ${whole + 1}`;
      expect(refused.code, `${command}: ${refused.stderr}`).toBe(command === 'verify' ? 1 : 2);
      expect(`${refused.stdout}${refused.stderr}`, command).toContain(said);
    }
    // The CLI's own printing, once: one line, exit 2, the same words.
    const cli = await tapedeck(['ledger', closed]);
    expect(cli.code).toBe(2);
    expect(cli.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^tapedeck: .*events\.jsonl:\d+: field \(line\): is cut off 20 bytes into line \d+: /),
    ]);
  });
});

describe('a 50 MB value where the engines read text', () => {
  it('eval and bisect answer within 30 s and bounded memory', async () => {
    // A tool's result holds 50 MB of numbers, ids, amounts and emails: every one a fact the outcome
    // and belief engines would index (a row value or a message reads through the same index).
    const dir = path.join(tmp, 'fifty-mb');
    cpSync(path.join(root, 'recordings/support/careful'), dir, { recursive: true });
    const big = 'ab12 cd@x.io 42.5 USD O-77 '.repeat(2_000_000);
    const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n').slice(0, -1);
    const done = new Set<string>();
    const edited = lines.map((line) => {
      const event = JSON.parse(line) as { type: string; payload: Record<string, unknown> };
      if (done.has(event.type)) return line;
      if (event.type === 'tool.called') event.payload.result = big;
      else return line;
      done.add(event.type);
      return JSON.stringify(event);
    });
    const bytes = Buffer.from(`${edited.join('\n')}\n`);
    writeFileSync(path.join(dir, 'events.jsonl'), bytes);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    manifest.integrity = { events: edited.length, eventsSha256: createHash('sha256').update(bytes).digest('hex') };
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    problems.length = 0;
    const c: HostileCase = { n: -2, kind: 'huge', what: 'a 50 MB tool result', base: 'careful', dir };
    for (const args of [
      ['eval', dir, '--contract', CONTRACT],
      ['bisect', dir],
    ]) {
      const run = await runInProcess(args, LIMIT_MS);
      console.log(`${args[0]}: ${run.ms} ms, RSS ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB`);
      judge(args[0] as string, c, run, [dir]);
      expect(process.memoryUsage().rss).toBeLessThan(2.5 * 2 ** 30);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
