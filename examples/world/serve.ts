// Runs an example world's REST API as its own process: what `examples/tapedeck.config.ts` re-hosts
// as a sandbox service. `node --import tsx examples/world/serve.ts travel|support`, with the
// database in DATABASE_URL and the port in PORT; prints its URL once it listens.
import { startSupportApi } from '../support/api.js';
import { startTravelApi } from './api.js';

const which = process.argv[2];
const dbUrl = process.env.DATABASE_URL;
const port = Number(process.env.PORT ?? 0);
if ((which !== 'travel' && which !== 'support') || !dbUrl) {
  process.stderr.write('usage: DATABASE_URL=postgres://… PORT=8787 node --import tsx serve.ts travel|support\n');
  process.exit(2);
}
const api = await (which === 'travel' ? startTravelApi : startSupportApi)({ dbUrl, port });
process.stdout.write(`${which} API on ${api.url}\n`);
const stop = () => {
  api.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
