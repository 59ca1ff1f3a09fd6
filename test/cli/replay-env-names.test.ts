// A recording keeps the names, never the values, of the variables the agent inherited; a replay
// run from a shell without one of them (an API's URL, say) names it, since the agent may take
// another path for that alone.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-env-names-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck replay of a run recorded with inherited variables', () => {
  it('names the variables the agent had and the replay lacks; their values are not in the recording', async () => {
    const agent = join(tmp, 'agent.mjs');
    writeFileSync(agent, "console.log(process.env.ORDERS_API_URL ? 'configured' : 'unconfigured');\n");
    const secret = 'canary-value-7f3a9c';
    const recorded = await tapedeck(['record', '--json', '--out', join(tmp, 'rec'), '--', process.execPath, agent], {
      cwd: tmp,
      env: { ORDERS_API_URL: `http://orders.internal/${secret}`, TERM_PROGRAM: 'tmux' },
    });
    expect(recorded.code, recorded.stderr).toBe(0);
    const manifest = readFileSync(join(tmp, 'rec', 'manifest.json'), 'utf8');
    expect(JSON.parse(manifest).agent.envNames).toContain('ORDERS_API_URL');
    expect(JSON.parse(manifest).agent.envNames).not.toContain('TERM_PROGRAM');
    expect(manifest).not.toContain(secret);

    const without = await tapedeck(['replay', join(tmp, 'rec'), '--out', join(tmp, 'r1')], {
      cwd: tmp,
      env: { ORDERS_API_URL: undefined },
    });
    expect(without.stdout + without.stderr).toMatch(/recorded with ORDERS_API_URL set, not set now/);

    const given = await tapedeck(
      ['replay', join(tmp, 'rec'), '--out', join(tmp, 'r2'), '--env', 'ORDERS_API_URL=http://127.0.0.1:9'],
      { cwd: tmp, env: { ORDERS_API_URL: undefined } },
    );
    expect(given.code, given.stderr).toBe(0);
    expect(given.stdout + given.stderr).not.toMatch(/ORDERS_API_URL/);
  });
});
