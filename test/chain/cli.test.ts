// The answer chain from the command line: `tapedeck replay --config` answers what the recording
// cannot serve with the project file's sandbox service and says so by provenance; a bad project
// file is one clear line and exit 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer } from '../../examples/world/index.js';
import type { ModelServer } from '../../examples/world/model-server.js';
import { buildLedger } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';
import { example, expectOneLineError, root, tapedeck } from '../cli/run-cli.js';

let dir: string;
let model: ModelServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tapedeck-chain-cli-'));
  model = await startModelServer();
});
afterAll(async () => {
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck replay with a project file', () => {
  it('answers the calls the recording does not hold from the sandbox service, and counts them', {
    timeout: 240_000,
  }, async () => {
    const out = join(dir, 'replay');
    const run = await tapedeck(
      [
        'replay',
        example('openai-baseline'),
        '--trust-recording', // committed: made elsewhere
        '--mode',
        'counterfactual',
        '--system-prompt',
        join(root, 'examples/prompts/fixed.txt'),
        '--config',
        join(root, 'examples/tapedeck.config.ts'),
        '--model-endpoint',
        `${model.url}/v1`,
        '--out',
        out,
      ],
      { timeoutMs: 200_000 },
    );
    // 4 calls the sandbox service answered, and the fixed prompt's read of a file the recording
    // never read. Its confirmation write is the recorded one (kept there as an inline result, here
    // as a body: the same outcome).
    expect(run.stdout).toMatch(/answers: \d+ recorded, \d+ live, 5 sandbox/);
    expect(run.stdout).not.toContain('held back (never sent)');
    const replayed = await readRecording(out);
    const ledger = buildLedger(replayed).steps;
    const fileSteps = replayed.events.flatMap((e) =>
      e.type === 'tool.called' && e.payload.stateType.startsWith('FILE_')
        ? [[e.payload.name, e.payload.args, ledger.find((s) => s.step_id === e.stepId)?.served_from]]
        : [],
    );
    expect(fileSteps).toEqual([
      ['read_file', { path: 'traveler.json' }, 'sandbox'],
      ['write_file', { path: 'confirmations/BK-0001.md' }, 'recording'],
    ]);
    const booked = replayed.events.find((e) => e.type === 'db.changed' && e.payload.table === 'bookings');
    expect(booked?.type === 'db.changed' && booked.payload.after?.passenger_id).toBe('P-102');
    // Each answered call is written at the URL the agent asked (the travel API's recorded origin),
    // never at the sandboxed instance's port, which is gone once the replay ends: a contract's
    // request url, `diff` and the TUI compare the replay's calls with the recording's.
    const recorded = await readRecording(example('openai-baseline'));
    const origins = new Set(
      recorded.events.flatMap((e) =>
        e.type === 'http.exchange' && !e.payload.request.url.includes('/chat/')
          ? [new URL(e.payload.request.url).origin]
          : [],
      ),
    );
    const answered = replayed.events.flatMap((e) =>
      e.type === 'http.exchange' && e.payload.servedFrom === 'sandbox' ? [e.payload.request.url] : [],
    );
    expect(answered).toHaveLength(4);
    for (const url of answered) expect(origins).toContain(new URL(url).origin);
  });

  it('refuses a project file with a mistake in one line, naming the file, line and field', async () => {
    const bad = join(dir, 'tapedeck.config.yaml');
    writeFileSync(bad, 'services:\n  - origin: http://127.0.0.1:8787\n    comand: node api.js\n');
    const run = await tapedeck(['replay', example('openai-baseline'), '--config', bad]);
    expectOneLineError(run, new RegExp(`${bad.replaceAll('.', '\\.')}:2: services\\[0\\]\\.comand: unknown field`));
  });
});
