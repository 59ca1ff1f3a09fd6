// A shell predicate, like `git bisect run`: exit 0 good, 1-124 bad, 125 skip; run in the world's folder.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { materializeFs } from '../../../sandbox/index.js';
import { TapedeckError } from '../../recording/index.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';

export interface ShellPredicateOptions {
  /** Where the temporary world folders are made (default: the OS temp folder). */
  tmpRoot?: string;
  /** Called with each probe's folder (tests check it is gone afterwards). */
  onFolder?: (dir: string) => void;
}

/**
 * Runs `command` with `sh -c` in a fresh folder holding the world's files at step k. The environment
 * carries TAPEDECK_STEP, TAPEDECK_WORLD_DIR, TAPEDECK_BELIEF (belief JSON file) and TAPEDECK_WORLD_DB
 * (the database snapshot as JSON, when recorded). The folder is removed after every probe.
 */
export function shellPredicate(command: string, options: ShellPredicateOptions = {}): StepPredicate {
  return {
    name: `shell:${command}`,
    async evaluate(input: PredicateInput): Promise<PredicateResult> {
      const base = mkdtempSync(join(options.tmpRoot ?? tmpdir(), 'tapedeck-bisect-'));
      options.onFolder?.(base);
      try {
        const worldDir = join(base, 'world');
        await materializeFs(input.world.fs, (sha) => input.recording.readBlob(sha), worldDir);
        const beliefFile = join(base, 'belief.json');
        writeFileSync(beliefFile, JSON.stringify(input.belief, null, 2));
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          TAPEDECK_STEP: String(input.step),
          TAPEDECK_WORLD_DIR: worldDir,
          TAPEDECK_BELIEF: beliefFile,
          TAPEDECK_RECORDING: input.recording.dir,
        };
        if (input.world.db) {
          const dbFile = join(base, 'db.json');
          writeFileSync(dbFile, JSON.stringify(input.world.db));
          env.TAPEDECK_WORLD_DB = dbFile;
        }
        const { code, signal, output } = await run(command, worldDir, env);
        const said = output.trim().split('\n').at(-1)?.slice(0, 200);
        if (code === 0) return { verdict: 'good' };
        if (code === 125) return { verdict: 'skip', ...(said ? { reason: said } : {}) };
        if (code !== null && code >= 1 && code <= 124) {
          return { verdict: 'bad', reason: `\`${command}\` exited ${code}${said ? `: ${said}` : ''}` };
        }
        throw new TapedeckError(
          'BISECT_SHELL',
          `\`${command}\` ${signal ? `was killed by ${signal}` : `exited ${code}`} at step ${input.step} (126/127 mean not executable/not found; over 127 stops the bisection, as in git bisect run)${said ? `: ${said}` : ''}`,
        );
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
  };
}

function run(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, output }));
  });
}
