// Versions of the packages that shape what the agent sends over the wire (its LLM SDKs, its
// database drivers and ORMs, its HTTP clients), read from the node_modules its code resolves from.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** LLM SDKs and agent frameworks: what builds the model requests. */
export const KNOWN_SDKS = [
  'openai',
  '@anthropic-ai/sdk',
  '@anthropic-ai/bedrock-sdk',
  '@anthropic-ai/vertex-sdk',
  'ai',
  '@google/genai',
  '@google/generative-ai',
  '@google-cloud/vertexai',
  'ollama',
  'cohere-ai',
  '@mistralai/mistralai',
  'groq-sdk',
  '@aws-sdk/client-bedrock-runtime',
  '@openai/agents',
  '@openai/agents-core',
  '@openai/agents-openai',
  'langchain',
  '@modelcontextprotocol/sdk',
  '@mastra/core',
  'llamaindex',
] as const;

/** Scopes every package of which is an LLM SDK or a provider of one: all of a scope's installed packages are named. */
export const SDK_SCOPES = ['@ai-sdk', '@langchain', '@llamaindex'] as const;

/** Database drivers and ORMs (the SQL, the wire protocol) and HTTP clients (the headers, the body's framing). */
export const WIRE_PACKAGES = [
  'pg',
  'postgres',
  '@prisma/client',
  '@prisma/adapter-pg',
  'drizzle-orm',
  'kysely',
  'knex',
  'typeorm',
  'sequelize',
  'mysql2',
  'mongodb',
  'mongoose',
  'ioredis',
  'redis',
  '@electric-sql/pglite',
  '@neondatabase/serverless',
  'better-sqlite3',
  'undici',
  'axios',
  'got',
  'node-fetch',
  'ky',
] as const;

const NAMES: readonly string[] = [...KNOWN_SDKS, ...WIRE_PACKAGES];

/**
 * For each known package (KNOWN_SDKS, every package of SDK_SCOPES, WIRE_PACKAGES): the version
 * found in the nearest node_modules above any of `fromDirs`. A known package found nowhere there
 * but in another one's own node_modules is the one the agent loads through it (openai in
 * @llamaindex/openai/node_modules): read from there. One found there at another version than the
 * agent's own is loaded too, by that package (@langchain/anthropic calls the model through its own
 * @anthropic-ai/sdk; @prisma/adapter-pg talks to Postgres through its own pg): named
 * `<name> (in <owner>)`. Beside the owner counts as its own too when its real path is in pnpm's
 * store (`.pnpm/<owner>@…/node_modules/pg`). Each node_modules folder is looked at once, and only
 * the found packages' own: never a walk of node_modules (it runs at every record start).
 */
export function findSdkVersions(fromDirs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const found: Array<{ owner: string; dir: string; pnpm: boolean }> = [];
  const looked = new Map<string, KnownPackages>();
  const packages = (nodeModules: string) => {
    let known = looked.get(nodeModules);
    if (known === undefined) looked.set(nodeModules, (known = knownPackagesIn(nodeModules)));
    return known;
  };
  for (const start of fromDirs) {
    for (const nodeModules of nodeModulesAbove(path.resolve(start))) {
      const { names, pnpm } = packages(nodeModules);
      for (const [name, dir] of names) {
        if (out[name] !== undefined) continue;
        const version = versionIn(dir);
        if (version === undefined) continue;
        out[name] = version;
        found.push({ owner: name, dir, pnpm });
      }
    }
  }
  for (const { owner, dir, pnpm } of found) {
    for (const nodeModules of ownNodeModules(dir, pnpm)) {
      for (const [name, nested] of packages(nodeModules).names) {
        if (name === owner) continue;
        const version = versionIn(nested);
        if (version === undefined) continue;
        if (out[name] === undefined) out[name] = version;
        else if (version !== out[name]) out[`${name} (in ${owner})`] = version;
      }
    }
  }
  return out;
}

/** The node_modules folders there are above `dir`, nearest first. */
function nodeModulesAbove(dir: string): string[] {
  const out: string[] = [];
  for (let at = dir; ; ) {
    const candidate = path.join(at, 'node_modules');
    if (existsSync(candidate)) out.push(candidate);
    const parent = path.dirname(at);
    if (parent === at) return out;
    at = parent;
  }
}

/**
 * Where a package's own dependencies are, when not where the agent's are: its nested node_modules
 * (npm, on a version conflict) and, in a pnpm install, the store folder its real path sits in
 * (realpath only then: it costs more than the rest of the lookup).
 */
function ownNodeModules(dir: string, pnpm: boolean): string[] {
  const out: string[] = [];
  if (existsSync(path.join(dir, 'node_modules'))) out.push(path.join(dir, 'node_modules'));
  if (!pnpm) return out;
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return out;
  }
  if (real.split(path.sep).includes('.pnpm')) {
    // .pnpm/<owner>@<version>/node_modules/<owner> (or /@scope/<name>): the node_modules above it.
    for (let at = path.dirname(real); at !== path.dirname(at); at = path.dirname(at)) {
      if (path.basename(at) === 'node_modules') {
        out.push(at);
        break;
      }
    }
  }
  return out;
}

interface KnownPackages {
  /** name → folder */
  names: Map<string, string>;
  /** The folder is a pnpm install's (its packages are links into `.pnpm`). */
  pnpm: boolean;
}

/**
 * The known packages a node_modules folder holds. Its listing first (one read, a
 * package's own node_modules mostly holds none of them), then a scope's listing only when there.
 */
function knownPackagesIn(nodeModules: string): KnownPackages {
  const out = new Map<string, string>();
  const listing = (dir: string) => {
    try {
      return new Set(readdirSync(dir));
    } catch {
      return new Set<string>();
    }
  };
  const top = listing(nodeModules);
  const scopes = new Map<string, Set<string>>();
  const scoped = (scope: string) => {
    let entries = scopes.get(scope);
    if (entries === undefined)
      scopes.set(scope, (entries = top.has(scope) ? listing(path.join(nodeModules, scope)) : new Set()));
    return entries;
  };
  const add = (name: string) => {
    const dir = path.join(nodeModules, name);
    if (existsSync(path.join(dir, 'package.json'))) out.set(name, dir);
  };
  for (const name of NAMES) {
    const [first = '', second = ''] = name.split('/');
    if (name.startsWith('@') ? scoped(first).has(second) : top.has(name)) add(name);
  }
  for (const scope of SDK_SCOPES) {
    for (const entry of [...scoped(scope)].sort()) if (!entry.startsWith('.')) add(`${scope}/${entry}`);
  }
  return { names: out, pnpm: top.has('.pnpm') };
}

/** The version in a package folder's package.json; an unreadable one is no version. */
function versionIn(dir: string): string | undefined {
  try {
    const version: unknown = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The package versions an agent loads: resolved from its entry script's folder when the command
 * names one, else from the cwd. Never both: the cwd may be another project (tapedeck's own
 * checkout, say), whose packages the agent does not load.
 */
export function agentSdkVersions(entry: string | undefined, cwd: string): Record<string, string> {
  return findSdkVersions([entry === undefined ? cwd : path.dirname(entry)]);
}
