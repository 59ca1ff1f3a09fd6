// Importing 'tapedeck' draws no random value and reads no clock. A replay entry imports it to call
// runInput(); a value drawn while modules load would take the first of the agent's recorded
// values, and every later draw would get the one before it, silently (PGlite drew four at import).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { root } from '../cli/run-cli.js';

const COUNT = `
const counts = { random: 0, uuid: 0, bytes: 0, clock: 0 };
let on = false;
const wrap = (target, key, kind) => {
  const real = target[key];
  target[key] = function (...args) { if (on) counts[kind]++; return real.apply(this, args); };
};
wrap(Math, 'random', 'random');
wrap(globalThis.crypto, 'randomUUID', 'uuid');
wrap(globalThis.crypto, 'getRandomValues', 'bytes');
wrap(Date, 'now', 'clock');
on = true;
await import(process.env.TAPEDECK_ENTRY);
on = false;
process.stdout.write(JSON.stringify(counts));
`;

describe('the tapedeck package', () => {
  it('draws no random value and reads no clock while it is imported', async () => {
    const entry = pathToFileURL(join(root, 'src/index.ts')).href;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', COUNT],
        { cwd: root, env: { ...process.env, TAPEDECK_ENTRY: entry }, timeout: 120_000 },
        (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout)),
      ),
    );
    expect(JSON.parse(out)).toEqual({ random: 0, uuid: 0, bytes: 0, clock: 0 });
  });
});
