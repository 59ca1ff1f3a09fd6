// The SDK versions a recording names (manifest.runtime.sdkVersions) are the ones the agent loads:
// LlamaIndex.TS and Mastra among the known SDKs, and an SDK nested in another's own node_modules
// (openai inside @llamaindex/openai, as npm installs it when the versions conflict).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findSdkVersions, recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-sdk-versions-');

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
});
