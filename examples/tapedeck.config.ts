// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the config's placeholders look like template strings on purpose
// The travel desk's project file: a replay whose agent calls the travel API with a request the
// recording does not hold gets its answer from the API itself, re-hosted in the sandbox against
// the sandbox database (never the real API or database). `npm run demo` step 2 uses it; from the
// CLI: `tapedeck replay <recording> --config examples/tapedeck.config.ts …`.
import { defineConfig } from '../src/config/index.js';

export default defineConfig({
  services: [
    {
      name: 'travel API',
      // The agent finds the API in TRAVEL_API_URL; the recording keeps the value it had.
      origin: '${env.TRAVEL_API_URL}',
      command: ['node', '--import', 'tsx', 'world/serve.ts', 'travel'],
      env: { DATABASE_URL: '${sandbox.db}', PORT: '${port}' },
      ready: '/health',
    },
  ],
});
