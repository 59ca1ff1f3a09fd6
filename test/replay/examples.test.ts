// Acceptance: exact replay of each committed example recording (one file: they share a recorded workspace path).
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { EXAMPLES, type ExampleWorld, openExampleWorld } from './examples-helper.js';

let world: ExampleWorld;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-replay-ex-'));
  world = await openExampleWorld();
});

afterAll(async () => {
  await world?.stop();
  await rm(tmp, { recursive: true, force: true });
});

describe('exact replay of the committed examples', () => {
  for (const name of readdirSync(EXAMPLES)
    .filter((n) => existsSync(path.join(EXAMPLES, n, 'manifest.json')))
    .sort()) {
    it(`${name}: no divergence, no sentinel hit, real workspace and database unchanged, same end state`, async () => {
      await world.check(name, path.join(tmp, name));
    });
  }
});
