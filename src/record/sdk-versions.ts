// Versions of the LLM SDKs the agent would load, read from the node_modules its code resolves from.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const KNOWN_SDKS = [
  'openai',
  '@anthropic-ai/sdk',
  'ai',
  '@ai-sdk/openai',
  '@ai-sdk/anthropic',
  '@ai-sdk/google',
  '@google/genai',
  'ollama',
  '@aws-sdk/client-bedrock-runtime',
  '@openai/agents',
  '@langchain/core',
  '@langchain/openai',
  '@langchain/anthropic',
  '@langchain/langgraph',
  'langchain',
  '@modelcontextprotocol/sdk',
  '@mastra/core',
  'llamaindex',
  '@llamaindex/core',
  '@llamaindex/openai',
  '@llamaindex/anthropic',
  '@llamaindex/workflow',
] as const;

/**
 * For each known SDK: the version found in the nearest node_modules above any of `fromDirs`. A
 * known SDK found nowhere there but in another one's own node_modules is the one the agent loads
 * through it (openai in @llamaindex/openai/node_modules): read from there. One found there at
 * another version than the agent's own is loaded too, by that SDK (@langchain/anthropic calls the
 * model through its own @anthropic-ai/sdk): named `<sdk> (in <owner>)`. One level deep, among the
 * SDKs found, so a few more existence checks at start-up, never a walk of node_modules.
 */
export function findSdkVersions(fromDirs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const found: Array<{ owner: string; dir: string }> = [];
  for (const name of KNOWN_SDKS) {
    for (const start of fromDirs) {
      const dir = nearestPackage(path.resolve(start), name);
      const version = dir === undefined ? undefined : versionIn(dir);
      if (dir !== undefined) found.push({ owner: name, dir });
      if (version !== undefined) {
        out[name] = version;
        break;
      }
    }
  }
  for (const name of KNOWN_SDKS) {
    for (const { owner, dir } of found) {
      if (owner === name) continue;
      const version = versionIn(path.join(dir, 'node_modules', name));
      if (version === undefined) continue;
      if (out[name] === undefined) out[name] = version;
      else if (version !== out[name]) out[`${name} (in ${owner})`] = version;
    }
  }
  return out;
}

/** The folder of package `name` in the nearest node_modules above `dir`. */
function nearestPackage(dir: string, name: string): string | undefined {
  for (let at = dir; ; ) {
    const candidate = path.join(at, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    const parent = path.dirname(at);
    if (parent === at) return undefined;
    at = parent;
  }
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
 * The SDK versions an agent loads: resolved from its entry script's folder when the command names
 * one, else from the cwd. Never both: the cwd may be another project (tapedeck's own checkout, say),
 * whose SDKs the agent does not load.
 */
export function agentSdkVersions(entry: string | undefined, cwd: string): Record<string, string> {
  return findSdkVersions([entry === undefined ? cwd : path.dirname(entry)]);
}
