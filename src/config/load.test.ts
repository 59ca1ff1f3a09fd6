// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the config's placeholders (${port}, ${sandbox.db}) look like template strings on purpose
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findConfigFile, loadConfig, withOverrides } from './index.js';

const CONFIG_INDEX = fileURLToPath(new URL('./index.ts', import.meta.url));
let root: string;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'tapedeck-config-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(rel: string, text: string): string {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const SERVICE = {
  origin: '${env.API_URL}',
  command: 'node api.js',
  env: { DATABASE_URL: '${sandbox.db}', PORT: '${port}' },
  ready: '/health',
};

describe('the project file', () => {
  it('is found upward from the cwd, and an empty config stands when there is none', async () => {
    const file = write('proj/tapedeck.config.json', JSON.stringify({ services: [SERVICE] }));
    mkdirSync(path.join(root, 'proj', 'a', 'b'), { recursive: true });
    expect(findConfigFile(path.join(root, 'proj', 'a', 'b'))).toBe(file);
    const loaded = await loadConfig({ cwd: path.join(root, 'proj', 'a', 'b') });
    expect(loaded.file).toBe(file);
    expect(loaded.dir).toBe(path.join(root, 'proj'));
    expect(loaded.config.services?.[0]?.origin).toBe('${env.API_URL}');
    mkdirSync(path.join(root, 'elsewhere'));
    expect((await loadConfig({ cwd: path.join(root, 'elsewhere') })).config).toEqual({});
  });

  it('loads TypeScript through the tsx loader, typed with defineConfig', async () => {
    write(
      'tapedeck.config.ts',
      `import { defineConfig, type TapedeckConfig } from ${JSON.stringify(CONFIG_INDEX)};
const port: number = 8787;
const config: TapedeckConfig = { services: [{ origin: \`http://127.0.0.1:\${port}\`, command: ['node', 'api.js'] }], mocks: './mocks.ts' };
export default defineConfig(config);\n`,
    );
    const loaded = await loadConfig({ cwd: root });
    expect(loaded.config.services?.[0]).toEqual({ origin: 'http://127.0.0.1:8787', command: ['node', 'api.js'] });
    expect(withOverrides(loaded, { cwd: '/x' }).config.mocks).toBe(path.join(root, 'mocks.ts'));
  });

  it("schemaSql: the file's paths from its folder, --schema-sql's from the cwd, which wins", async () => {
    write('db/tapedeck.config.json', JSON.stringify({ schemaSql: ['migrations/functions.sql'] }));
    const loaded = await loadConfig({ cwd: path.join(root, 'db') });
    expect(withOverrides(loaded, { cwd: '/x' }).config.schemaSql).toEqual([
      path.join(root, 'db/migrations/functions.sql'),
    ]);
    expect(withOverrides(loaded, { cwd: '/x', schemaSql: ['a.sql', '/abs/b.sql'] }).config.schemaSql).toEqual([
      '/x/a.sql',
      '/abs/b.sql',
    ]);
    write('bad/tapedeck.config.json', JSON.stringify({ schemaSql: 'functions.sql' }));
    await expect(loadConfig({ cwd: path.join(root, 'bad') })).rejects.toThrow(/schemaSql/);
  });

  it('loads JavaScript and YAML', async () => {
    write('js/tapedeck.config.mjs', `export default ${JSON.stringify({ onMiss: 'fail' })};\n`);
    expect((await loadConfig({ cwd: path.join(root, 'js') })).config).toEqual({ onMiss: 'fail' });
    write(
      'yaml/tapedeck.config.yaml',
      'simulate:\n  endpoint: http://127.0.0.1:9/v1\n  allowMutating: [POST /bookings]\n',
    );
    expect((await loadConfig({ cwd: path.join(root, 'yaml') })).config.simulate).toEqual({
      endpoint: 'http://127.0.0.1:9/v1',
      allowMutating: ['POST /bookings'],
    });
  });

  it('names the file, line and field of a mistake', async () => {
    const yaml = write(
      'y/tapedeck.config.yaml',
      'services:\n  - origin: http://127.0.0.1:8787\n    command: node api.js\n    env:\n      DATABASE_URL: ${sandbox.database}\n',
    );
    await expect(loadConfig({ cwd: path.dirname(yaml) })).rejects.toThrow(
      `${yaml}:5: services[0].env.DATABASE_URL: unknown placeholder \${sandbox.database}`,
    );
    const json = write('j/tapedeck.config.json', '{\n  "services": [],\n  "mock": "./m.ts"\n}\n');
    await expect(loadConfig({ cwd: path.dirname(json) })).rejects.toThrow(`${json}:1: mock: unknown field ("mock")`);
    const ts = write('t/tapedeck.config.ts', 'export default { services: [{ origin: "http://h:1" }] };\n');
    await expect(loadConfig({ cwd: path.dirname(ts) })).rejects.toThrow(
      `${ts}: services[0]: a service needs \`origin\` and either \`command\``,
    );
    const bad = write(
      'b/tapedeck.config.ts',
      'export default { services: [{ origin: "http://h:1/api", command: "x" }], };\n',
    );
    await expect(loadConfig({ cwd: path.dirname(bad) })).rejects.toMatchObject({ code: 'BAD_CONFIG', exitCode: 2 });
    const broken = write('s/tapedeck.config.ts', 'export default { services: [ };\n');
    await expect(loadConfig({ cwd: path.dirname(broken) })).rejects.toThrow(`${broken}: cannot load it`);
    const origin = write('o/tapedeck.config.json', '{"services": [{"origin": "http://h:1/api", "command": "x"}]}');
    await expect(loadConfig({ file: origin })).rejects.toThrow(
      `${origin}:1: services[0].origin: expected an origin such as http://127.0.0.1:8787`,
    );
  });

  it('refuses two config files in one folder', async () => {
    write('tapedeck.config.json', '{}');
    write('tapedeck.config.yaml', '{}');
    expect(() => findConfigFile(root)).toThrow(/keep one tapedeck config file per folder/);
  });

  it('lets CLI flags override the file, with their paths taken from the cwd', async () => {
    write('tapedeck.config.json', JSON.stringify({ services: [SERVICE], mocks: './mocks.ts', onMiss: 'fail' }));
    const loaded = await loadConfig({ cwd: root });
    const out = withOverrides(loaded, {
      cwd: '/work',
      mocks: 'other.ts',
      simulate: { endpoint: 'http://127.0.0.1:9/v1' },
      onMiss: 'error-response',
    });
    expect(out.config.mocks).toBe('/work/other.ts');
    expect(out.config.simulate?.endpoint).toBe('http://127.0.0.1:9/v1');
    expect(out.config.onMiss).toBe('error-response');
    expect(out.config.services?.[0]).toMatchObject({ cwd: root });
    const off = withOverrides(loaded, { services: false, mocks: false, simulate: false });
    expect(off.config).toEqual({ onMiss: 'fail' });
    expect(() => withOverrides(loaded, { simulate: {} })).toThrow(/--simulate needs the model endpoint URL/);
    expect(() => withOverrides(loaded, { simulate: { endpoint: 'nope' } })).toThrow(/simulate.endpoint/);
    await expect(loadConfig({ cwd: root, file: 'missing.json' })).rejects.toMatchObject({ code: 'NO_CONFIG' });
    expect((await loadConfig({ cwd: root, file: false })).config).toEqual({});
  });
});
