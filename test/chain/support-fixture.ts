// Records a real run of the support desk (the second example world) for the answer-chain tests,
// with a counting sentinel in front of its API so a test can prove a replay never reached it.

import { type SupportPromptName, type SupportWorld, startSupportWorld } from '../../examples/support/index.js';
import { recordCommand } from '../../src/record/index.js';
import { startSentinel } from '../replay/world-fixture.js';

export interface RecordedSupport {
  world: SupportWorld;
  dir: string;
  env: Record<string, string>;
  apiHits(): number;
  stop(): Promise<void>;
}

export async function recordSupport(options: { prompt: SupportPromptName; out: string }): Promise<RecordedSupport> {
  const world = await startSupportWorld();
  const base = world.agentEnv(options.prompt);
  const sentinel = await startSentinel(world.apiUrl);
  const env = { ...base, SUPPORT_API_URL: sentinel.url };
  const stop = async () => {
    await new Promise<void>((resolve) => sentinel.server.close(() => resolve()));
    await world.stop();
  };
  try {
    const result = await recordCommand({
      command: world.agentCommand(),
      env,
      dbUrl: world.dbUrl,
      dbSchemas: world.dbSchemas,
      out: options.out,
      stdio: 'pipe',
    });
    if (result.exitCode !== 0) throw new Error(`recording the support desk failed with exit code ${result.exitCode}`);
    sentinel.hits.n = 0;
    return { world, dir: result.dir, env, apiHits: () => sentinel.hits.n, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
