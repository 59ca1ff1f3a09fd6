// The project file (`tapedeck.config.ts|js|json|yaml`): its types for users (`tapedeck/config`),
// `defineConfig` for typed config files, and the loader the CLI, bisect, the worker and the TUI use.
import type { TapedeckConfig } from './types.js';

export {
  CONFIG_FILES,
  type ConfigOverrides,
  findConfigFile,
  importUserModule,
  type LoadConfigOptions,
  loadConfig,
  parseConfig,
  projectSnapshotsDir,
  readConfigFile,
  withOverrides,
} from './load.js';
export { unknownPlaceholders } from './schema.js';
export type * from './types.js';

/**
 * Types a config file without changing it.
 * @example
 * // tapedeck.config.ts
 * import { defineConfig } from 'tapedeck/config';
 * export default defineConfig({
 *   services: [{ origin: '${env.API_URL}', command: 'node api.js', env: { DATABASE_URL: '${sandbox.db}', PORT: '${port}' }, ready: '/health' }],
 * });
 */
export function defineConfig(config: TapedeckConfig): TapedeckConfig {
  return config;
}
