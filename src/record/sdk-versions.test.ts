import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSdkVersions } from './sdk-versions.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const agentDir = mkdtempSync(path.join(tmpdir(), 'tapedeck-sdk-versions-'));
mkdirSync(path.join(agentDir, 'node_modules', 'openai'), { recursive: true });
writeFileSync(path.join(agentDir, 'node_modules', 'openai', 'package.json'), '{"name":"openai","version":"6.1.0"}');
writeFileSync(path.join(agentDir, 'agent.mjs'), "import OpenAI from 'openai';\n");
afterAll(() => rmSync(agentDir, { recursive: true, force: true }));

describe('the SDK versions an agent loads', () => {
  it('come from the agent’s own node_modules, not from the folder the recorder runs in', () => {
    // tapedeck's checkout (the cwd here) has @anthropic-ai/sdk and another openai; the agent loads neither.
    expect(agentSdkVersions(path.join(agentDir, 'agent.mjs'), ROOT)).toEqual({ openai: '6.1.0' });
  });

  it('come from the cwd when the command names no script', () => {
    expect(agentSdkVersions(undefined, agentDir)).toEqual({ openai: '6.1.0' });
  });
});
