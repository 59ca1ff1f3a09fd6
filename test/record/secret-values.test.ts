// A secret known by its name (an env variable's, a header's) never reaches the disk in any other
// place the run quotes it: a real agent, recorded by the real CLI, whose env holds secrets of
// shapes no token pattern knows, echoes them in a model prompt, a tool call's arguments, an API
// request's URL and body, a response body, stdout and stderr, and a child process's argv (and a
// child quotes a token the agent set in its env alone); every
// file under the recording folder (its spool too) and every temp entry the run made is searched
// for the secrets' bytes, as they are and in the forms a body may take (URL-encoded, JSON-escaped,
// base64). Also when the recorder is SIGKILLed mid-run, under --isolate where the machine has
// bubblewrap, and an exact replay of the run (its replayer given the same env) still matches.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { readRecording } from '../../src/recording/index.js';
import { bin, root, tapedeck } from '../cli/run-cli.js';
import { filesUnder } from '../support/files-under.js';
import { replayExact, startServer, type TestServer, tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-secret-values-');
const hex = (n: number) => randomBytes(n).toString('hex');
// Fresh each run: a hit can only come from this run.
const SECRETS = {
  ACME_API_KEY: `acme_live_${hex(12)}`,
  ADMIN_PASSWORD: `hunter2-correct-horse-${hex(4)}`,
  PGPASSWORD: `pg+Pa55/${hex(5)}`,
};
const DB_PASSWORD = `db@pass ${hex(5)}`;
/** Not in the env: the API server hands it out in a secret-named header; the agent quotes it later. */
const SESSION = `sess-${hex(10)}`;
const ENV = {
  ...SECRETS,
  DATABASE_URL: `postgres://app:${encodeURIComponent(DB_PASSWORD)}@127.0.0.1:1/app`,
};
/** Not in the recorder's env either: the agent gives it to a child process of its own. */
const CHILD = `child-${[...SECRETS.ACME_API_KEY].reverse().join('')}`;
const ALL = [...Object.values(SECRETS), DB_PASSWORD, SESSION, CHILD];

const AGENT = `
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const { ACME_API_KEY: key, ADMIN_PASSWORD: pass, PGPASSWORD: pg, DATABASE_URL, MODEL_URL, API_URL, HOLD } = process.env;
const dbPass = decodeURIComponent(new URL(DATABASE_URL).password);
const model = (messages) =>
  fetch(MODEL_URL + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
  }).then((r) => r.json());
// A prompt that quotes the secrets.
const first = await model([
  { role: 'system', content: 'Connect to the database with password ' + dbPass },
  { role: 'user', content: 'My key is ' + key + ' and the admin password is ' + pass },
]);
// The model's tool call quotes one in its arguments; the agent calls the API with it in the URL,
// the query and the body.
const args = JSON.parse(first.choices[0].message.tool_calls[0].function.arguments);
const res = await fetch(API_URL + '/items/' + encodeURIComponent(args.key) + '?pg=' + encodeURIComponent(pg), {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ hint: pass, db: dbPass }),
});
const session = res.headers.get('x-session-token');
const answer = await res.text();
// stdout, stderr and a child process's argv.
console.log('stdout ' + key + ' ' + session);
console.error('stderr ' + pass + ' ' + dbPass);
spawnSync(process.execPath, ['-e', 'process.exit(0)', key, '--note=' + pass, session], { stdio: 'ignore' });
// A child given a token of its own (in no env the recorder has), which it quotes in a request.
const childToken = 'child-' + [...key].reverse().join('');
const childCall = "await fetch(process.env.API_URL + '/child/' + process.env.CHILD_TOOL_TOKEN, { method: 'POST', body: JSON.stringify({ note: 'token ' + process.env.CHILD_TOOL_TOKEN }) })";
spawnSync(process.execPath, ['--input-type=module', '-e', childCall], { stdio: 'ignore', env: { ...process.env, CHILD_TOOL_TOKEN: childToken } });
// The API's answer (which quotes the secrets) and the session token go back into a prompt.
await model([{ role: 'tool', content: answer }, { role: 'user', content: 'session ' + session }]);
if (HOLD) {
  writeFileSync(HOLD, String(process.pid));
  await new Promise((resolve) => setTimeout(resolve, 60_000));
}
`;

let server: TestServer;
let received = '';
beforeAll(async () => {
  server = await startServer((req, body, res) => {
    received += `${req.url} ${body}\n`;
    if (req.url?.startsWith('/v1/chat/completions')) {
      const key = /My key is (\S+)/.exec(body)?.[1] ?? 'none';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: `I will look up ${key}.`,
                tool_calls: [
                  { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ key }) } },
                ],
              },
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
      return;
    }
    // The API echoes what it was sent (URL and body) in its answer, and hands out a session token.
    res.writeHead(200, { 'content-type': 'application/json', 'x-session-token': SESSION });
    res.end(JSON.stringify({ url: decodeURIComponent(req.url ?? ''), got: JSON.parse(body || '{}') }));
  });
});
afterAll(async () => {
  await server?.close();
  tmp.remove();
});

/** Every form a secret may take in a stored file: as it is, URL-encoded, JSON-escaped, base64 at each alignment. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  for (let pad = 0; pad < 3; pad++) {
    const b64 = Buffer.concat([Buffer.alloc(pad), Buffer.from(secret)]).toString('base64');
    // The groups the padding or the end share with other bytes differ with them: the middle does not.
    forms.add(b64.slice(pad === 0 ? 0 : 4, -4));
  }
  return [...forms];
}

/** Where any form of any secret is found in these files. */
function leaks(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      continue;
    }
    for (const secret of ALL)
      for (const form of formsOf(secret)) if (bytes.includes(form)) found.push(`${file}: ${JSON.stringify(form)}`);
  }
  return found;
}

function tmpEntries(): Set<string> {
  return new Set(readdirSync(os.tmpdir()));
}
/** The files of the temp entries made since `before` (not this test's own folder). */
function newTmpFiles(before: Set<string>): string[] {
  const files: string[] = [];
  for (const name of readdirSync(os.tmpdir())) {
    const p = path.join(os.tmpdir(), name);
    if (before.has(name) || p === tmp.dir) continue;
    files.push(...filesUnder(p));
    if (existsSync(p) && lstatSync(p).isFile()) files.push(p);
  }
  return files;
}

const agentFile = path.join(tmp.dir, 'agent.mjs');
writeFileSync(agentFile, AGENT);
const envOf = (extra: Record<string, string> = {}) => ({
  ...ENV,
  MODEL_URL: server.url,
  API_URL: server.url,
  ...extra,
});

const bwrap = detectIsolation().level === 'bwrap';

describe('secrets known by their names, quoted elsewhere by a recorded agent', () => {
  it.each([['record', []], ...(bwrap ? [['record --isolate', ['--isolate']]] : [])] as Array<[string, string[]]>)(
    'reach no file of the recording nor of the temp folder (%s), and an exact replay still matches',
    { timeout: 180_000 },
    async (name, flags) => {
      received = '';
      const before = tmpEntries();
      const out = path.join(tmp.dir, name.replace(/\W+/g, '-'));
      // The secrets are the CLI's own env, which the agent inherits.
      const run = await tapedeck(['record', ...flags, '--out', out, '--', process.execPath, agentFile], {
        cwd: tmp.dir,
        env: envOf(),
        timeoutMs: 150_000,
      });
      expect(run.code, run.stderr).toBe(0);
      // The agent really sent every secret, and printed them.
      for (const secret of [...Object.values(SECRETS), SESSION, CHILD]) expect(received).toContain(secret);
      expect(run.stdout).toContain(SECRETS.ACME_API_KEY);
      const recording = await readRecording(out);
      const types = recording.events.map((e) => e.type);
      expect(types.filter((t) => t === 'model.called')).toHaveLength(2);
      expect(types).toContain('tool.called');
      expect(readFileSync(path.join(out, 'events.jsonl'), 'utf8')).toContain('[REDACTED:hmac:');

      expect(leaks([...filesUnder(out), ...newTmpFiles(before)])).toEqual([]);

      // The replayer has the same env: the live requests redact to the recorded text.
      const replayOut = path.join(tmp.dir, `${name.replace(/\W+/g, '-')}-replay`);
      const replayed = await replayExact(out, replayOut, 'none', envOf());
      expect(replayed.divergences).toEqual([]);
      expect(replayed.exitCode).toBe(0);
      expect(leaks(filesUnder(replayOut))).toEqual([]);
    },
  );

  it('reach no file when the recorder is SIGKILLed mid-run (its spool and staging left behind)', {
    timeout: 120_000,
  }, async () => {
    received = '';
    const before = tmpEntries();
    const out = path.join(tmp.dir, 'killed');
    const hold = path.join(tmp.dir, 'agent.pid');
    const recorder: ChildProcess = spawn(
      process.execPath,
      [bin, 'record', '--out', out, '--', process.execPath, agentFile],
      {
        cwd: root,
        env: { ...process.env, ...envOf({ HOLD: hold }) },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<void>((resolve) => recorder.once('exit', () => resolve()));
    // The agent has made every call and holds; the recorder has had a moment to write them.
    const deadline = Date.now() + 90_000;
    while (!existsSync(hold) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(hold)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    recorder.kill('SIGKILL');
    await exited;
    const agentPid = Number(readFileSync(hold, 'utf8'));
    try {
      process.kill(agentPid, 'SIGKILL');
    } catch {}
    for (const secret of [...Object.values(SECRETS), SESSION, CHILD]) expect(received).toContain(secret);
    const files = [...filesUnder(out), ...newTmpFiles(before)];
    // The run's spool (encrypted) is among what is searched: the kill left it.
    expect(files.some((f) => f.includes(`${path.sep}.spool${path.sep}`))).toBe(true);
    expect(leaks(files)).toEqual([]);
    // The socket the killed recorder left in the temp folder (the next tapedeck command would remove it).
    for (const name of readdirSync(os.tmpdir()))
      if (!before.has(name) && name.startsWith(`tapedeck-${recorder.pid}-`))
        rmSync(path.join(os.tmpdir(), name), { force: true });
  });
});
