// The agent's region (time zone and default locale) is recorded and given back: what it formats
// from recorded values (a prompt's date, an hour, a price) is what it formatted when recorded,
// though the replay runs elsewhere (a server in one zone and locale recorded, a laptop in another
// replaying). --env chooses others; LC_ALL, which ICU reads first, is said to decide when it is
// set; a recording naming a zone or locale this Node does not know runs in the machine's, with a
// warning, and one naming something that is neither is refused. Beside it, the rest of the
// agent's runtime: a replay says when its Node or SDKs are not the recorded ones.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { replay } from '../../src/replay/index.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/region-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);
/** Where it is recorded (+12:45/+13:45: no machine's own; German formats) and where it is replayed. */
const RECORDED_IN = { TZ: 'Pacific/Chatham', LC_MESSAGES: 'de_DE.UTF-8', LC_ALL: undefined, LANG: 'C.UTF-8' };
const REPLAYED_IN = { TZ: 'America/Sao_Paulo', LC_MESSAGES: undefined, LC_ALL: undefined, LANG: 'C.UTF-8' };

/** Runs fn with this process's env changed so (what the agents it starts inherit; Node reads TZ again). */
async function inEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(before);
  }
}

interface Seen {
  stamp: string;
  date: string;
  hour: number;
  price: string;
  zone: string;
  locale: string;
}
/** What the agent printed first: the time and price as it formatted them. */
const firstLine = (stdout = '') => JSON.parse(stdout.split('\n')[0] || '{}') as Partial<Seen>;
const runtimeOf = (dir: string) =>
  (
    JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
      runtime: { timeZone?: string; locale?: string };
    }
  ).runtime;

describe("the agent's region", () => {
  const tmp = tempDir('tapedeck-region-');
  const out = path.join(tmp.dir, 'rec');
  let api: TestServer;
  let hits = 0;
  let seen: Seen;
  beforeAll(async () => {
    api = await startServer((_req, body, res) => {
      hits++;
      res.end(`noted ${JSON.parse(body).price}`);
    });
    // Inherited, not given: the region of the server the agent ran on.
    const recorded = await inEnv(RECORDED_IN, () => recordAgent(AGENT, out, { API_URL: api.url }));
    expect(recorded.exitCode).toBe(0);
    seen = firstLine(recorded.stdout) as Seen;
  }, 60_000);
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  const replayIn = (
    vars: Record<string, string | undefined>,
    name: string,
    more: { env?: Record<string, string>; recording?: string } = {},
  ) => {
    const warnings: string[] = [];
    return inEnv(vars, () =>
      replay({
        recording: more.recording ?? out,
        mode: 'exact',
        out: path.join(tmp.dir, name),
        stdio: 'pipe',
        isolation: 'none',
        env: more.env ?? {},
        onWarning: (w) => warnings.push(w),
      }),
    ).then((result) => ({ result, warnings, printed: firstLine(result.output?.stdout) }));
  };

  it('is recorded, and the replay formats the recorded values in it', { timeout: 180_000 }, async () => {
    expect(seen).toMatchObject({ zone: 'Pacific/Chatham', locale: 'de-DE' });
    expect(seen.price).toMatch(/^129,99\s\$$/);
    expect(seen.stamp).toContain('Chatham');
    expect(runtimeOf(out)).toMatchObject({ timeZone: 'Pacific/Chatham', locale: 'de-DE' });
    hits = 0;
    for (const isolation of LEVELS) {
      const dir = path.join(tmp.dir, `replay-${isolation}`);
      const result = await inEnv(REPLAYED_IN, () => replayExact(out, dir, isolation));
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.output?.stdout, isolation).toBe(`${JSON.stringify(seen)}\nnoted ${seen.price}\n`);
      expect(runtimeOf(dir)).toMatchObject({ timeZone: 'Pacific/Chatham', locale: 'de-DE' });
    }
    expect(hits).toBe(0);
  });

  it('is the one --env gives, when given', { timeout: 120_000 }, async () => {
    const { result, printed } = await replayIn(REPLAYED_IN, 'replay-given', {
      env: { TZ: 'Asia/Tokyo', LANG: 'fr_FR.UTF-8' },
    });
    expect(printed).toMatchObject({ zone: 'Asia/Tokyo', locale: 'fr-FR' });
    // The request carries another price and hour: it is not the recorded one.
    expect(result.divergences.length).toBeGreaterThan(0);
    expect(runtimeOf(path.join(tmp.dir, 'replay-given'))).toMatchObject({ timeZone: 'Asia/Tokyo', locale: 'fr-FR' });
  });

  it('is said to be decided by LC_ALL when the replaying shell sets it', { timeout: 120_000 }, async () => {
    const { warnings, printed } = await replayIn({ ...REPLAYED_IN, LC_ALL: 'C.UTF-8' }, 'replay-lc-all');
    expect(warnings.join('\n')).toMatch(/recorded in locale de-DE; LC_ALL=C\.UTF-8 here gives it en-US/);
    expect(printed).toMatchObject({ zone: 'Pacific/Chatham', locale: 'en-US' });
  });

  it("warns when the agent's Node or SDKs are not the recorded ones", { timeout: 120_000 }, async () => {
    const dir = path.join(tmp.dir, 'drift');
    cpSync(out, dir, { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    manifest.runtime.node = 'v12.22.0';
    manifest.runtime.sdkVersions = { openai: '0.0.1', '@anthropic-ai/sdk': '0.0.2', 'made-up-sdk': '1.0.0' };
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    const { warnings } = await replayIn(REPLAYED_IN, 'replay-drift', { recording: dir });
    const said = warnings.join('\n');
    expect(said).toContain(`recorded on Node v12.22.0 and runs on ${process.version} here`);
    const openai = JSON.parse(
      readFileSync(path.join(process.cwd(), 'node_modules/openai/package.json'), 'utf8'),
    ).version;
    expect(said).toContain(`openai 0.0.1 → ${openai}`);
    expect(said).toContain('made-up-sdk no longer found');
    // The replay's own recording names the versions it ran with: a replay of it compares with those.
    expect(
      JSON.parse(readFileSync(path.join(tmp.dir, 'replay-drift', 'manifest.json'), 'utf8')).runtime.sdkVersions,
    ).toMatchObject({
      openai,
    });
    // The recording as made: nothing of the kind is said; nor when its entry is not on this
    // machine (a server's, replayed elsewhere): the SDKs are looked up from the cwd.
    const plain = await replayIn(REPLAYED_IN, 'replay-no-drift');
    expect(plain.warnings.join('\n')).not.toMatch(/recorded on Node|package versions/);
    const elsewhere = path.join(tmp.dir, 'elsewhere');
    cpSync(out, elsewhere, { recursive: true });
    const moved = JSON.parse(readFileSync(path.join(elsewhere, 'manifest.json'), 'utf8'));
    moved.runtime.sdkVersions = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')).runtime.sdkVersions;
    moved.runtime.sdkVersions.openai = openai;
    moved.agent.entry = '/nowhere/on/this/machine/server.js';
    writeFileSync(path.join(elsewhere, 'manifest.json'), JSON.stringify(moved));
    const away = await replayIn(REPLAYED_IN, 'replay-elsewhere', { recording: elsewhere });
    expect(away.warnings.join('\n')).not.toMatch(/package versions/);
  });

  it("runs in the machine's zone when this Node does not know the recorded one, and is refused when it names none", {
    timeout: 120_000,
  }, async () => {
    const edited = (name: string, runtime: Record<string, string>) => {
      const dir = path.join(tmp.dir, name);
      cpSync(out, dir, { recursive: true });
      const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
      Object.assign(manifest.runtime, runtime);
      writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
      return dir;
    };
    // A locale with no data here is given all the same: ICU formats with its root data, as the
    // recorded process did if it had none either.
    const unknown = edited('unknown', { timeZone: 'Mars/Olympus_Mons', locale: 'qq-QQ' });
    const { warnings, printed } = await replayIn(REPLAYED_IN, 'replay-unknown', { recording: unknown });
    expect(warnings.join('\n')).toMatch(/time zone Mars\/Olympus_Mons is not known to this Node/);
    expect(printed).toMatchObject({ zone: 'America/Sao_Paulo', locale: 'qq-QQ' });
    const hostile: Record<string, string>[] = [
      { timeZone: '../../etc/localtime' },
      { timeZone: 'UTC; rm -rf /' },
      { timeZone: '' },
      { locale: 'de_DE.UTF-8' },
      { locale: 'en-US\nLD_PRELOAD=/tmp/x.so' },
    ];
    for (const [i, runtime] of hostile.entries()) {
      const dir = edited(`hostile-${i}`, runtime);
      await expect(
        replay({ recording: dir, mode: 'exact', out: path.join(dir, 'r'), stdio: 'pipe', isolation: 'none' }),
      ).rejects.toThrow(/timeZone|locale/);
    }
  });
});
