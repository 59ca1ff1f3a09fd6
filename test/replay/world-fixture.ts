// Records a real run of the example travel desk for replay tests, with a counting proxy (the
// sentinel) in front of the tool API so a test can prove a replay never reached it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentName, type PromptName, startWorld } from '../../examples/world/index.js';
import { recordCommand } from '../../src/record/index.js';

export interface RecordedExample {
  world: Awaited<ReturnType<typeof startWorld>>;
  dir: string;
  /** The env the agent was recorded with (the tool API behind the sentinel). */
  env: Record<string, string>;
  /** Requests that reached the real tool API through the sentinel since the last reset. */
  apiHits(): number;
  resetHits(): void;
  stop(): Promise<void>;
}

/** A counting proxy in front of `target`: every request that reaches the real API passes through it. */
export async function startSentinel(target: string): Promise<{ server: Server; url: string; hits: { n: number } }> {
  const hits = { n: 0 };
  const server = createServer(async (req, res) => {
    hits.n++;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

export async function recordExample(options: {
  agent: AgentName;
  stream?: boolean;
  prompt?: PromptName;
  out: string;
}): Promise<RecordedExample> {
  const world = await startWorld();
  const base = world.agentEnv(options.prompt ?? 'baseline');
  const sentinel = await startSentinel(String(base.TRAVEL_API_URL).replace(/\/$/, ''));
  const env = { ...base, TRAVEL_API_URL: sentinel.url };
  const stop = async () => {
    await new Promise<void>((resolve) => sentinel.server.close(() => resolve()));
    await world.stop();
  };
  try {
    const result = await recordCommand({
      command: world.agentCommand(options.agent, { stream: options.stream ?? false }),
      env,
      fsRoot: world.workspace,
      dbUrl: world.dbUrl,
      dbSchemas: ['travel'],
      out: options.out,
      stdio: 'pipe',
    });
    if (result.exitCode !== 0) throw new Error(`recording the example failed with exit code ${result.exitCode}`);
    return {
      world,
      dir: result.dir,
      env,
      apiHits: () => sentinel.hits.n,
      resetHits: () => {
        sentinel.hits.n = 0;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
