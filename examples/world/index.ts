// The example world in one call: the travel desk's database, REST API and FAKE model server,
// a workspace folder, and helpers to run the example agents against it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startTravelApi } from './api.js';
import { openWorldDatabase } from './db.js';
import { startModelServer } from './model-server.js';
import { type AgentRun, runProcess } from './run-process.js';
import { dumpSchema, resetSchema, TRAVEL_TODAY } from './schema.js';
import { FAKE_AWS } from './wire/bedrock.js';

export { startTravelApi } from './api.js';
export { openWorldDatabase, pgliteCachePath } from './db.js';
export {
  ASSUMED_PASSENGER_ID,
  type Conversation,
  type Decision,
  decide,
  type PlannedCall,
  readRules,
  type ToolCallSeen,
} from './fake-policy.js';
export { type ModelServerOptions, type ScriptedPolicy, startModelServer } from './model-server.js';
export { type AgentRun, runProcess } from './run-process.js';
export { dumpSchema, resetSchema, SCHEMA, SEED, TABLES, TRAVEL_TODAY, TRAVEL_TOMORROW } from './schema.js';

/** examples/ on disk. */
export const EXAMPLES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const PROMPTS = {
  baseline: join(EXAMPLES_DIR, 'prompts', 'baseline.txt'),
  fixed: join(EXAMPLES_DIR, 'prompts', 'fixed.txt'),
} as const;
export const AGENTS = {
  openai: join(EXAMPLES_DIR, 'agents', 'openai-agent.mjs'),
  anthropic: join(EXAMPLES_DIR, 'agents', 'anthropic-agent.mjs'),
  'openai-responses': join(EXAMPLES_DIR, 'agents', 'openai-responses-agent.mjs'),
  gemini: join(EXAMPLES_DIR, 'agents', 'gemini-agent.mjs'),
  ollama: join(EXAMPLES_DIR, 'agents', 'ollama-agent.mjs'),
  bedrock: join(EXAMPLES_DIR, 'agents', 'bedrock-agent.mjs'),
  'bedrock-invoke': join(EXAMPLES_DIR, 'agents', 'bedrock-invoke-agent.mjs'),
  vertex: join(EXAMPLES_DIR, 'agents', 'vertex-agent.mjs'),
} as const;
export const CONTRACT = join(EXAMPLES_DIR, 'contracts', 'book-flight.yaml');

/** The traveler's profile, written to the workspace by every reset. */
export const TRAVELER = {
  name: 'Dana Reyes',
  passenger_id: 'P-102',
  email: 'dana.reyes@example.com',
  home_airport: 'SFO',
} as const;

export type AgentName = keyof typeof AGENTS;
export type PromptName = keyof typeof PROMPTS;

export interface WorldOptions {
  /** A postgres:// URL; without it the world runs on PGlite over the wire protocol. */
  db?: string;
  /** With `db`: create a uniquely named database there and drop it on stop (default false). */
  freshDatabase?: boolean;
  /** The agent's workspace folder (default: a new temp folder, removed on stop). */
  workspace?: string;
  /** Also write the model server's log here (JSON lines). */
  modelLogFile?: string;
}

export interface AgentRunOptions {
  agent: AgentName;
  stream?: boolean;
  /** 'baseline', 'fixed', or a path to a prompt file. */
  prompt?: PromptName | string;
  /** Extra env for the agent (wins over the world's). */
  env?: Record<string, string>;
  /** Modules to load with `node --import` (e.g. a recorder preload). */
  imports?: string[];
}

export interface WorldState {
  /** Every row of every travel table, by table, ordered by id. */
  db: Record<string, Record<string, unknown>[]>;
  /** Workspace files by relative path (posix separators). */
  files: Record<string, string>;
}

export interface World {
  apiUrl: string;
  modelUrl: string;
  dbUrl: string;
  dbKind: 'pglite' | 'postgres';
  workspace: string;
  /** Env vars an agent needs to run against this world (no prompt choice: see agentEnv). */
  env: Record<string, string>;
  /** The model server's exchanges so far, one JSON line each. */
  modelLog(): string[];
  /** Requests the real travel API has served since the world started (a replay must add none). */
  apiRequests(): number;
  /** Back to the seed state: schema `travel` recreated, workspace emptied and re-seeded, model log cleared. */
  reset(): Promise<void>;
  state(): Promise<WorldState>;
  /** The command line that runs an agent (for a recorder): ['node', <agent.mjs>, '--stream'?]. */
  agentCommand(agent: AgentName, options?: { stream?: boolean }): string[];
  /** `env` plus SYSTEM_PROMPT_FILE for the named prompt. */
  agentEnv(prompt?: PromptName | string): Record<string, string>;
  runAgent(options: AgentRunOptions): Promise<AgentRun>;
  stop(): Promise<void>;
}

/** Start the travel desk. `await world.stop()` when done. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const database = await openWorldDatabase(
    options.db === undefined ? {} : { url: options.db, fresh: options.freshDatabase ?? false },
  );
  const ownsWorkspace = options.workspace === undefined;
  const workspace = resolve(options.workspace ?? (await mkdtemp(join(tmpdir(), 'tapedeck-world-'))));
  const admin = new pg.Pool({ connectionString: database.url, max: 1 });
  admin.on('error', () => {}); // see startTravelApi: a dropped idle connection is not a crash
  const stops: Array<() => Promise<void>> = [];
  try {
    await resetSchema(admin);
    await seedWorkspace(workspace);
    const api = await startTravelApi({ dbUrl: database.url });
    let apiRequests = 0;
    api.server.on('request', () => {
      apiRequests++;
    });
    stops.push(() => api.close());
    const model = await startModelServer(options.modelLogFile ? { logFile: options.modelLogFile } : {});
    stops.push(() => model.close());

    const env: Record<string, string> = {
      TRAVEL_API_URL: api.url,
      DATABASE_URL: database.url,
      WORKSPACE: workspace,
      TRAVEL_TODAY,
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: 'fake-key-not-a-secret',
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'fake-key-not-a-secret',
      GEMINI_BASE_URL: model.url,
      GEMINI_API_KEY: 'fake-key-not-a-secret',
      OLLAMA_HOST: model.url,
      BEDROCK_ENDPOINT: model.url,
      VERTEX_BASE_URL: `${model.url}/v1`,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey,
    };
    const agentEnv = (prompt: PromptName | string = 'baseline') => ({
      ...env,
      SYSTEM_PROMPT_FILE: prompt in PROMPTS ? PROMPTS[prompt as PromptName] : resolve(prompt),
    });
    const agentCommand = (agent: AgentName, o: { stream?: boolean } = {}) => [
      process.execPath,
      AGENTS[agent],
      ...(o.stream ? ['--stream'] : []),
    ];
    return {
      apiUrl: api.url,
      modelUrl: model.url,
      dbUrl: database.url,
      dbKind: database.kind,
      workspace,
      env,
      modelLog: () => [...model.log],
      apiRequests: () => apiRequests,
      async reset() {
        await resetSchema(admin);
        await seedWorkspace(workspace);
        model.clearLog();
      },
      async state() {
        return { db: await dumpSchema(admin), files: await readTree(workspace) };
      },
      agentCommand,
      agentEnv,
      runAgent(o) {
        const [node, ...args] = agentCommand(o.agent, o.stream === undefined ? {} : { stream: o.stream });
        const imports = (o.imports ?? []).flatMap((m) => ['--import', m]);
        const { SYSTEM_PROMPT: _ignored, ...parentEnv } = process.env;
        return runProcess(node as string, [...imports, ...args], { ...parentEnv, ...agentEnv(o.prompt), ...o.env });
      },
      async stop() {
        for (const stop of stops.reverse()) await stop();
        await admin.end();
        await database.close();
        if (ownsWorkspace) await rm(workspace, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await admin.end().catch(() => {});
    await database.close().catch(() => {});
    throw err;
  }
}

async function seedWorkspace(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
  await writeFile(join(dir, 'traveler.json'), `${JSON.stringify(TRAVELER, null, 2)}\n`);
}

/** Every file under `root` by relative posix path, with its text. */
export async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string) => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out[relative(root, full).split('\\').join('/')] = await readFile(full, 'utf8');
    }
  };
  await walk(root);
  return out;
}
