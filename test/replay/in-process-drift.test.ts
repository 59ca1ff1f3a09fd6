// replayInProcess says, as `tapedeck replay` does, what about this process differs from the
// recorded one and may explain its divergences: Node's major version, the SDKs' versions, the
// redaction key.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Recording, readRecording } from '../../src/recording/index.js';
import { replayInProcess } from '../../src/replay/in-process.js';
import { DivergenceError, withRecording } from '../../src/vitest/index.js';
import { tempDir } from '../record/helpers.js';
import { writeRecording } from './build.js';

const tmp = tempDir('tapedeck-in-process-drift-');
let dir: string;

beforeAll(async () => {
  dir = await writeRecording(path.join(tmp.dir, 'rec'), {
    calls: [{ kind: 'tool', url: 'http://127.0.0.1:9/items', response: [] }],
  });
});
afterAll(() => tmp.remove());

describe('replayInProcess drift', () => {
  it("names the Node, the SDKs and the redaction key that are not the recording's", async () => {
    const recording: Recording = await readRecording(dir);
    const same = await replayInProcess(recording, () => undefined, { requireAllCalls: false });
    expect(same.warnings).toEqual([]);
    expect(same.versionChanges).toBeUndefined();

    recording.manifest.runtime.node = 'v12.22.0';
    recording.manifest.runtime.sdkVersions = { openai: '0.0.1', 'made-up-sdk': '1.0.0' };
    recording.manifest.redaction.keyId = 'another-key';
    const drifted = await replayInProcess(recording, () => undefined, { requireAllCalls: false });
    const said = drifted.warnings.join('\n');
    const openai = JSON.parse(
      readFileSync(path.join(process.cwd(), 'node_modules/openai/package.json'), 'utf8'),
    ).version;
    expect(said).toContain(`recorded on Node v12.22.0 and runs on ${process.version} here`);
    expect(said).toContain(`openai 0.0.1 → ${openai}`);
    expect(said).toContain('made-up-sdk no longer found');
    expect(said).toMatch(/redaction key \(.+\) is not the one the recording was made with \(another-key\)/);
    expect(drifted.versionChanges?.map((c) => c.name).sort()).toEqual(['made-up-sdk', 'openai']);
  });

  it("withRecording's divergence names the drift as a likely cause", async () => {
    const drifted = path.join(tmp.dir, 'drifted');
    cpSync(dir, drifted, { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(drifted, 'manifest.json'), 'utf8'));
    manifest.runtime.sdkVersions = { openai: '0.0.1' };
    writeFileSync(path.join(drifted, 'manifest.json'), JSON.stringify(manifest));
    const run = withRecording(() => fetch('http://127.0.0.1:9/not-recorded'), { dir: drifted, mode: 'replay' });
    await expect(run).rejects.toThrow(DivergenceError);
    await expect(run).rejects.toThrow(/not the one recorded:\n {2}- .*openai 0\.0\.1 → /);
  });
});
