// Image services: a user's API run from a container image through testcontainers, against the
// sandbox database (reached through testcontainers' host-port tunnel). A Docker engine is needed:
// without one, a clear error before the agent starts.
import type { ServiceConfig } from '../src/config/index.js';
import { TapedeckError } from '../src/recording/index.js';
import {
  fillPlaceholders,
  type SandboxService,
  type ServiceValues,
  serviceName,
  serviceOrigin,
} from './service-settings.js';

/**
 * Fails at once, with a clear message, when no container runtime (Docker engine) is reachable:
 * called before a replay whose config has an image service starts its agent.
 */
export async function checkContainerRuntime(service: string): Promise<void> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
  } catch (error) {
    throw new TapedeckError(
      'NO_CONTAINER_RUNTIME',
      `service "${service}" runs from an image, and no Docker engine is reachable (${(error as Error).message}). Start a Docker engine, or give the service a command instead of an image.`,
      { cause: error },
    );
  }
}

/** Starts an image service and waits until it is ready (its `ready` path, or its port). */
export async function startContainer(
  config: Extract<ServiceConfig, { image: string }>,
  values: ServiceValues,
): Promise<SandboxService> {
  const name = serviceName(config);
  const origin = serviceOrigin(config, values);
  await checkContainerRuntime(name);
  const { GenericContainer, TestContainers, Wait } = await import('testcontainers');
  // The sandbox database listens on this machine's loopback: the container reaches it through
  // testcontainers' host-port tunnel, as host.testcontainers.internal.
  let db = values.db;
  if (db) {
    const u = new URL(db);
    await TestContainers.exposeHostPorts(Number(u.port || 5432));
    u.hostname = 'host.testcontainers.internal';
    db = u.toString();
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(config.env ?? {}))
    env[key] = fillPlaceholders(
      value,
      { ...values, ...(db ? { db } : {}), port: config.port },
      { service: name, field: `env.${key}` },
    );
  let container: Awaited<ReturnType<InstanceType<typeof GenericContainer>['start']>>;
  try {
    container = await new GenericContainer(config.image)
      .withEnvironment(env)
      .withExposedPorts(config.port)
      .withWaitStrategy(config.ready ? Wait.forHttp(config.ready, config.port) : Wait.forListeningPorts())
      .withStartupTimeout(config.readyTimeoutMs ?? 60_000)
      .start();
  } catch (error) {
    throw new TapedeckError(
      'SERVICE_FAILED',
      `service "${name}" (image ${config.image}) did not start: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return {
    name,
    origin,
    url: `http://${container.getHost()}:${container.getMappedPort(config.port)}`,
    kind: 'container',
    output: () => '',
    blocked: () => [],
    close: async () => {
      await container.stop().catch(() => {});
    },
  };
}
