// The cover over an interpreter's own sitecustomize (sandbox/python/hook.ts isolatedSites) takes two
// Python runs to make; it is kept in the state folder by the interpreter's identity, so a sandboxed
// record or replay does not pay them again (they cost ~0.3-0.5 s through a version manager's shim),
// and an interpreter that changed is probed again. Real /usr/bin/python3, behind a counting script.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PYTHON = '/usr/bin/python3';
const has = spawnSync(PYTHON, ['-I', '-c', 'import sitecustomize'], { env: {} }).status === 0;

describe.runIf(has)("an interpreter's sitecustomize cover, kept", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sites-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const runs = path.join(dir, 'runs.log');
  const python = path.join(dir, 'python3');
  writeFileSync(python, `#!/bin/sh\necho run >> ${JSON.stringify(runs)}\nexec ${PYTHON} "$@"\n`);
  chmodSync(python, 0o755);
  const script = path.join(dir, 'sites.mts');
  writeFileSync(
    script,
    `import { isolatedSites } from ${JSON.stringify(path.join(ROOT, 'sandbox/python/hook.ts'))};
const r = await isolatedSites([${JSON.stringify(python)}], ${JSON.stringify(dir)});
console.log(JSON.stringify({ covered: r.covered, sizes: r.over.map((o) => o.content.length) }));`,
  );
  /** One sandboxed run's start, in a process of its own; how many Python runs it took. */
  const start = () => {
    const before = count();
    const out = spawnSync(path.join(ROOT, 'node_modules/.bin/tsx'), [script], {
      env: { ...process.env, TAPEDECK_HOME: path.join(dir, 'home') },
      encoding: 'utf8',
    });
    expect(out.status, out.stderr).toBe(0);
    return { ...JSON.parse(out.stdout.trim().split('\n').pop() ?? '{}'), runs: count() - before };
  };
  const count = () => {
    try {
      return readFileSync(runs, 'utf8').split('\n').filter(Boolean).length;
    } catch {
      return 0;
    }
  };

  it('probes once, answers the next process from the state folder, and probes a changed interpreter again', () => {
    const first = start();
    expect(first.covered).toEqual([python]);
    expect(first.runs).toBe(2);
    const second = start();
    expect(second).toEqual({ ...first, runs: 0 });
    utimesSync(python, new Date(), new Date(Date.now() + 5000));
    expect(start()).toEqual({ ...first, runs: 2 });
  });
});
