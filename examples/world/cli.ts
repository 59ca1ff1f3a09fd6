// Start the example world from a shell and print the env an agent needs:
//   npx tsx examples/world/cli.ts [--db postgres://…] [--fresh-db] [--workspace DIR] [--model-log FILE] [--json]
import { parseArgs } from 'node:util';
import { startWorld } from './index.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    'fresh-db': { type: 'boolean', default: false },
    workspace: { type: 'string' },
    'model-log': { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  process.stdout.write(`Start the tapedeck example world (travel desk API, FAKE model server, database).

Usage: npx tsx examples/world/cli.ts [options]
  --db URL          use this Postgres server instead of the embedded PGlite
  --fresh-db        with --db: create a uniquely named database and drop it on exit
  --workspace DIR   the agent's workspace folder (default: a temp folder)
  --model-log FILE  also write the fake model server's log (JSON lines) to FILE
  --json            print the env as JSON

Then, in another shell, export the printed env and run an agent:
  node examples/agents/openai-agent.mjs [--stream]
  SYSTEM_PROMPT_FILE=examples/prompts/fixed.txt node examples/agents/anthropic-agent.mjs
`);
  process.exit(0);
}

const world = await startWorld({
  ...(values.db === undefined ? {} : { db: values.db, freshDatabase: values['fresh-db'] }),
  ...(values.workspace === undefined ? {} : { workspace: values.workspace }),
  ...(values['model-log'] === undefined ? {} : { modelLogFile: values['model-log'] }),
});
if (values.json) process.stdout.write(`${JSON.stringify(world.env, null, 2)}\n`);
else {
  process.stdout.write(`# tapedeck example world (${world.dbKind}); Ctrl-C to stop. Export these to run an agent:\n`);
  for (const [key, value] of Object.entries(world.env)) process.stdout.write(`export ${key}='${value}'\n`);
}
const stop = () => {
  world.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
