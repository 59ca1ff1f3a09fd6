// The sandbox-service answerers: a call to a configured service's origin that the recording cannot
// serve goes to the service's sandboxed instance, started on the first such call and kept as long
// as the chain (one replay, or every probe of a bisect-prompt run).
import type { Isolation } from '../../../sandbox/os/detect.js';
import type { HostPort } from '../../../sandbox/protocol.js';
import { type SandboxService, serviceName, serviceOrigin } from '../../../sandbox/service-settings.js';
import type { ServiceConfig } from '../../config/index.js';
import { onOrigin, sendRequest } from '../http.js';
import type { ChainAnswerer } from './types.js';

/** What a service needs from the replay it answers for. */
export interface ServiceWorld {
  /** The agent's environment in this replay (`${env.NAME}`). */
  env: Record<string, string>;
  /** The sandbox database as services reach it (`${sandbox.db}`: the relay's URL). */
  db?: string;
  /** The recorded fs root (`${sandbox.files}`) and the replay's seed of it. */
  fsRoot?: string;
  seedFile?: string;
  /** Where the service may connect (the relay), and what is rerouted (the recorded database's address). */
  allow: HostPort[];
  routes: Array<{ from: HostPort; to: HostPort }>;
  /** A folder that lives as long as the services do. */
  dir: string;
  /** The replay's OS sandbox level: command services start in a sandbox of their own at it. */
  os?: Isolation;
}

export class ServiceHost {
  private readonly running = new Map<number, Promise<SandboxService>>();
  constructor(private readonly configs: readonly ServiceConfig[]) {}

  /** One answerer per configured service, for a replay whose world is `world`. */
  answerers(world: ServiceWorld): ChainAnswerer[] {
    return this.configs.map((config, i) => {
      const origin = serviceOrigin(config, { env: world.env });
      const start = () => {
        let started = this.running.get(i);
        if (!started) {
          // The services' module (and the OS sandbox it starts them in) loads at the first call to one.
          started = import('../../../sandbox/services.js').then(({ startService }) =>
            startService(
              config,
              {
                env: world.env,
                ...(world.db ? { db: world.db } : {}),
                ...(world.fsRoot ? { files: world.fsRoot } : {}),
              },
              world,
            ),
          );
          this.running.set(i, started);
          // A failed start is not kept: the next call tries again (and says why again).
          started.catch(() => this.running.delete(i));
        }
        return started;
      };
      return {
        name: `sandbox service ${serviceName(config)}`,
        servedFrom: 'sandbox',
        accepts: (ask, { prefix }) =>
          !prefix && ask.kind === 'http' && !ask.isModel && originOf(ask.request.url) === origin,
        async answer(ask) {
          const service = await start();
          return sendRequest(onOrigin(ask.request.url, service.url), ask.request, ask.bytes);
        },
      };
    });
  }

  /** The services started so far (for reports). */
  async started(): Promise<SandboxService[]> {
    const out: SandboxService[] = [];
    for (const s of this.running.values()) {
      try {
        out.push(await s);
      } catch {}
    }
    return out;
  }

  async close(): Promise<void> {
    const all = await this.started();
    this.running.clear();
    await Promise.all(all.map((s) => s.close()));
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
