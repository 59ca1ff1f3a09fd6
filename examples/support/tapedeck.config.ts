// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the config's placeholders look like template strings on purpose
// The support desk's project file: its REST API re-hosted in the sandbox against the sandbox
// database, for replays whose agent calls it with requests the recording does not hold.
import { defineConfig } from '../../src/config/index.js';

export default defineConfig({
  services: [
    {
      name: 'support API',
      origin: '${env.SUPPORT_API_URL}',
      command: ['node', '--import', 'tsx', '../world/serve.ts', 'support'],
      env: { DATABASE_URL: '${sandbox.db}', PORT: '${port}' },
      ready: '/health',
    },
  ],
});
