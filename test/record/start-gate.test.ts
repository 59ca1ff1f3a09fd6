// `tapedeck record --fs -- node agent.mjs` takes the world's first snapshot while the agent's Node
// starts, and the agent's own code waits for it (src/record/command.ts, startsGated; the record
// preload's `start` barrier). What users depend on: nothing the agent does is in the first
// snapshot, however early it does it; and a recorder gone before the snapshot is done never
// lets the agent run unrecorded. The root is large enough (12,000 files) that its snapshot takes
// far longer than Node's start.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_PRELOAD } from '../../src/record/command.js';
import { recordCommand } from '../../src/record/index.js';
import { fileBytes, readRecording } from '../../src/recording/index.js';
import { bin, root } from '../cli/run-cli.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-start-gate-');
afterAll(() => tmp.remove());
const ws = path.join(tmp.dir, 'ws');
const FOLDERS = 60;
const PER_FOLDER = 200;
/** Files the agent rewrites first thing, spread over the tree (the snapshot reads them at different times). */
const EARLY = Array.from({ length: 20 }, (_, i) => `d${i * 3}/f${(i * 37) % PER_FOLDER}.txt`);

beforeAll(() => {
  for (let d = 0; d < FOLDERS; d++) {
    mkdirSync(path.join(ws, `d${d}`), { recursive: true });
    for (let f = 0; f < PER_FOLDER; f++) writeFileSync(path.join(ws, `d${d}`, `f${f}.txt`), `seed ${d}/${f}\n`);
  }
});

/** Processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {}
  }
  return out;
}
const alive = (pid: number) => existsSync(`/proc/${pid}`);
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the agent starts while the world is snapshotted', () => {
  it('keeps everything the agent does, however early, out of the first snapshot', async () => {
    const agent = path.join(tmp.dir, 'early.mjs');
    writeFileSync(
      agent,
      `import { writeFileSync } from 'node:fs';\nfor (const rel of ${JSON.stringify(EARLY)}) writeFileSync(${JSON.stringify(ws)} + '/' + rel, 'changed by the agent\\n');\n`,
    );
    // Inside the root, as with `--fs .` and the default recordings folder: the recording's own
    // files (the gate's token among them) are not the world.
    const out = path.join(ws, 'recordings', 'early-rec');
    const result = await recordCommand({ command: [process.execPath, agent], fsRoot: ws, out, stdio: 'ignore' });
    expect(result.exitCode).toBe(0);
    const recording = await readRecording(out);
    const pre = recording.pre.fs?.files ?? {};
    expect(Object.keys(pre)).toHaveLength(FOLDERS * PER_FOLDER);
    const text = (rel: string) => Buffer.from(fileBytes(pre[rel]!, recording.readBlob)).toString();
    expect(EARLY.map(text)).toEqual(
      EARLY.map((rel) => `seed ${rel.slice(1).replace('/f', '/').replace('.txt', '')}\n`),
    );
    // Every early write is a step and a change of the run, and nothing else is (the gate's token is not the agent's).
    const steps = recording.events
      .filter((e) => e.type === 'step.started')
      .map((e) => (e.payload as { name: string }).name);
    expect(steps).toEqual(EARLY.map(() => 'write_file'));
    const changed = recording.events
      .filter((e) => e.type === 'fs.changed')
      .map((e) => e.payload as { path: string; op: string })
      .map((p) => `${p.op} ${p.path}`);
    expect(changed.sort()).toEqual(EARLY.map((rel) => `modify ${rel}`).sort());
  });

  it('never runs the agent when the recorder is killed before the snapshot is done', async () => {
    const ran = path.join(tmp.dir, 'agent-ran');
    const agent = path.join(tmp.dir, 'sentinel.mjs');
    writeFileSync(agent, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(ran)}, 'ran');\n`);
    const out = path.join(tmp.dir, 'killed-rec');
    const cli = spawn(process.execPath, [bin, 'record', '--fs', ws, '--out', out, '--', process.execPath, agent], {
      cwd: root,
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => cli.once('exit', () => resolve()));
    // The recorder is whichever process started the agent: found as soon as the agent exists.
    let agentPid: number | undefined;
    let recorderPid: number | undefined;
    const deadline = Date.now() + 30_000;
    while (agentPid === undefined && Date.now() < deadline) {
      const queue = [cli.pid!];
      while (queue.length > 0 && agentPid === undefined) {
        const pid = queue.shift()!;
        for (const child of childrenOf(pid)) {
          // The agent's own command line, not the CLI's, which names the agent too.
          if (cmdline(child) === `${process.execPath}\0${agent}\0`) [agentPid, recorderPid] = [child, pid];
          else queue.push(child);
        }
      }
      if (agentPid === undefined) await sleep(2);
    }
    expect(agentPid, 'the agent started').toBeDefined();
    process.kill(recorderPid!, 'SIGKILL');
    if (recorderPid !== cli.pid) cli.kill('SIGKILL');
    await exited;
    // The snapshot was still being taken when the recorder died (else this test shows nothing):
    // the recording (under its own name or its staging name) holds no first snapshot.
    const folders = readdirSync(tmp.dir).filter((name) => name === 'killed-rec' || name.startsWith('.tmp-killed-rec'));
    expect(folders).toHaveLength(1);
    expect(existsSync(path.join(tmp.dir, folders[0]!, 'snapshots', 'pre', 'fs.json'))).toBe(false);
    const until = Date.now() + 10_000;
    while (alive(agentPid!) && Date.now() < until) await sleep(10);
    expect(alive(agentPid!), 'the agent exits').toBe(false);
    expect(existsSync(ran), "the agent's own code never ran").toBe(false);
  });
  it("never runs the agent whose dead recorder's leftovers were cleared before it reached the gate", () => {
    // What the agent's Node finds when its recorder was killed and another tapedeck command
    // cleared the recorder's spool folder (the gate's token with it) while Node was starting: under
    // load, before its preload got to the gate.
    const ran = path.join(tmp.dir, 'late-ran');
    const agent = path.join(tmp.dir, 'late.mjs');
    writeFileSync(agent, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(ran)}, 'ran');\n`);
    const env = {
      PATH: process.env.PATH ?? '',
      TAPEDECK_RECORD_IPC: path.join(tmp.dir, 'gone.sock'),
      TAPEDECK_RECORD_SPOOL: path.join(tmp.dir, 'gone-rec', '.spool'),
      TAPEDECK_RECORD_SPOOL_KEY: '00'.repeat(32),
      TAPEDECK_RECORD_OPTIONS: JSON.stringify({ gate: 'start-gate', fsRoot: ws }),
    };
    const first = spawnSync(process.execPath, ['--import', RECORD_PRELOAD, agent], { env, encoding: 'utf8' });
    expect(first.status).toBe(70);
    expect(first.stderr).toContain('the agent did not run');
    expect(existsSync(ran), "the agent's own code never ran").toBe(false);
    // A process the agent started (named) that outlives a finished run, whose spool is gone too, runs.
    const later = spawnSync(process.execPath, ['--import', RECORD_PRELOAD, agent], {
      env: { ...env, TAPEDECK_PROCESS: '1' },
      encoding: 'utf8',
    });
    expect(later.status, later.stderr).toBe(0);
    expect(existsSync(ran)).toBe(true);
  });
});
