// Start the example world from a shell and print the env an agent needs, or run one agent in it:
//   npx tsx examples/world/cli.ts [--db postgres://…] [--fresh-db] [--workspace DIR] [--model-log FILE] [--json]
//   npx tsx examples/world/cli.ts --run openai|anthropic|openai-responses|gemini [--stream] [--prompt baseline|fixed|FILE]
import { parseArgs } from 'node:util';
import { AGENTS, type AgentName, startWorld } from './index.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    'fresh-db': { type: 'boolean', default: false },
    workspace: { type: 'string' },
    'model-log': { type: 'string' },
    json: { type: 'boolean', default: false },
    run: { type: 'string' },
    stream: { type: 'boolean', default: false },
    prompt: { type: 'string', default: 'baseline' },
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
  --json            print the env as JSON (with --run: the answer and end state)
  --run AGENT       run one agent (openai, anthropic, openai-responses or gemini) from the seed state, print the
                    answer and the end state, and stop
  --stream          with --run: stream the model's answers
  --prompt P        with --run: baseline (default), fixed, or a prompt file

Then, in another shell, export the printed env and run an agent:
  node examples/agents/openai-agent.mjs [--stream]
  SYSTEM_PROMPT_FILE=examples/prompts/fixed.txt node examples/agents/anthropic-agent.mjs
`);
  process.exit(0);
}

if (values.run !== undefined && !(values.run in AGENTS)) {
  process.stderr.write(`--run must be one of ${Object.keys(AGENTS).join(', ')}, not ${values.run}\n`);
  process.exit(2);
}

const world = await startWorld({
  ...(values.db === undefined ? {} : { db: values.db, freshDatabase: values['fresh-db'] }),
  ...(values.workspace === undefined ? {} : { workspace: values.workspace }),
  ...(values['model-log'] === undefined ? {} : { modelLogFile: values['model-log'] }),
});
if (values.run !== undefined) {
  try {
    const run = await world.runAgent({ agent: values.run as AgentName, stream: values.stream, prompt: values.prompt });
    const state = await world.state();
    if (values.json)
      process.stdout.write(`${JSON.stringify({ exitCode: run.exitCode, answer: run.answer, state }, null, 2)}\n`);
    else {
      process.stderr.write(run.stderr);
      process.stdout.write(
        `${run.answer}\n\nbookings: ${JSON.stringify(state.db.bookings)}\nfiles: ${Object.keys(state.files).join(', ')}\n`,
      );
    }
    process.exitCode = run.exitCode ?? 1;
  } finally {
    await world.stop();
  }
} else {
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
}
