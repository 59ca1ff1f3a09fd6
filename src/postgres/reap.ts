// Connects to a server named by a leftover entry and removes what a dead run left there.
import { connectDb } from './connect.js';
import { type LeftoverReport, removeCaptureLeftovers, removeSandboxLeftovers } from './leftovers.js';
import { redactDbUrl } from './sql.js';

export type DatabaseItem =
  | { kind: 'pg-sandbox'; url: string; name: string }
  | { kind: 'pg-capture'; url: string; schema?: string };

/** Removes the sandbox database and role, or the dead capture objects, an entry names; returns what went. */
export async function reapDatabaseItem(item: DatabaseItem, url: string): Promise<string[]> {
  // A server that does not answer in 5 s is left for later.
  const client = await connectDb(url, { application: 'tapedeck cleanup', timeoutMs: 5000 });
  try {
    const report: LeftoverReport =
      item.kind === 'pg-sandbox'
        ? await removeSandboxLeftovers(client, [item.name])
        : await removeCaptureLeftovers(client, { dead: item.schema === undefined ? [] : [item.schema] });
    if (report.failed.length > 0) throw new Error(report.failed.join('; '));
    const own = item.kind === 'pg-sandbox' ? `database ${item.name}` : `schema ${item.schema}`;
    if (report.live.includes(own)) throw new Error(`${own} is still held by a session of the dead run`);
    return report.removed.map((r) => `${r} (${redactDbUrl(url)})`);
  } finally {
    await client.end().catch(() => {});
  }
}
