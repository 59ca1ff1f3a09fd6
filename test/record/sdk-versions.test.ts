// The package versions a recording names (manifest.runtime.sdkVersions) are the ones the agent loads:
// LlamaIndex.TS and Mastra among the known SDKs, every @ai-sdk/* provider, the database drivers,
// ORMs and HTTP clients that shape what goes over the wire, and a package nested in another's own
// node_modules (openai inside @llamaindex/openai, as npm installs it when the versions conflict;
// pg beside @prisma/adapter-pg in pnpm's store).
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findSdkVersions, recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-sdk-versions-');
const ROOT = path.resolve(import.meta.dirname, '../..');
const installed = (name: string): string =>
  JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;

afterAll(() => {
  if (!process.env.KEEP) tmp.remove();
});

/** Installs package `name` at `version` under `dir` (a package.json is all a version is read from). */
function install(dir: string, name: string, version: string): string {
  const at = path.join(dir, 'node_modules', name);
  mkdirSync(at, { recursive: true });
  writeFileSync(path.join(at, 'package.json'), JSON.stringify({ name, version }));
  return at;
}

describe('SDK versions', () => {
  it('names LlamaIndex, its openai nested in @llamaindex/openai, and Mastra, in a recording', async () => {
    const project = path.join(tmp.dir, 'llamaindex-agent');
    install(project, 'llamaindex', '0.12.1');
    install(project, '@llamaindex/core', '0.6.22');
    install(project, '@llamaindex/workflow', '1.1.24');
    install(install(project, '@llamaindex/openai', '0.4.22'), 'openai', '5.23.2');
    install(project, '@mastra/core', '0.20.0');
    const agent = path.join(project, 'agent.mjs');
    writeFileSync(agent, 'console.log("ok");\n');
    const result = await recordCommand({
      command: [process.execPath, agent],
      cwd: tmp.dir,
      out: path.join(tmp.dir, 'rec'),
      stdio: 'ignore',
    });
    expect(result.exitCode).toBe(0);
    expect((await readRecording(result.dir)).manifest.runtime.sdkVersions).toEqual({
      llamaindex: '0.12.1',
      '@llamaindex/core': '0.6.22',
      '@llamaindex/openai': '0.4.22',
      '@llamaindex/workflow': '1.1.24',
      '@mastra/core': '0.20.0',
      openai: '5.23.2',
    });
  });

  // The agent imports its own openai; @llamaindex/openai calls the model through the one it holds.
  // Both are loaded, both are named: the nested one after the SDK that holds it.
  it('takes the agent’s own top-level openai, and names one nested in another SDK at another version apart', () => {
    const project = path.join(tmp.dir, 'both');
    install(project, 'openai', '4.104.0');
    install(install(project, '@llamaindex/openai', '0.4.22'), 'openai', '5.23.2');
    expect(findSdkVersions([project])).toEqual({
      openai: '4.104.0',
      '@llamaindex/openai': '0.4.22',
      'openai (in @llamaindex/openai)': '5.23.2',
    });
  });

  it('names LangGraph, and the @anthropic-ai/sdk @langchain/anthropic holds beside the agent’s own; a nested copy of the same version is not named again', () => {
    const project = path.join(tmp.dir, 'langgraph');
    install(project, '@langchain/langgraph', '1.7.3');
    install(project, '@anthropic-ai/sdk', '0.71.2');
    install(install(project, '@langchain/anthropic', '1.5.11'), '@anthropic-ai/sdk', '0.122.0');
    install(install(project, '@langchain/core', '1.4.0'), '@anthropic-ai/sdk', '0.71.2');
    expect(findSdkVersions([project])).toEqual({
      '@langchain/langgraph': '1.7.3',
      '@langchain/core': '1.4.0',
      '@langchain/anthropic': '1.5.11',
      '@anthropic-ai/sdk': '0.71.2',
      '@anthropic-ai/sdk (in @langchain/anthropic)': '0.122.0',
    });
  });

  it('names the drivers, ORMs and HTTP clients this repo installs, at their installed versions', () => {
    const found = findSdkVersions([ROOT]);
    for (const name of [
      'pg',
      'postgres',
      'drizzle-orm',
      '@prisma/client',
      '@prisma/adapter-pg',
      'mysql2',
      'axios',
      'undici',
    ])
      expect(found[name], name).toBe(installed(name));
    expect(found['@electric-sql/pglite']).toBe(installed('@electric-sql/pglite'));
    expect(found['@ai-sdk/openai']).toBe(installed('@ai-sdk/openai'));
  });

  it('names every @ai-sdk provider, the drivers and HTTP clients, and the pg @prisma/adapter-pg holds at another version', () => {
    const project = path.join(tmp.dir, 'wire');
    install(project, 'ai', '5.0.1');
    install(project, '@ai-sdk/mistral', '2.0.3');
    install(project, '@ai-sdk/groq', '2.0.4');
    install(project, '@mistralai/mistralai', '1.7.0');
    install(project, 'drizzle-orm', '0.44.2');
    install(project, 'pg', '8.11.0');
    install(install(project, '@prisma/adapter-pg', '6.16.0'), 'pg', '8.16.0');
    install(project, 'ky', '1.8.0');
    install(project, 'left-pad', '1.3.0');
    expect(findSdkVersions([project])).toEqual({
      ai: '5.0.1',
      '@ai-sdk/mistral': '2.0.3',
      '@ai-sdk/groq': '2.0.4',
      '@mistralai/mistralai': '1.7.0',
      'drizzle-orm': '0.44.2',
      pg: '8.11.0',
      '@prisma/adapter-pg': '6.16.0',
      'pg (in @prisma/adapter-pg)': '8.16.0',
      ky: '1.8.0',
    });
  });

  // pnpm: node_modules/<name> links into .pnpm/<name>@<version>/node_modules/<name>, whose
  // dependencies sit beside it there; the agent's own pg is another one.
  it('reads a pnpm install: the packages through their links, and the pg beside @prisma/adapter-pg in the store', () => {
    const project = path.join(tmp.dir, 'pnpm');
    const store = path.join(project, 'node_modules', '.pnpm');
    const adapter = path.join(store, '@prisma+adapter-pg@6.16.0', 'node_modules');
    install(path.dirname(adapter), '@prisma/adapter-pg', '6.16.0');
    install(path.dirname(adapter), 'pg', '8.16.0');
    install(path.join(store, 'pg@8.11.0'), 'pg', '8.11.0');
    mkdirSync(path.join(project, 'node_modules', '@prisma'), { recursive: true });
    symlinkSync(
      path.join(adapter, '@prisma', 'adapter-pg'),
      path.join(project, 'node_modules', '@prisma', 'adapter-pg'),
    );
    symlinkSync(path.join(store, 'pg@8.11.0', 'node_modules', 'pg'), path.join(project, 'node_modules', 'pg'));
    expect(findSdkVersions([project])).toEqual({
      pg: '8.11.0',
      '@prisma/adapter-pg': '6.16.0',
      'pg (in @prisma/adapter-pg)': '8.16.0',
    });
  });
});
