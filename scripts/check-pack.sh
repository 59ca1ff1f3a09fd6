#!/usr/bin/env bash
# `npm pack`, checked as a user meets it: install the tarball into an empty folder, import it with
# plain node, type-check a TypeScript file against it, run the CLI (record and replay a small
# agent, so the preloads are proven to ship and to find their dependencies), and run a vitest test
# that records with `tapedeck/vitest` and then replays with its server gone. Run by .ci/run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-pack-XXXXXX")"
trap 'rm -rf "$work"' EXIT

cd "$repo"
tarball="$(npm pack --silent --pack-destination "$work" | tail -n1)"
version="$(node -p "require('./package.json').version")"
vitest_version="$(node -p "require('./node_modules/vitest/package.json').version")"
echo "check-pack: $tarball"

mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null
npm pkg set type=module >/dev/null
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$work/$tarball" "@types/node@20" "vitest@$vitest_version" >/dev/null

# 1. Plain node, ESM: the package's main exports are functions.
node --input-type=module -e "
import { record, replay, evaluateRecording, buildLedger, bisectBelief, readRecording } from 'tapedeck';
for (const [name, fn] of Object.entries({ record, replay, evaluateRecording, buildLedger, bisectBelief, readRecording }))
  if (typeof fn !== 'function') throw new Error(name + ' is not exported as a function');
"
node --input-type=module -e "
const { defineConfig } = await import('tapedeck/config');
if (typeof defineConfig !== 'function') throw new Error('tapedeck/config has no defineConfig');
const { withRecording, runRecorded, replayTest } = await import('tapedeck/vitest');
for (const fn of [withRecording, runRecorded, replayTest]) if (typeof fn !== 'function') throw new Error('tapedeck/vitest is incomplete');
"

# 2. Types resolve in a strict TypeScript project (module NodeNext), and a wrong use is an error.
cat > tsconfig.json <<'JSON'
{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "strict": true, "noEmit": true, "types": ["node"] }, "files": ["check.ts"] }
JSON
cat > check.ts <<'TS'
import { type Recording, readRecording, record, replay, type ReplayResult } from 'tapedeck';
import { defineConfig, type TapedeckConfig } from 'tapedeck/config';
import { type RecordedRun, runRecorded, withRecording } from 'tapedeck/vitest';
export const run: Promise<RecordedRun> = runRecorded({ command: ['node', 'agent.mjs'], dir: 'r' });
export const n: Promise<number> = withRecording(async () => 1, { mode: 'replay' });
export const config: TapedeckConfig = defineConfig({});
export async function check(dir: string): Promise<number> {
  const recording: Recording = await readRecording(dir);
  const result: ReplayResult = await replay({ recording: dir, mode: 'exact' });
  const recorded = await record({ name: 'typed' }, async () => 42);
  return recording.events.length + result.divergences.length + String(recorded.dir).length;
}
TS
node "$repo/node_modules/typescript/bin/tsc" -p .
echo "const n: number = (await import('tapedeck')).readRecording;" > wrong.ts
if node "$repo/node_modules/typescript/bin/tsc" --module NodeNext --moduleResolution NodeNext --target ES2022 --strict --noEmit wrong.ts >/dev/null 2>&1; then
  echo "check-pack: a type error against the package's types was not reported (are the types any?)" >&2
  exit 1
fi

# 3. The CLI, through npx as a user runs it.
got="$(npx --no-install tapedeck --version)"
[ "$got" = "$version" ] || { echo "check-pack: npx tapedeck --version printed '$got', expected $version" >&2; exit 1; }
cp -r "$repo/recordings/examples/openai-baseline" ./example
npx --no-install tapedeck verify ./example >/dev/null
cat > agent.mjs <<'JS'
import { createServer } from 'node:http';
const server = createServer((req, res) => res.end(JSON.stringify({ n: Math.random() })));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address();
const body = await (await fetch(`http://127.0.0.1:${port}/n`)).text();
console.log('answer', body.length > 0);
server.close();
JS
npx --no-install tapedeck record --out ./run -- node agent.mjs >/dev/null
npx --no-install tapedeck verify ./run >/dev/null
npx --no-install tapedeck replay ./run --json >/dev/null
# 4. tapedeck/vitest in the user's own vitest (a generous timeout: vitest's 5 s default was hit on a
#    loaded CI machine): the first run records (the server is up), the second
#    replays from the committed-style __recordings__ folder with no server at all, as CI would.
cat > answer.test.mjs <<'JS'
import { createServer } from 'node:http';
import { expect, it } from 'vitest';
import { withRecording } from 'tapedeck/vitest';
it('gets the answer', async () => {
  let server;
  let url = 'http://127.0.0.1:9/answer';
  if (process.env.LIVE) {
    server = createServer((req, res) => res.end(JSON.stringify({ n: 42 })));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${server.address().port}/answer`;
  }
  const n = await withRecording(async () => (await (await fetch(url)).json()).n);
  server?.close();
  expect(n).toBe(42);
});
JS
env -u CI LIVE=1 npx --no-install vitest run answer.test.mjs --testTimeout=120000 >/dev/null
ls __recordings__/answer.test.mjs/gets-the-answer/manifest.json >/dev/null
CI=true npx --no-install vitest run answer.test.mjs --testTimeout=120000 >/dev/null
echo "check-pack: ok ($tarball installed, imported, type-checked, CLI recorded and replayed, vitest helper recorded and replayed)"
