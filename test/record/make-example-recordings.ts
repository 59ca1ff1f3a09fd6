// Regenerates the committed example recordings (recordings/examples/<name>/ from the travel world,
// recordings/support/<name>/ from the support desk): `npx tsx test/record/make-example-recordings.ts
// [name...]`. Each run starts from the world's seed state and records the unchanged agent with --db
// (schema travel or support; the travel world's workspace with --fs too).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SupportPromptName, startSupportWorld } from '../../examples/support/index.js';
import { type AgentName, type PromptName, startWorld, type World } from '../../examples/world/index.js';
import { recordCommand } from '../../src/record/index.js';

export const EXAMPLE_RECORDINGS: Array<{ name: string; agent: AgentName; stream: boolean; prompt: PromptName }> = [
  { name: 'openai-baseline', agent: 'openai', stream: false, prompt: 'baseline' },
  { name: 'openai-baseline-stream', agent: 'openai', stream: true, prompt: 'baseline' },
  { name: 'openai-fixed-stream', agent: 'openai', stream: true, prompt: 'fixed' },
  { name: 'anthropic-baseline-stream', agent: 'anthropic', stream: true, prompt: 'baseline' },
  { name: 'anthropic-fixed', agent: 'anthropic', stream: false, prompt: 'fixed' },
];

export const EXAMPLES_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../recordings/examples');

/** The support desk's runs: the careful prompt refunds O-7731, the careless one another customer's O-7713. */
export const SUPPORT_RECORDINGS: Array<{ name: string; stream: boolean; prompt: SupportPromptName }> = [
  { name: 'careful', stream: false, prompt: 'careful' },
  { name: 'careless', stream: true, prompt: 'careless' },
];

export const SUPPORT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../recordings/support');

async function recordSupport(names: string[]): Promise<void> {
  const wanted = SUPPORT_RECORDINGS.filter((r) => names.length === 0 || names.includes(`support-${r.name}`));
  if (wanted.length === 0) return;
  const world = await startSupportWorld();
  try {
    for (const example of wanted) {
      await world.reset();
      const dir = path.join(SUPPORT_ROOT, example.name);
      rmSync(dir, { recursive: true, force: true });
      let stdout = '';
      const result = await recordCommand({
        command: world.agentCommand({ stream: example.stream }),
        env: world.agentEnv(example.prompt),
        dbUrl: world.dbUrl,
        dbSchemas: world.dbSchemas,
        out: dir,
        name: `support-${example.name}`,
        stdio: 'pipe',
        onSpawn(child) {
          child.stdout?.on('data', (data: Buffer) => {
            stdout += data.toString('utf8');
          });
          child.stderr?.resume();
        },
      });
      process.stdout.write(`support-${example.name}: exit ${result.exitCode} -> ${path.relative(process.cwd(), result.dir)}
  ${stdout.trim()}
`);
    }
  } finally {
    await world.stop();
  }
}

/** Records one example run of `world` (reset first) into `dir`. */
export async function recordExample(
  world: World,
  example: (typeof EXAMPLE_RECORDINGS)[number],
  dir: string,
): Promise<{ dir: string; exitCode: number | null; stdout: string }> {
  await world.reset();
  let stdout = '';
  const result = await recordCommand({
    command: world.agentCommand(example.agent, { stream: example.stream }),
    env: world.agentEnv(example.prompt),
    fsRoot: world.workspace,
    dbUrl: world.dbUrl,
    dbSchemas: ['travel'],
    out: dir,
    name: example.name,
    stdio: 'pipe',
    onSpawn(child) {
      child.stdout?.on('data', (data: Buffer) => {
        stdout += data.toString('utf8');
      });
      child.stderr?.resume();
    },
  });
  return { dir: result.dir, exitCode: result.exitCode, stdout };
}

async function main(names: string[]): Promise<void> {
  await recordSupport(names);
  if (names.length > 0 && !EXAMPLE_RECORDINGS.some((e) => names.includes(e.name))) return;
  const world = await startWorld();
  try {
    for (const example of EXAMPLE_RECORDINGS) {
      if (names.length > 0 && !names.includes(example.name)) continue;
      const dir = path.join(EXAMPLES_ROOT, example.name);
      rmSync(dir, { recursive: true, force: true });
      const run = await recordExample(world, example, dir);
      process.stdout.write(
        `${example.name}: exit ${run.exitCode} -> ${path.relative(process.cwd(), run.dir)}\n  ${run.stdout.trim()}\n`,
      );
    }
  } finally {
    await world.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2));
}
