// biome-ignore-all lint/suspicious/noTemplateCurlyInString: service settings hold ${port}-style placeholders on purpose
// A sandboxed service's settings as a replay fills them in: its name, the origin it answers for,
// `${sandbox.db}`, `${sandbox.files}`, `${port}` and `${env.NAME}` placeholders; and what a started
// service offers (command services: services.ts; image services: service-image.ts).
import type { ServiceConfig } from '../src/config/index.js';
import { TapedeckError } from '../src/recording/index.js';

/** Values of the placeholders a service's settings may hold. */
export interface ServiceValues {
  /** The sandbox database URL the service gets (`${sandbox.db}`). */
  db?: string;
  /** The recorded fs root (`${sandbox.files}`). */
  files?: string;
  /** The agent's environment in this replay (`${env.NAME}`). */
  env: Record<string, string>;
}

export interface SandboxService {
  readonly name: string;
  /** The origin the agent calls (the config's `origin`, filled in). */
  readonly origin: string;
  /** Where the sandboxed instance listens. */
  readonly url: string;
  readonly kind: 'command' | 'container';
  /** The tail of its stdout and stderr. */
  output(): string;
  /** Connections its guard refused (command services). */
  blocked(): string[];
  close(): Promise<void>;
}

export const isImage = (config: ServiceConfig): config is Extract<ServiceConfig, { image: string }> =>
  'image' in config;

export function serviceName(config: ServiceConfig): string {
  return config.name ?? config.origin;
}

/** Fills `${…}` placeholders; a missing value is an error naming the service and the field. */
export function fillPlaceholders(
  text: string,
  values: ServiceValues & { port?: number },
  where: { service: string; field: string },
): string {
  return text.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
    let value: string | undefined;
    if (name === 'sandbox.db') value = values.db;
    else if (name === 'sandbox.files') value = values.files;
    else if (name === 'port') value = values.port === undefined ? undefined : String(values.port);
    else if (name.startsWith('env.')) value = values.env[name.slice(4)];
    if (value === undefined) {
      const why =
        name === 'sandbox.db'
          ? 'the recording has no database snapshot'
          : name === 'sandbox.files'
            ? 'the recording has no fs root'
            : name.startsWith('env.')
              ? `the agent's environment has no ${name.slice(4)} (pass it with --env ${name.slice(4)}=…)`
              : 'it has no value here';
      throw new TapedeckError('BAD_CONFIG', `service "${where.service}": ${where.field}: ${whole} — ${why}.`);
    }
    return value;
  });
}

/** The origin a service answers for, filled in and checked. */
export function serviceOrigin(config: ServiceConfig, values: ServiceValues): string {
  const service = serviceName(config);
  const text = fillPlaceholders(config.origin, values, { service, field: 'origin' });
  try {
    return new URL(text).origin;
  } catch {
    throw new TapedeckError('BAD_CONFIG', `service "${service}": origin ${JSON.stringify(text)} is not a URL.`);
  }
}
