// Finds the project file upward from the cwd, reads it (TypeScript through tsx's loader, JavaScript,
// JSON or YAML), validates it and applies CLI overrides. Errors name the file, line and field.
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as z from 'zod';
import { checkSnapshotName } from '../postgres/snapshot-name.js';
import { TapedeckError } from '../recording/errors.js';
import { formatFieldPath, leadingIssue } from '../recording/field-path.js';
import { ConfigSchema } from './schema.js';
import type { LoadedConfig, MissPolicy, SimulateConfig, TapedeckConfig } from './types.js';

/** The names looked for in each folder, in this order of preference. */
export const CONFIG_FILES = [
  'tapedeck.config.ts',
  'tapedeck.config.mts',
  'tapedeck.config.js',
  'tapedeck.config.mjs',
  'tapedeck.config.json',
  'tapedeck.config.yaml',
  'tapedeck.config.yml',
] as const;

/** The nearest project file at or above `cwd`; two in one folder is an error (which one would win?). */
export function findConfigFile(cwd: string = process.cwd()): string | undefined {
  let dir = path.resolve(cwd);
  for (;;) {
    const here = CONFIG_FILES.map((name) => path.join(dir, name)).filter((file) => isFile(file));
    if (here.length > 1)
      throw new TapedeckError(
        'BAD_CONFIG',
        `${dir} holds ${here.map((f) => path.basename(f)).join(' and ')}: keep one tapedeck config file per folder.`,
      );
    if (here[0]) return here[0];
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Imports a user's module (the config, a mocks file): `.ts`/`.mts`/`.cts` through tsx's loader, so
 * the CLI works as compiled JavaScript too; `.js`/`.mjs` natively.
 */
export async function importUserModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path.resolve(file)).href;
  if (/\.[mc]?ts$/.test(file)) {
    const { tsImport } = await import('tsx/esm/api');
    return interop((await tsImport(url, import.meta.url)) as Record<string, unknown>);
  }
  return interop((await import(url)) as Record<string, unknown>);
}

/** A TypeScript file outside an ESM package loads as CommonJS: its exports arrive under `default`. */
function interop(mod: Record<string, unknown>): Record<string, unknown> {
  const inner = mod.default;
  if (inner !== null && typeof inner === 'object' && (inner as Record<string, unknown>).__esModule === true)
    return inner as Record<string, unknown>;
  return mod;
}

/** Validates a parsed config; `locate` turns a field path into a `:line` suffix when the text is known. */
export function parseConfig(
  value: unknown,
  source: string,
  locate: (fieldPath: ReadonlyArray<PropertyKey>) => string = () => '',
): TapedeckConfig {
  const parsed = ConfigSchema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  let { issue, hint } = leadingIssue(parsed.error);
  // A service that fits neither form: a misspelt key says more than "needs command or image".
  if (issue.code === 'invalid_union') {
    const unknownKey = issue.errors.flat().find((i) => i.code === 'unrecognized_keys');
    if (unknownKey) {
      issue = { ...unknownKey, path: [...issue.path, ...unknownKey.path] } as z.core.$ZodIssue;
      hint = undefined;
    }
  }
  const fieldPath: PropertyKey[] = [...issue.path];
  let problem = issue.message;
  if (issue.code === 'unrecognized_keys') {
    fieldPath.push(issue.keys[0] as string);
    problem = `unknown field (${issue.keys.map((k) => JSON.stringify(k)).join(', ')}); ${hint ?? 'see docs/replay.md for the fields'}`;
  } else if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    problem = `required field is missing (${issue.message})`;
  }
  throw new TapedeckError('BAD_CONFIG', `${source}${locate(issue.path)}: ${formatFieldPath(fieldPath)}: ${problem}`);
}

/** Reads and validates one config file. */
export async function readConfigFile(file: string): Promise<LoadedConfig> {
  const abs = path.resolve(file);
  if (!isFile(abs)) throw new TapedeckError('NO_CONFIG', `No config file at ${abs}.`);
  const dir = path.dirname(abs);
  const ext = path.extname(abs);
  if (ext === '.json' || ext === '.yaml' || ext === '.yml') {
    const text = await readFile(abs, 'utf8');
    // Loaded only for a JSON or YAML config: most projects have none, and every replay reads the config.
    const { isMap, isNode, LineCounter, parseDocument } = await import('yaml');
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
    const syntax = doc.errors[0];
    if (syntax) {
      const pos = lines.linePos(syntax.pos[0]);
      throw new TapedeckError(
        'BAD_CONFIG',
        `${abs}:${pos.line}:${pos.col}: invalid ${ext === '.json' ? 'JSON' : 'YAML'}: ${syntax.message.split('\n')[0]}`,
      );
    }
    const locate = (fieldPath: ReadonlyArray<PropertyKey>): string => {
      const keys = fieldPath.map((p) => (typeof p === 'symbol' ? String(p) : p));
      let node: unknown;
      for (let n = keys.length; n >= 0 && !isNode(node); n--)
        node = n === 0 ? doc.contents : doc.getIn(keys.slice(0, n), true);
      const offset = isNode(node) && node.range ? node.range[0] : isMap(doc.contents) ? 0 : 0;
      return `:${lines.linePos(offset).line}`;
    };
    return { config: parseConfig(doc.toJS(), abs, locate), file: abs, dir };
  }
  if (!/\.[mc]?[jt]s$/.test(ext))
    throw new TapedeckError('BAD_CONFIG', `${abs}: a config file is .ts, .js, .mjs, .json or .yaml.`);
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(abs);
  } catch (error) {
    throw new TapedeckError('BAD_CONFIG', `${abs}: cannot load it: ${(error as Error).message.split('\n')[0]}`, {
      cause: error,
    });
  }
  const value = mod.default ?? mod.config;
  if (value === undefined)
    throw new TapedeckError(
      'BAD_CONFIG',
      `${abs}: export the config as the default export (export default defineConfig({ … })).`,
    );
  return { config: parseConfig(value, abs), file: abs, dir };
}

export interface LoadConfigOptions {
  /** Where the search starts (default: the current directory). */
  cwd?: string;
  /** A file to read instead of searching; false: no config file at all. */
  file?: string | false;
}

/**
 * The project's config: the file given, or the nearest `tapedeck.config.*` at or above the cwd, or
 * an empty config when there is none.
 * @example const { config } = await loadConfig(); config.services?.[0]?.origin
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  if (options.file === false) return { config: {}, dir: cwd };
  const file = options.file === undefined ? findConfigFile(cwd) : path.resolve(cwd, options.file);
  if (file === undefined) return { config: {}, dir: cwd };
  if (!existsSync(file)) throw new TapedeckError('NO_CONFIG', `No config file at ${file} (--config).`);
  return readConfigFile(file);
}

/** What CLI flags change in the loaded config; paths are taken from `cwd`. */
export interface ConfigOverrides {
  cwd?: string;
  /** --mocks FILE, or --no-mocks (false). */
  mocks?: string | false;
  /** --simulate ENDPOINT (merged into the file's simulate settings), or --no-simulate (false). */
  simulate?: Partial<SimulateConfig> | false;
  /** --no-services (false). */
  services?: false;
  onMiss?: MissPolicy;
  onMissByTool?: Record<string, MissPolicy>;
  /** --seed-snapshot NAME. */
  seedSnapshot?: string;
  /** --schema-sql FILE (repeatable), relative to the cwd. */
  schemaSql?: string[];
}

/**
 * The loaded config with CLI flags applied (flags win). Paths in the result are absolute, so the
 * result no longer depends on which folder it came from.
 */
export function withOverrides(loaded: LoadedConfig, overrides: ConfigOverrides = {}): LoadedConfig {
  const cwd = path.resolve(overrides.cwd ?? process.cwd());
  const config: TapedeckConfig = { ...loaded.config };
  if (config.mocks !== undefined) config.mocks = path.resolve(loaded.dir, config.mocks);
  if (config.schemaSql !== undefined) config.schemaSql = config.schemaSql.map((f) => path.resolve(loaded.dir, f));
  if (overrides.schemaSql !== undefined) config.schemaSql = overrides.schemaSql.map((f) => path.resolve(cwd, f));
  if (config.services)
    config.services = config.services.map((s) =>
      'command' in s ? { ...s, cwd: path.resolve(loaded.dir, s.cwd ?? '.') } : { ...s },
    );
  if (overrides.mocks === false) delete config.mocks;
  else if (overrides.mocks !== undefined) config.mocks = path.resolve(cwd, overrides.mocks);
  if (overrides.services === false) delete config.services;
  if (overrides.simulate === false) delete config.simulate;
  else if (overrides.simulate !== undefined) {
    const merged = { ...config.simulate, ...overrides.simulate };
    if (merged.endpoint === undefined)
      throw new TapedeckError(
        'BAD_OPTION',
        '--simulate needs the model endpoint URL (or simulate.endpoint in the config).',
      );
    config.simulate = parseConfig({ simulate: merged }, '--simulate').simulate as SimulateConfig;
  }
  if (overrides.onMiss !== undefined) config.onMiss = overrides.onMiss;
  if (overrides.onMissByTool !== undefined) config.onMissByTool = { ...config.onMissByTool, ...overrides.onMissByTool };
  if (overrides.seedSnapshot !== undefined) config.seedSnapshot = checkSnapshotName(overrides.seedSnapshot);
  // Only a replay that seeds from a snapshot carries where the project keeps them.
  const snapshots = projectSnapshotsDir(loaded);
  if (snapshots !== undefined && (config.seedSnapshot !== undefined || config.snapshotsDir !== undefined))
    config.snapshotsDir = snapshots;
  return { ...loaded, config };
}

/**
 * Where the loaded project keeps its named snapshots: the file's `snapshotsDir` (relative to the
 * file), else `.tapedeck/snapshots` beside the file, wherever the command runs (--config elsewhere);
 * undefined without a file (they are then found from the cwd: postgres/named-snapshots.ts).
 */
export function projectSnapshotsDir(loaded: LoadedConfig): string | undefined {
  if (loaded.config.snapshotsDir !== undefined) return path.resolve(loaded.dir, loaded.config.snapshotsDir);
  return loaded.file === undefined ? undefined : path.join(loaded.dir, '.tapedeck', 'snapshots');
}
