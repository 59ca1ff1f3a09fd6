// The second example world in one call: a support desk's database (schema `support`), its REST API,
// the FAKE model server with the support desk's scripted policy, and helpers to run its agent.
// Built on the travel world's infrastructure (database, JSON API plumbing, model server).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openWorldDatabase } from '../world/db.js';
import { startModelServer } from '../world/model-server.js';
import { type AgentRun, runProcess } from '../world/run-process.js';
import { startSupportApi } from './api.js';
import { decideSupport } from './policy.js';
import { dumpSupportSchema, resetSupportSchema } from './schema.js';

export { startSupportApi } from './api.js';
export { decideSupport, dollars, parseSupportTask, readSupportRules } from './policy.js';
export {
  dumpSupportSchema,
  resetSupportSchema,
  SUPPORT_SCHEMA,
  SUPPORT_SEED,
  SUPPORT_TABLES,
  SUPPORT_TODAY,
} from './schema.js';

/** examples/support/ on disk. */
export const SUPPORT_DIR = resolve(dirname(fileURLToPath(import.meta.url)));
export const SUPPORT_PROMPTS = {
  careful: join(SUPPORT_DIR, 'prompts', 'careful.txt'),
  careless: join(SUPPORT_DIR, 'prompts', 'careless.txt'),
} as const;
/** A prompt's history, oldest first: version 3 drops the ownership check (for `bisect-prompt --versions`). */
export const SUPPORT_PROMPT_SERIES = [1, 2, 3, 4].map((v) => join(SUPPORT_DIR, 'prompts', 'series', `v${v}.txt`));
export const SUPPORT_AGENT = join(SUPPORT_DIR, 'agent.mjs');
export const SUPPORT_CONTRACT = join(SUPPORT_DIR, 'contracts', 'refund.yaml');
/** What the customer writes: their order is O-7731, they type #7713 (another customer's order). */
export const SUPPORT_TASK =
  'Hi, this is Maya Chen (maya.chen@example.com). The blender from my order #7713 arrived cracked. Please refund it.';

export type SupportPromptName = keyof typeof SUPPORT_PROMPTS;

export interface SupportWorldOptions {
  /** A postgres:// URL; without it the world runs on PGlite over the wire protocol. */
  db?: string;
  /** With `db`: create a uniquely named database there and drop it on stop (default false). */
  freshDatabase?: boolean;
  /** Also write the model server's log here (JSON lines). */
  modelLogFile?: string;
}

export interface SupportRunOptions {
  stream?: boolean;
  /** 'careful', 'careless', or a path to a prompt file. */
  prompt?: SupportPromptName | string;
  /** Extra env for the agent (wins over the world's). */
  env?: Record<string, string>;
  /** Modules to load with `node --import` (e.g. a recorder preload). */
  imports?: string[];
}

export interface SupportWorld {
  apiUrl: string;
  modelUrl: string;
  dbUrl: string;
  dbKind: 'pglite' | 'postgres';
  /** Env vars the agent needs (no prompt choice: see agentEnv). */
  env: Record<string, string>;
  /** The schemas a recorder should snapshot. */
  dbSchemas: string[];
  modelLog(): string[];
  /** Back to the seed state (schema `support` recreated, model log cleared). */
  reset(): Promise<void>;
  /** Every row of every support table, by table. */
  state(): Promise<Record<string, Record<string, unknown>[]>>;
  /** The command line that runs the agent: ['node', <agent.mjs>, '--stream'?]. */
  agentCommand(options?: { stream?: boolean }): string[];
  /** `env` plus SYSTEM_PROMPT_FILE for the named prompt. */
  agentEnv(prompt?: SupportPromptName | string): Record<string, string>;
  runAgent(options?: SupportRunOptions): Promise<AgentRun>;
  stop(): Promise<void>;
}

/** Start the support desk. `await world.stop()` when done. */
export async function startSupportWorld(options: SupportWorldOptions = {}): Promise<SupportWorld> {
  const database = await openWorldDatabase(
    options.db === undefined ? {} : { url: options.db, fresh: options.freshDatabase ?? false, prefix: 'support' },
  );
  const admin = new pg.Pool({ connectionString: database.url, max: 1 });
  admin.on('error', () => {});
  const stops: Array<() => Promise<void>> = [];
  try {
    await resetSupportSchema(admin);
    const api = await startSupportApi({ dbUrl: database.url });
    stops.push(() => api.close());
    const model = await startModelServer({
      policy: decideSupport,
      ...(options.modelLogFile ? { logFile: options.modelLogFile } : {}),
    });
    stops.push(() => model.close());
    const env: Record<string, string> = {
      SUPPORT_API_URL: api.url,
      SUPPORT_TASK,
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: 'fake-key-not-a-secret',
    };
    const agentEnv = (prompt: SupportPromptName | string = 'careful') => ({
      ...env,
      SYSTEM_PROMPT_FILE: prompt in SUPPORT_PROMPTS ? SUPPORT_PROMPTS[prompt as SupportPromptName] : resolve(prompt),
    });
    const agentCommand = (o: { stream?: boolean } = {}) => [
      process.execPath,
      SUPPORT_AGENT,
      ...(o.stream ? ['--stream'] : []),
    ];
    return {
      apiUrl: api.url,
      modelUrl: model.url,
      dbUrl: database.url,
      dbKind: database.kind,
      env,
      dbSchemas: ['support'],
      modelLog: () => [...model.log],
      async reset() {
        await resetSupportSchema(admin);
        model.clearLog();
      },
      state: () => dumpSupportSchema(admin),
      agentCommand,
      agentEnv,
      runAgent(o = {}) {
        const [node, ...args] = agentCommand(o.stream === undefined ? {} : { stream: o.stream });
        const imports = (o.imports ?? []).flatMap((m) => ['--import', m]);
        const { SYSTEM_PROMPT: _ignored, ...parentEnv } = process.env;
        return runProcess(node as string, [...imports, ...args], { ...parentEnv, ...agentEnv(o.prompt), ...o.env });
      },
      async stop() {
        for (const stop of stops.reverse()) await stop();
        await admin.end();
        await database.close();
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await admin.end().catch(() => {});
    await database.close().catch(() => {});
    throw err;
  }
}
