// LlamaIndex.TS (`llamaindex` + `@llamaindex/openai`), unchanged: a FunctionAgent of the agent
// workflow API with two tools — one calls the weather API with fetch, one writes a row of a real
// Postgres database — driven through the whole CLI journey (test/sdks/journey.ts). Its streamed
// chat sends no `stream_options.include_usage`: the FAKE model, as the real API, then sends no usage.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { installedVersion, tempDir } from './harness.js';
import { runJourney } from './journey.js';
import { startFakeOpenAI } from './servers/fake-openai.js';
import { startWeatherApi } from './servers/weather-api.js';

const BASE = process.env.TAPEDECK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PROMPT = 'You are a weather desk. Use get_forecast, then log_reading, then answer.';

let tmp: ReturnType<typeof tempDir>;
let admin: pg.Client;
let name: string;
let url: string;
beforeAll(async () => {
  tmp = tempDir();
  name = `tapedeck_llamaindex_${randomBytes(4).toString('hex')}`;
  admin = new pg.Client({ connectionString: BASE });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(BASE);
  u.pathname = `/${name}`;
  url = u.toString();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(`CREATE SCHEMA desk;
    CREATE TABLE desk.readings (id serial PRIMARY KEY, city text NOT NULL, temp_c numeric NOT NULL);
    INSERT INTO desk.readings (city, temp_c) VALUES ('Oslo', 4);`);
  await db.end();
});
afterAll(async () => {
  await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin?.end();
  tmp?.remove();
});

const CONTRACT = `task_id: weather_log_001
input: { user_instruction: What is the weather in Paris today? Log the reading. }
success_criteria:
  required_outputs: [final_answer]
  must_include: [logged]
  execution_result: { required: true, must_include: [execution_status] }
fields: { logged: 'logged', execution_status: 'logged' }
execution:
  action: { tool: log_reading }
  target: { table: desk.readings, city: Paris }
  max_executions: 1
expected_state:
  rows:
    - { table: desk.readings, where: { city: Paris }, count: 1 }
  side_effects: fail
rules:
  - { id: order, order: [get_forecast, log_reading] }
`;

describe(`LlamaIndex.TS (llamaindex ${installedVersion('llamaindex')}, @llamaindex/openai ${installedVersion('@llamaindex/openai')}) FunctionAgent`, () => {
  it('goes through record, verify, exact and changed-prompt replays, ledger, eval and bisect with the CLI', {
    timeout: 400_000,
  }, async () => {
    const model = await startFakeOpenAI({
      toolPlan: ['get_forecast', 'log_reading'],
      toolArgs: { get_forecast: { city: 'Paris' }, log_reading: { city: 'Paris', tempC: 18 } },
      streamUsage: 'when-asked',
    });
    const weather = await startWeatherApi();
    const rows = async () => {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        return (await db.query('SELECT id, city, temp_c::float AS temp_c FROM desk.readings ORDER BY id')).rows;
      } finally {
        await db.end();
      }
    };
    try {
      const { recorded } = await runJourney({
        agent: 'llamaindex-agent.mjs',
        env: {
          OPENAI_BASE_URL: `${model.url}/v1`,
          OPENAI_API_KEY: 'sk-fake-llamaindex',
          WEATHER_URL: weather.url,
          DATABASE_URL: url,
        },
        worldFlags: ['--db', url, '--db-schema', 'desk'],
        steps: [
          ['THINK', 'fake-gpt-1'],
          ['API_CALL', 'get_forecast'],
          ['THINK', 'fake-gpt-1'],
          ['DB_QUERY', 'log_reading'],
          ['FINALIZE', 'fake-gpt-1'],
        ],
        prompt: PROMPT,
        model,
        weather,
        world: rows,
        contract: CONTRACT,
        dir: tmp.dir,
      });
      expect(await rows()).toEqual([
        { id: 1, city: 'Oslo', temp_c: 4 },
        { id: 2, city: 'Paris', temp_c: 18 },
      ]);
      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.runtime.sdkVersions).toMatchObject({
        llamaindex: installedVersion('llamaindex'),
        '@llamaindex/openai': installedVersion('@llamaindex/openai'),
      });
      expect(weather.hits()).toBe(1);
    } finally {
      await model.close();
      await weather.close();
    }
  });
});
