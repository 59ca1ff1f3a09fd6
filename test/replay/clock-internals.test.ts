// The clock patch tells Node's own clock reads from the agent's: Node's bundled undici reads
// Date.now() when a response body of a fetch that really went out ends, a read that happens when
// recording and not when a replay answers the fetch, so it must never take a recorded value. The
// stack check that tells them apart costs ~15 us a read; a replay, which never lets Node's fetch
// go out, skips it until Node's fetch or FormData has run (sandbox/preload/replay.mjs). These
// tests hold the patch to both halves (with the check, a real fetch's read is Node's; with it
// skipped, the agent's reads are still every one of its reads), and a replay to the values an
// agent drew around Node's other read (FormData wrapping a polyfill's Blob). The check also holds
// inside vitest, which names the patch's own frames by path.
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, tempDir } from '../record/helpers.js';

const MODULE = pathToFileURL(
  fileURLToPath(new URL('../../sandbox/preload/shared-nondeterminism.mjs', import.meta.url)),
).href;

let server: http.Server;
let url: string;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.end('x'.repeat(100)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/**
 * The clock reads the hook saw over `work` (the body of an async function, `url` in scope), with
 * the patch given `internalsMayRead`, in a plain Node process: the check reads file names from the
 * stack as Node's loader gives them.
 */
async function clockReads(internalsMayRead: boolean, work: string): Promise<number> {
  const program = `
    import { patchNondeterminism } from ${JSON.stringify(MODULE)};
    const url = ${JSON.stringify(url)};
    await (await fetch(url)).text(); // undici loaded before the patch
    let reads = 0;
    const restore = patchNondeterminism((kind, value) => { if (kind === 'clock') reads++; return value; }, () => false, () => ${internalsMayRead});
    await (async () => { ${work} })();
    restore();
    process.stdout.write(String(reads));
  `;
  // Not synchronous: the server answering the fetches is this process's.
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program], {
    encoding: 'utf8',
  });
  return Number(stdout);
}

describe("the clock patch and Node's own reads", () => {
  it("leaves a real fetch's end-of-body read to Node while Node's code may read", async () => {
    const fetches = 'for (let i = 0; i < 3; i++) await (await fetch(url)).text();';
    expect(await clockReads(true, fetches)).toBe(0);
    // The same fetches with the check off: Node's reads reach the hook, one a response. This is
    // what a replay would record wrongly if Node's fetch went out while the check was skipped,
    // and why replay.mjs turns it back on once Node's fetch has run.
    expect(await clockReads(false, fetches)).toBe(3);
  });

  it("hands the agent's own reads to the hook with the check skipped, every one", async () => {
    const reads = await clockReads(
      false,
      'for (let i = 0; i < 5; i++) Date.now(); new Date(); await Promise.resolve(); Date.now();',
    );
    expect(reads).toBe(7);
  });
});

describe('the clock patch inside a test runner', () => {
  // vitest runs the patch as transformed code: its stack frames are named by path, not by URL, so
  // a patch that knew its own frames only by URL counted its own wrapper as the caller, and Node's
  // reads (and a telemetry SDK's) as the agent's: `record()` in a vitest test recorded them.
  it("leaves a real fetch's end-of-body read to Node, and hands the agent its own reads", async () => {
    const { patchNondeterminism } = (await import(MODULE)) as {
      patchNondeterminism: (
        hook: (kind: string, value: unknown) => unknown,
        suppressed: () => boolean,
        internalsMayRead: () => boolean,
      ) => () => void;
    };
    await (await fetch(url)).text(); // undici loaded before the patch
    let reads = 0;
    const restore = patchNondeterminism(
      (kind, value) => {
        if (kind === 'clock') reads++;
        return value;
      },
      () => false,
      () => true,
    );
    try {
      for (let i = 0; i < 3; i++) await (await fetch(url)).text();
      expect(reads).toBe(0);
      Date.now();
      new Date();
      expect(reads).toBe(2);
    } finally {
      restore();
    }
  });
});

describe("a replay's clock around Node's own reads", () => {
  const AGENT = fileURLToPath(new URL('fixtures/clock-agent.mjs', import.meta.url));
  const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

  for (const via of ['global', 'response']) {
    it(`hands the agent the values it drew when FormData (${via}) had Node read the clock between them`, {
      timeout: 120_000,
    }, async () => {
      const tmp = tempDir('tapedeck-clock-internals-');
      try {
        const out = path.join(tmp.dir, 'rec');
        const recorded = await recordAgent(AGENT, out, { VIA: via });
        expect(recorded.exitCode).toBe(0);
        const seen = recorded.stdout.trim();
        expect(JSON.parse(seen)).toHaveLength(5);
        for (const isolation of LEVELS) {
          const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation, { VIA: via });
          expect(result.exitCode, result.output?.stderr).toBe(0);
          expect(result.output?.stdout.trim(), isolation).toBe(seen);
        }
      } finally {
        tmp.remove();
      }
    });
  }
});
