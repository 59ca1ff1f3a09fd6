// Every clock and random draw an agent makes is told apart by its call stack (the agent's, Node's
// own, a telemetry SDK's, a database driver's, the replay's memfs volume's), a stack capture being
// the draw's whole cost (got reads the clock five times a request), and each frame captured a good
// part of it. These tests hold the patch to one capture a draw, shared by every check of that
// draw, recorded and replayed, of the frames its checks read (the agent's own draws: its caller's
// frame alone), with each draw still told apart as before: a telemetry SDK's and a driver's
// authentication through every patched function (each captures from the agent's call, so a wrong
// one would make every draw the agent's), through an id library (whose draws are their caller's),
// and the memfs volume's clock reads within the first ten frames of a read.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../record/helpers.js';

const PRELOAD = fileURLToPath(new URL('../../sandbox/preload/', import.meta.url));
const SHARED = pathToFileURL(path.join(PRELOAD, 'shared-nondeterminism.mjs')).href;
const REPLAY = pathToFileURL(path.join(PRELOAD, 'replay-nondeterminism.mjs')).href;

const tmp = tempDir('tapedeck-draw-captures-');
afterAll(() => tmp.remove());

/** Every patched way to draw a value, by name (the callback forms resolve once the hook has seen the draw). */
const DRAWS = `const crypto = require('node:crypto');
const web = globalThis.crypto;
module.exports = {
  'Date.now': () => Date.now(),
  'new Date()': () => new Date(),
  'Date()': () => Date(),
  'Intl format': () => new Intl.DateTimeFormat('en').format(),
  'Intl formatToParts': () => new Intl.DateTimeFormat('en').formatToParts(),
  'performance.now': () => performance.now(),
  'performance.timeOrigin': () => performance.timeOrigin,
  'process.hrtime': () => process.hrtime(),
  'process.hrtime.bigint': () => process.hrtime.bigint(),
  'process.uptime': () => process.uptime(),
  'Math.random': () => Math.random(),
  'crypto.randomUUID': () => crypto.randomUUID(),
  'web crypto.randomUUID': () => web.randomUUID(),
  'crypto.getRandomValues': () => crypto.getRandomValues(new Uint8Array(2)),
  'web crypto.getRandomValues': () => web.getRandomValues(new Uint8Array(2)),
  'crypto.randomBytes': () => crypto.randomBytes(2),
  'crypto.randomBytes(callback)': () => new Promise((resolve) => crypto.randomBytes(2, resolve)),
  'crypto.randomFillSync': () => crypto.randomFillSync(new Uint8Array(2)),
  'crypto.randomFill': () => new Promise((resolve) => crypto.randomFill(new Uint8Array(2), resolve)),
  'crypto.randomInt': () => crypto.randomInt(1000),
};`;

/** Fake packages by the names the patch knows: an id library, a telemetry SDK, memfs. */
beforeAll(() => {
  const files: Record<string, string> = {
    // Four frames of its own under randomUUID's: the first five frames of its draws do not tell.
    'uuid/index.js': `const crypto = require('node:crypto');
      function a() { return b(); } function b() { return c(); } function c() { return d(); }
      function d() { return crypto.randomUUID(); }
      module.exports = { v4: () => a() };`,
    '@opentelemetry/api/index.js': `const { v4 } = require('uuid');
      module.exports = { spanId: () => v4() };`,
    // Every way to draw, called from a telemetry SDK's file, and from a driver's authentication.
    '@opentelemetry/sdk/draws.js': DRAWS,
    'pg/lib/crypto/utils.js': `const crypto = require('node:crypto');
      module.exports = { nonce: () => [crypto.getRandomValues(new Uint8Array(2)), crypto.randomBytes(2)] };`,
    'memfs/lib/volume.js': `module.exports = {
      stamp: () => Date.now(),
      stampDate: () => new Date().getTime(),
      run: (callback) => callback(),
    };`,
  };
  for (const [file, text] of Object.entries(files)) {
    const full = path.join(tmp.dir, 'node_modules', file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  // The same ways to draw, as a module of the agent's own.
  writeFileSync(path.join(tmp.dir, 'draws.js'), DRAWS);
});

interface Phase {
  captures: number;
  /** The frames they captured (Error.stackTraceLimit at each). */
  frames: number;
  values: unknown[];
}

/**
 * Runs `body` (an async function's body) in a plain Node process with Error.captureStackTrace
 * counted (`captures`, `frames`), `require` resolving the fake packages and `phase(name)` noting
 * the captures and values since the last phase; returns the phases.
 */
function run(setup: string, body: string): Record<string, Phase> {
  const program = `
    import { createRequire } from 'node:module';
    import crypto from 'node:crypto';
    let captures = 0;
    let frames = 0;
    const capture = Error.captureStackTrace;
    Error.captureStackTrace = function (...args) { captures++; frames += Error.stackTraceLimit; return capture.apply(this, args); };
    const require = createRequire(${JSON.stringify(`${tmp.dir}/`)});
    const values = [];
    const phases = {};
    let counted = [0, 0];
    const phase = (name) => {
      phases[name] = { captures: captures - counted[0], frames: frames - counted[1], values: values.splice(0) };
      counted = [captures, frames];
    };
    ${setup}
    await (async () => { ${body} })();
    process.stdout.write(JSON.stringify(phases));
  `;
  const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
  return JSON.parse(stdout) as Record<string, Phase>;
}

describe('a draw is told apart by one stack capture', () => {
  it("tells a telemetry SDK's draws and a driver's authentication from the agent's, whichever way they draw", () => {
    const phases = run(
      `const { patchNondeterminism } = await import(${JSON.stringify(SHARED)});
       patchNondeterminism((kind, value) => { values.push(kind); return value; });`,
      `const agent = require('./draws.js');
       const telemetry = require('@opentelemetry/sdk/draws.js');
       const driver = require('pg/lib/crypto/utils.js');
       phase('start');
       for (const name of Object.keys(agent)) {
         for (let i = 0; i < 3; i++) await telemetry[name]();
         values.push(name);
         await agent[name]();
       }
       for (let i = 0; i < 3; i++) driver.nonce();
       phase('draws');`,
    );
    // Each name is followed by the agent's one draw: none of the SDK's, none of the driver's.
    const kinds = (phases.draws?.values ?? []).join(' ');
    expect(kinds).toBe(
      [
        ...['Date.now', 'new Date()', 'Date()', 'Intl format', 'Intl formatToParts'].map((n) => `${n} clock`),
        ...[
          'performance.now',
          'performance.timeOrigin',
          'process.hrtime',
          'process.hrtime.bigint',
          'process.uptime',
        ].map((n) => `${n} hrtime`),
        'Math.random random',
        ...['crypto.randomUUID', 'web crypto.randomUUID'].map((n) => `${n} uuid`),
        ...[
          'crypto.getRandomValues',
          'web crypto.getRandomValues',
          'crypto.randomBytes',
          'crypto.randomBytes(callback)',
          'crypto.randomFillSync',
          'crypto.randomFill',
          'crypto.randomInt',
        ].map((n) => `${n} randomBytes`),
      ].join(' '),
    );
  });

  it("when recorded: the agent's draws of every kind, and through an id library (its caller's draws)", () => {
    const phases = run(
      `const { patchNondeterminism } = await import(${JSON.stringify(SHARED)});
       patchNondeterminism((kind, value) => { values.push(kind); return value; });`,
      `const { v4 } = require('uuid');
       const telemetry = require('@opentelemetry/api');
       phase('start');
       for (let i = 0; i < 10; i++) {
         Date.now(); new Date(); Math.random(); crypto.randomUUID(); performance.now();
         crypto.getRandomValues(new Uint8Array(4)); crypto.randomBytes(4);
       }
       phase('agent');
       for (let i = 0; i < 10; i++) v4();
       phase('id library');
       for (let i = 0; i < 5; i++) { telemetry.spanId(); v4(); }
       phase('telemetry and agent');`,
    );
    // One frame each, the caller's; but node:crypto's getRandomValues, which draws through the web
    // crypto's (Node's frame first, then the agent's): its first draw learns that one frame does
    // not tell (a second capture, of the ten frames the check may read below its two), the others
    // capture two frames at once.
    expect(phases.agent).toMatchObject({ captures: 71, frames: 60 + (1 + 10) + 9 * 2 });
    expect(phases.agent?.values).toHaveLength(70);
    // The agent's ids, drawn through uuid: likewise, the first draw a second capture, the others
    // as deep as uuid's frames and its caller's at once.
    expect(phases['id library']).toMatchObject({ captures: 11, values: Array(10).fill('uuid') });
    // A telemetry SDK's ids through the same library are still its own, never the agent's.
    expect(phases['telemetry and agent']).toMatchObject({ captures: 10, values: Array(5).fill('uuid') });
  });

  it("when replayed: the memfs volume's clock reads (in a read's first ten frames) are not the agent's, in the same capture", () => {
    const phases = run(
      `const { installNondeterminism } = await import(${JSON.stringify(REPLAY)});
       installNondeterminism({ clock: [1000, 2000, 3000] }, 1, () => false, () => true, () => false);`,
      `const volume = require('memfs/lib/volume.js');
       // The agent's frames under a callback the volume runs: k + 4 frames above the read's first.
       const nest = (k) => (k === 0 ? Date.now() : nest(k - 1));
       phase('start');
       values.push(volume.stamp() > 1e12, Date.now(), volume.stampDate() > 1e12, new Date().getTime());
       values.push(volume.run(() => nest(5)) > 1e12, volume.run(() => nest(6)));
       phase('reads');`,
    );
    expect(phases.reads).toMatchObject({ captures: 6, values: [true, 1000, true, 2000, true, 3000] });
  });
});
