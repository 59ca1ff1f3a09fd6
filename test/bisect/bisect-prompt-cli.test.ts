// `tapedeck bisect-prompt` (in-process) with a command probe (git bisect run style): versions, git revisions, ddmin.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BASELINE = join(ROOT, 'recordings/examples/openai-baseline');
const scratch = mkdtempSync(join(tmpdir(), 'tapedeck-bisect-prompt-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The probe counts its runs in a file and fails prompts that say "assume".
const counter = join(scratch, 'runs.log');
const PROBE = `echo run >> ${counter}; ! grep -q assume "$TAPEDECK_PROMPT_FILE"`;

const tapedeck = runCli;

const runs = (): number => {
  try {
    return execFileSync('wc', ['-l', counter], { encoding: 'utf8' }).trim().split(/\s+/).map(Number)[0] ?? 0;
  } catch {
    return 0;
  }
};

describe('tapedeck bisect-prompt', () => {
  it('finds version 5 of 8 in at most 4 probes, and a second run is answered from the cache', async () => {
    const dir = join(scratch, 'versions');
    mkdirSync(dir);
    const files = Array.from({ length: 8 }, (_, i) => {
      const file = join(dir, `v${i + 1}.txt`);
      writeFileSync(
        file,
        `You are TravelDesk.\n${i + 1 >= 5 ? 'You may assume the passenger id.\n' : 'Look the passenger up.\n'}v${i + 1}\n`,
      );
      return file;
    });
    const cache = join(scratch, 'cache');
    const first = await tapedeck(
      'bisect-prompt',
      BASELINE,
      '--versions',
      ...files,
      '--probe-cmd',
      PROBE,
      '--cache',
      cache,
      '--json',
    );
    expect(first.code).toBe(1);
    const result = JSON.parse(first.stdout) as {
      firstBad: { version: number; label: string };
      evaluations: number;
      stats: { replays: number };
    };
    expect(result.firstBad.label).toBe(files[4]);
    expect(result.evaluations).toBeLessThanOrEqual(4);
    expect(runs()).toBe(result.stats.replays);
    expect(first.stderr).toMatch(/\[1\/4\] version 8 .*FAIL/);
    const again = await tapedeck(
      'bisect-prompt',
      BASELINE,
      '--versions',
      ...files,
      '--probe-cmd',
      PROBE,
      '--cache',
      cache,
    );
    expect(again.stdout).toMatch(/first failing version: 5/);
    expect(again.stdout).toMatch(/replays run: 0, cached: \d/);
    expect(runs()).toBe(result.stats.replays);
  });

  it('walks the git history of a prompt file', async () => {
    const repo = join(scratch, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd: repo,
        encoding: 'utf8',
      }).trim();
    git('init', '-q');
    const lines = ['You are TravelDesk.'];
    for (let i = 1; i <= 6; i++) {
      lines.push(i === 4 ? 'You may assume ids.' : `Rule ${i}.`);
      writeFileSync(join(repo, 'prompt.txt'), `${lines.join('\n')}\n`);
      git('add', 'prompt.txt');
      git('commit', '-q', '-m', `rule ${i}`);
      if (i === 1) git('tag', 'start');
    }
    const bad = git('rev-list', '-1', '--grep', 'rule 4', 'HEAD');
    const { code, stdout } = await tapedeck(
      'bisect-prompt',
      BASELINE,
      '--git-file',
      join(repo, 'prompt.txt'),
      '--revs',
      'start..HEAD',
      '--probe-cmd',
      PROBE,
      '--no-cache',
    );
    expect(code).toBe(1);
    expect(stdout).toContain(`first failing version: 4 (${bad.slice(0, 12)}:prompt.txt)`);
  });

  it('ddmin: of six hunks, the one that fixes the run alone', async () => {
    const base = Array.from({ length: 18 }, (_, i) => `line ${i + 1}`);
    const oldText = [...base];
    oldText[1] = 'You may assume ids.';
    const newText = [...base];
    for (const i of [4, 7, 10, 13, 16]) newText[i] = `edited ${i}`;
    writeFileSync(join(scratch, 'old.txt'), `${oldText.join('\n')}\n`);
    writeFileSync(join(scratch, 'new.txt'), `${newText.join('\n')}\n`);
    const { code, stdout } = await tapedeck(
      'bisect-prompt',
      BASELINE,
      '--ddmin',
      '--from',
      join(scratch, 'old.txt'),
      '--to',
      join(scratch, 'new.txt'),
      '--probe-cmd',
      PROBE,
      '--no-cache',
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/6 hunks; old prompt fails, new prompt passes/);
    expect(stdout).toMatch(/smallest set of hunks that flips the outcome: 1\n/);
    expect(stdout).toContain('-You may assume ids.');
  });

  it('bad input: no versions, missing files', async () => {
    const none = await tapedeck('bisect-prompt', BASELINE, '--probe-cmd', 'true');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give --versions F1 F2/);
    const missing = await tapedeck(
      'bisect-prompt',
      BASELINE,
      '--ddmin',
      '--from',
      'nope.txt',
      '--to',
      'nope2.txt',
      '--probe-cmd',
      'true',
    );
    expect(missing.stderr).toMatch(/--from nope\.txt does not exist/);
  });

  it('a probe whose model does not answer stops the search, and nothing is cached as a bad prompt', async () => {
    const dir = join(scratch, 'unreachable');
    mkdirSync(dir);
    const files = [1, 2].map((i) => {
      const file = join(dir, `v${i}.txt`);
      writeFileSync(file, `You are TravelDesk, version ${i}.\n`);
      return file;
    });
    const cache = join(dir, 'cache');
    // Port 9 (discard) on loopback: nothing listens, the model call is refused.
    const args = [
      'bisect-prompt',
      BASELINE,
      '--trust-recording', // committed: made elsewhere
      '--versions',
      ...files,
      '--model-endpoint',
      'http://127.0.0.1:9/v1',
    ];
    const run = await tapedeck(...args, '--cache', cache, '--out', join(dir, 'out'));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/a probe could not be judged: step \d+: live model call to .* failed/);
    expect(run.stdout).not.toMatch(/first failing version/);
    expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);
  });
});
