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
  '@openai/agents',
  '@langchain/core',
  '@langchain/openai',
  '@langchain/anthropic',
  'langchain',
  '@modelcontextprotocol/sdk',
  '@mastra/core',
] as const;

/** For each known SDK: the version found in the nearest node_modules above any of `fromDirs`. */
export function findSdkVersions(fromDirs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KNOWN_SDKS) {
    for (const start of fromDirs) {
      let dir = path.resolve(start);
      let found: string | undefined;
      for (;;) {
        const file = path.join(dir, 'node_modules', name, 'package.json');
        if (existsSync(file)) {
          try {
            const version: unknown = JSON.parse(readFileSync(file, 'utf8')).version;
            if (typeof version === 'string') found = version;
          } catch {
            // An unreadable package.json is no version.
          }
          break;
        }
        const parent = path.dirname(dir);
        if (parent === dir) break;
        dir = parent;
      }
      if (found !== undefined) {
        out[name] = found;
        break;
      }
    }
  }
  return out;
}

/**
 * The SDK versions an agent loads: resolved from its entry script's folder when the command names
 * one, else from the cwd. Never both: the cwd may be another project (tapedeck's own checkout, say),
 * whose SDKs the agent does not load.
 */
export function agentSdkVersions(entry: string | undefined, cwd: string): Record<string, string> {
  return findSdkVersions([entry === undefined ? cwd : path.dirname(entry)]);
}
