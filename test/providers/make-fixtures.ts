// Regenerates the providers' conformance fixtures (test/providers/fixtures/): every example agent
// of the travel world (one per provider API, on its real SDK) recorded by the recorder against the
// FAKE model server, twice: `<agent>-plain` (not streamed, baseline prompt: one tool call a turn)
// and `<agent>-stream` (streamed, fixed prompt: several tool calls in a turn). Beside each,
// `<name>.model-log.jsonl` keeps what the server meant to send for each model call (text, tool
// calls, usage buckets), the truth the conformance suite checks each provider's decoding against.
//   npx tsx test/providers/make-fixtures.ts [agent...]
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENTS, type AgentName, type PromptName, startWorld } from '../../examples/world/index.js';
import { recordCommand } from '../../src/record/index.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export const VARIANTS: ReadonlyArray<{ suffix: string; stream: boolean; prompt: PromptName }> = [
  { suffix: 'plain', stream: false, prompt: 'baseline' },
  { suffix: 'stream', stream: true, prompt: 'fixed' },
];

async function main(only: string[]): Promise<void> {
  const world = await startWorld();
  try {
    for (const agent of Object.keys(AGENTS) as AgentName[]) {
      if (only.length > 0 && !only.includes(agent)) continue;
      for (const variant of VARIANTS) {
        const name = `${agent}-${variant.suffix}`;
        const dir = path.join(FIXTURES, name);
        rmSync(dir, { recursive: true, force: true });
        await world.reset();
        const result = await recordCommand({
          command: world.agentCommand(agent, { stream: variant.stream }),
          env: world.agentEnv(variant.prompt),
          out: dir,
          name,
          stdio: 'ignore',
        });
        if (result.exitCode !== 0) throw new Error(`${name}: the agent exited with ${result.exitCode}`);
        const meant = world.modelLog().map((line) => {
          const { seq, api, path: route, stream, meant } = JSON.parse(line) as Record<string, unknown>;
          return JSON.stringify({ seq, api, path: route, stream, meant });
        });
        writeFileSync(path.join(FIXTURES, `${name}.model-log.jsonl`), `${meant.join('\n')}\n`);
        process.stdout.write(`${name}: ${result.steps} steps, ${meant.length} model calls\n`);
      }
    }
  } finally {
    await world.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2));
}
