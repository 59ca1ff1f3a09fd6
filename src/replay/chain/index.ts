// The answer chain for calls a replay's recording cannot serve, after the recording and before
// holding a call back: sandbox services → msw mocks → simulated (off unless configured). Built
// from the project config; one chain serves one replay, or (kept) every probe of a bisect-prompt
// run, whose services then outlive each probe while each probe gets a fresh database.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DbSandbox } from '../../../sandbox/db.js';
import { makeNotedTempDir } from '../../../sandbox/leftovers.js';
import type { Isolation } from '../../../sandbox/os/detect.js';
import { type PgRelay, pgTargetOf, startPgRelay } from '../../../sandbox/pg-relay.js';
import type { HostPort } from '../../../sandbox/protocol.js';
import { checkContainerRuntime } from '../../../sandbox/service-image.js';
import { serviceName, serviceOrigin } from '../../../sandbox/service-settings.js';
import type { MockContext, MocksExport, ServiceConfig, TapedeckConfig } from '../../config/index.js';
import { databaseAddresses, databaseSockets } from '../../postgres/connect.js';
import { snapshotsDir } from '../../postgres/snapshots-dir.js';
import { canonicalJson, type Recording, type ReplayChainSettings } from '../../recording/index.js';
import { loadMocks, mockAnswerer } from './mocks.js';
import { loadMsw } from './msw.js';
import { filterExchanges, recordedExchanges } from './recorded.js';
import { ServiceHost } from './services.js';
import { DEFAULT_SIMULATOR_MODEL, simulatedAnswerer } from './simulate.js';
import type { ChainAnswerer } from './types.js';

export { filterExchanges, recordedExchanges, sameEndpoint } from './recorded.js';
export { mayMutate, SIMULATOR_PROMPT } from './simulate.js';
export type { ChainAnswerer, ChainAsk, HttpAnswer } from './types.js';

/** What the chain needs from the replay it answers for. */
export interface ChainWorld {
  recording: Recording;
  /** The replay's sandbox database (absent when the recording has none). */
  db?: DbSandbox;
  /** The recorded fs root and the replay's seed of it (the preload's format). */
  fsRoot?: string;
  seedFile?: string;
  /** The agent's environment in this replay. */
  env: Record<string, string>;
  /** The step number the next answer will have. */
  step(): number;
  /** The replay's isolation: with an OS sandbox, command services run in one too (same level). */
  isolation?: Isolation;
}

/** The chain as one replay uses it. */
export interface ChainSession {
  answerers: ChainAnswerer[];
  /**
   * Where the agent's connections go by address: the recorded database's host:port to the relay in
   * front of the sandbox database, so the agent reaches the sandbox however it names its database.
   */
  routes: Array<{ from: HostPort; to: HostPort }>;
  /**
   * The recorded database's Unix sockets (its own `?host=/dir`, else the usual folders when it ran
   * on this machine: `databaseSockets`) to the same relay: an agent given PGHOST=/var/run/postgresql.
   */
  socketRoutes?: Array<{ from: string; to: HostPort }>;
  /** Things the user should know (a simulator that failed, a service that tried to reach out). */
  warnings: string[];
  /** The replay is over: its database is detached; the services stop unless the chain is kept. */
  end(): Promise<void>;
}

export interface AnswerChain {
  readonly config: TapedeckConfig;
  /** Changes when what answers changes (config, mocks module): part of bisect's probe cache key. */
  readonly fingerprint: string;
  open(world: ChainWorld): Promise<ChainSession>;
  /** Stops the services and the relay. */
  close(): Promise<void>;
}

/**
 * What the replay's manifest says of its chain (manifest.replay.chain): the services by name,
 * origin (filled in from the agent's environment where it can be) and kind, the mocks module,
 * the simulator's endpoint (without credentials) and model.
 */
export function chainSettings(chain: AnswerChain, env: Record<string, string>): ReplayChainSettings {
  const { config } = chain;
  const originOf = (s: ServiceConfig) => {
    try {
      return serviceOrigin(s, { env });
    } catch {
      return s.origin;
    }
  };
  const sim = config.simulate;
  let endpoint = sim?.endpoint ?? '';
  try {
    const u = new URL(endpoint);
    u.username = '';
    u.password = '';
    u.search = '';
    endpoint = u.href;
  } catch {}
  return {
    fingerprint: chain.fingerprint,
    services: (config.services ?? []).map((s) => ({
      name: serviceName(s),
      origin: originOf(s),
      kind: 'image' in s ? 'image' : 'command',
    })),
    ...(config.mocks ? { mocks: config.mocks } : {}),
    ...(sim
      ? {
          simulate: {
            endpoint,
            model: sim.model ?? DEFAULT_SIMULATOR_MODEL,
            ...(sim.origins ? { origins: sim.origins } : {}),
            ...(sim.allowMutating ? { allowMutating: sim.allowMutating } : {}),
          },
        }
      : {}),
  };
}

/** host:port of the database a recording was made against (its manifest keeps the URL without credentials). */
export function recordedDbAddress(recording: Pick<Recording, 'manifest'>): HostPort | undefined {
  return databaseAddresses([recording.manifest.world?.db?.url])[0];
}

/**
 * A chain from a config (paths in it absolute: see `withOverrides`). `keep`: the services outlive
 * each replay (bisect-prompt); close the chain when done.
 * @example const chain = createAnswerChain((await loadConfig()).config); await replay({ …, chain }); await chain.close();
 */
export function createAnswerChain(config: TapedeckConfig = {}, options: { keep?: boolean } = {}): AnswerChain {
  const services = new ServiceHost(config.services ?? []);
  let relay: PgRelay | undefined;
  let tmp: { path: string; remove: () => Promise<void> } | undefined;
  let mocks: Promise<MocksExport> | undefined;
  // Where the snapshots are is not what they hold: the snapshot's own record (its sha256) is hashed.
  const { snapshotsDir: snapshotsFolder, ...settings } = config;
  const snapshotRecord = config.seedSnapshot
    ? readOrEmpty(
        path.join(snapshotsDir(process.cwd(), process.env, snapshotsFolder), config.seedSnapshot, 'snapshot.json'),
      )
    : '';
  const fingerprint = createHash('sha256')
    .update(canonicalJson(settings))
    .update(config.mocks ? readOrEmpty(config.mocks) : '')
    // A snapshot saved again under the same name (--force) is another world: another fingerprint.
    .update(snapshotRecord)
    .digest('hex')
    .slice(0, 16);
  return {
    config,
    fingerprint,
    async open(world) {
      // An image service without a Docker engine fails now, before the agent runs.
      for (const s of config.services ?? []) if ('image' in s) await checkContainerRuntime(serviceName(s));
      const warnings: string[] = [];
      tmp ??= await makeNotedTempDir('tapedeck-chain-');
      const dir = tmp.path;
      const routes: ChainSession['routes'] = [];
      const socketRoutes: NonNullable<ChainSession['socketRoutes']> = [];
      let dbUrl: string | undefined;
      if (world.db) {
        const target = pgTargetOf(world.db.url);
        relay ??= await startPgRelay();
        relay.retarget(target);
        dbUrl = relay.url();
        const to = { host: relay.host, port: relay.port };
        const recorded = recordedDbAddress(world.recording);
        if (recorded) routes.push({ from: recorded, to });
        for (const from of databaseSockets([world.recording.manifest.world?.db?.url])) socketRoutes.push({ from, to });
      }
      const answerers: ChainAnswerer[] = services.answerers({
        env: world.env,
        ...(dbUrl ? { db: dbUrl } : {}),
        ...(world.fsRoot ? { fsRoot: world.fsRoot } : {}),
        ...(world.seedFile ? { seedFile: world.seedFile } : {}),
        allow: relay ? [{ host: relay.host, port: relay.port }] : [],
        routes,
        dir,
        ...(world.isolation ? { os: world.isolation } : {}),
      });
      if (config.mocks || config.simulate) await loadMsw();
      // Re-reads every call of the recording (seconds at 100k steps): only for what reads them.
      const exchanges = config.mocks || config.simulate ? recordedExchanges(world.recording) : [];
      if (config.mocks) {
        const file = config.mocks;
        mocks ??= loadMocks(file);
        mocks.catch(() => {
          mocks = undefined;
        });
        const db = world.db;
        const context: MockContext = {
          recorded: (filter) => filterExchanges(exchanges, filter),
          async query(sql, params) {
            if (!db) throw new Error('this replay has no sandbox database (the recording has no database snapshot)');
            return db.query(sql, params);
          },
          get step() {
            return world.step();
          },
        };
        answerers.push(await mockAnswerer(await mocks, context, file));
      }
      if (config.simulate) answerers.push(simulatedAnswerer(config.simulate, exchanges, (m) => warnings.push(m)));
      let ended = false;
      return {
        answerers,
        routes,
        socketRoutes,
        warnings,
        async end() {
          if (ended) return;
          ended = true;
          for (const s of await services.started())
            for (const target of s.blocked())
              warnings.push(`sandbox service ${s.name} tried to reach ${target}: refused`);
          relay?.retarget(undefined);
          if (!options.keep) await services.close();
        },
      };
    },
    async close() {
      await services.close();
      await relay?.close();
      relay = undefined;
      await tmp?.remove();
      tmp = undefined;
    },
  };
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
