// Whose command a replay runs (#21): a recording this machine made (sealed with its key) replays as
// recorded; one made elsewhere is data: its command is shown, never run, and its env is not applied,
// unless the user gives a command after -- or passes --trust-recording.
import { createHmac, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { canonicalJson, canonicalJsonPretty, type Manifest } from '../../src/recording/index.js';
import { expectOneLineError, root, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-trust-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const agent = join(tmp, 'agent.mjs');
const sentinel = join(tmp, 'SENTINEL');
const sealed = join(tmp, 'sealed'); // made here, by the recorder (sealed with this run's TAPEDECK_HOME key)
const cliSealed = join(tmp, 'cli-sealed'); // made here, by `tapedeck record`

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
}

/** A copy of a recording with its manifest changed: what arrives from elsewhere (or was edited). */
function copyWith(name: string, from: string, change: (m: Manifest) => Manifest): string {
  const dir = join(tmp, name);
  cpSync(from, dir, { recursive: true });
  writeFileSync(join(dir, 'manifest.json'), `${canonicalJsonPretty(change(readManifest(from)))}\n`);
  return dir;
}

/** A seal made with some other machine's key over the manifest as it is: well-formed, not ours. */
function foreignSeal(m: Manifest): string {
  const { command, cwd, env } = m.agent;
  return createHmac('sha256', randomBytes(32))
    .update(canonicalJson({ v: 1, id: m.id, command, cwd, env: env ?? {} }))
    .digest('hex');
}

const hostileCommand = ['sh', '-c', `echo TRUSTED-RAN; touch '${sentinel}'`];

beforeAll(async () => {
  writeFileSync(agent, "console.log('greeting=' + (process.env.GREETING ?? 'unset'));\n");
  await recordCommand({ command: ['node', agent], cwd: tmp, out: sealed, stdio: 'ignore', env: { GREETING: 'hi' } });
  const run = await tapedeck(['record', '--out', cliSealed, '--', 'node', agent], { cwd: tmp });
  expect(run.code, run.stderr).toBe(0);
});

describe('tapedeck replay: whose command runs', () => {
  it('refuses a foreign recording’s command (no seal) in one line, before anything starts', async () => {
    const foreign = copyWith('foreign-unsealed', sealed, ({ seal: _seal, ...m }) => ({
      ...m,
      agent: { ...m.agent, command: hostileCommand },
    }));
    const out = join(tmp, 'out-unsealed');
    const run = await tapedeck(['replay', foreign, '--out', out]);
    expectOneLineError(
      run,
      /not made on this machine.*its command is not run: sh -c 'echo TRUSTED-RAN; touch .*SENTINEL'/,
    );
    expect(run.stderr).toContain(`-- sh -c`);
    expect(run.stderr).toContain('--trust-recording');
    expect(run.stdout).not.toContain('TRUSTED-RAN');
    expect(existsSync(sentinel)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a recording sealed by another machine’s key, and a sealed one whose command was changed', async () => {
    const other = copyWith('foreign-sealed', sealed, (m) => {
      const changed = { ...m, agent: { ...m.agent, command: hostileCommand } };
      return { ...changed, seal: foreignSeal(changed) };
    });
    const tampered = copyWith('tampered', sealed, (m) => ({ ...m, agent: { ...m.agent, command: hostileCommand } }));
    expect(readManifest(tampered).seal).toBe(readManifest(sealed).seal);
    for (const dir of [other, tampered]) {
      const out = join(tmp, `out-${dir.split('/').at(-1)}`);
      const run = await tapedeck(['replay', dir, '--out', out]);
      expectOneLineError(run, /seal does not verify on this machine.*its command is not run: sh -c /);
      expect(existsSync(sentinel)).toBe(false);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('runs a foreign recording’s command with --trust-recording (in the sandbox, as usual)', async () => {
    const foreign = copyWith('foreign-trusted', sealed, ({ seal: _seal, ...m }) => ({
      ...m,
      agent: { ...m.agent, command: ['sh', '-c', 'echo TRUSTED-RAN'] },
    }));
    const run = await tapedeck(['replay', foreign, '--trust-recording', '--json', '--out', join(tmp, 'out-trusted')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('TRUSTED-RAN');
  });

  it('replays a recording `tapedeck record` made here without any flag (its seal verifies)', async () => {
    expect(readManifest(cliSealed).seal).toMatch(/^[0-9a-f]{64}$/);
    const verified = await tapedeck(['verify', cliSealed, join(tmp, 'tampered')]);
    expect(verified.stdout.split('\n')[0]).not.toContain('made elsewhere');
    expect(verified.stdout.split('\n')[1]).toContain(
      'made elsewhere (a replay runs its command only with --trust-recording)',
    );
    const run = await tapedeck(['replay', cliSealed, '--json', '--out', join(tmp, 'out-cli-sealed')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('greeting=unset');
  });

  it('applies a foreign recording’s env only with --trust-recording, and says what it left out', async () => {
    const own = await tapedeck(['replay', sealed, '--json', '--out', join(tmp, 'out-own-env')]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).toContain('greeting=hi');

    const foreign = copyWith('foreign-env', sealed, ({ seal: _seal, ...m }) => m);
    const given = await tapedeck(['replay', foreign, '--json', '--out', join(tmp, 'out-given'), '--', 'node', agent]);
    expect(given.code, given.stderr).toBe(0);
    expect(given.stderr).toContain('greeting=unset');
    const result = JSON.parse(given.stdout) as { warnings?: string[] };
    expect(result.warnings?.join('\n')).toMatch(/env \(GREETING\) not applied.*--trust-recording.*--env NAME=VALUE/);

    // Without --json, the same is said on stderr before the agent's own output.
    const told = await tapedeck(['replay', foreign, '--out', join(tmp, 'out-told'), '--', 'node', agent]);
    expect(told.code, told.stderr).toBe(0);
    const lines = told.stderr.split('\n');
    const warned = lines.findIndex((l) => /^tapedeck warning: the recording's env \(GREETING\) not applied/.test(l));
    expect(warned).toBeGreaterThan(0); // after the isolation line
    expect(told.stdout).not.toContain('env (GREETING) not applied'); // said once
    expect(told.stdout.indexOf('greeting=unset')).toBeGreaterThanOrEqual(0);

    const trusted = await tapedeck(['replay', foreign, '--trust-recording', '--json', '--out', join(tmp, 'out-te')]);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain('greeting=hi');

    const byEnv = await tapedeck([
      'replay',
      foreign,
      '--env',
      'GREETING=yo',
      '--json',
      '--out',
      join(tmp, 'out-e'),
      '--',
      'node',
      agent,
    ]);
    expect(byEnv.code, byEnv.stderr).toBe(0);
    expect(byEnv.stderr).toContain('greeting=yo');
  });

  // The key lives where the user's state does: outside /tmp (a home the sandbox shows read-only),
  // or inside a folder the sandbox binds back, such as the agent's own folder under /tmp (a clone
  // of the project in /tmp, as on a CI machine, put the key there and the agent read it).
  it.runIf(detectIsolation().level === 'bwrap').each([
    { where: 'outside /tmp', parent: () => root },
    { where: "inside the agent's folder under /tmp", parent: () => tmp },
  ])('hides this machine’s seal key from the agent in the OS sandbox: $where', async ({ where, parent }) => {
    const home = mkdtempSync(join(parent(), '.tapedeck-test-home-'));
    try {
      const env = { TAPEDECK_HOME: home };
      const rec = join(tmp, `own-home-${where.length}`);
      const made = await tapedeck(['record', '--out', rec, '--', 'node', agent], { cwd: tmp, env });
      expect(made.code, made.stderr).toBe(0);
      const key = join(home, 'seal.key');
      expect(readFileSync(key, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
      // The folder around the key stays readable: only the key is hidden.
      const read = ['sh', '-c', `echo "key bytes: $(cat '${key}' | wc -c) dir: $(ls -a '${home}' | wc -l)"`];
      const run = await tapedeck(
        ['replay', rec, '--isolation', 'bwrap', '--json', '--out', join(tmp, `out-key-${where.length}`), '--', ...read],
        { env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/key bytes: 0\b/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  // The redaction key too: from its file (the user's config folder) or from the environment, the
  // agent gets neither (with it, guesses of a redacted secret could be tested against placeholders).
  it.runIf(detectIsolation().level === 'bwrap').each([
    { where: 'outside /tmp', parent: () => root },
    { where: "inside the agent's folder under /tmp", parent: () => tmp },
  ])(
    'hides the redaction key from the agent: its file in the OS sandbox ($where), and its variable',
    async ({ where, parent }) => {
      const home = mkdtempSync(join(parent(), '.tapedeck-test-config-'));
      try {
        const env = { XDG_CONFIG_HOME: home, TAPEDECK_REDACTION_KEY: '' };
        const rec = join(tmp, `own-config-${where.length}`);
        const made = await tapedeck(['record', '--out', rec, '--', 'node', agent], { cwd: tmp, env });
        expect(made.code, made.stderr).toBe(0);
        const key = join(home, 'tapedeck', 'redaction.key');
        expect(readFileSync(key, 'utf8').trim().length).toBeGreaterThan(16);
        const read = [
          'sh',
          '-c',
          `echo "key bytes: $(cat '${key}' | wc -c) dir: $(ls -a '${home}/tapedeck' | wc -l) var: \${TAPEDECK_REDACTION_KEY:-unset}"`,
        ];
        const replayWith = (extra: Record<string, string>, out: string) =>
          tapedeck(['replay', rec, '--isolation', 'bwrap', '--json', '--out', join(tmp, out), '--', ...read], {
            env: { ...env, ...extra },
          });
        const run = await replayWith({}, `out-rkey-${where.length}`);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toMatch(/key bytes: 0 dir: 3 var: unset\b/);
        const byVar = await replayWith({ TAPEDECK_REDACTION_KEY: 'team-redaction-key' }, `out-rvar-${where.length}`);
        expect(byVar.code, byVar.stderr).toBe(0);
        expect(byVar.stderr).toMatch(/var: unset\b/);
        expect(byVar.stderr).not.toContain('team-redaction-key');
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );
});
