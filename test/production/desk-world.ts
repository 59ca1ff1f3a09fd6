// The stock desk world for the production-recording tests and bench: a uniquely named database
// on the Postgres server (schema desk: items, customers, orders, audit, policies) with a login
// role of its own whose statements the server logs (ALTER ROLE … SET log_statement = 'all': that
// role only, never the server's configuration), the example model server with the desk's scripted
// policy, and the desk server as a child process that can be killed.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startModelServer } from '../../examples/world/model-server.js';
import { deskPolicy } from './desk-policy.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DESK_AGENT = path.join(here, 'desk-agent.mjs');

export interface DeskDatabase {
  name: string;
  role: string;
  /** The role's URL (with its password): what the desk server and the agent use. */
  url: string;
  /** The admin URL of the same database. */
  adminUrl: string;
  drop(): Promise<void>;
}

/** Creates the desk database with `items` items, and its logged role. */
export async function createDeskDatabase(adminUrl: string, options: { items: number }): Promise<DeskDatabase> {
  const suffix = randomBytes(4).toString('hex');
  const name = `tdprod_desk_${suffix}`;
  const role = `tdprod_role_${suffix}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
  await admin.query(`ALTER ROLE ${role} SET log_statement = 'all'`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const dbAdminUrl = u.toString();
  const setup = new pg.Client({ connectionString: dbAdminUrl });
  await setup.connect();
  await setup.query(`
    CREATE SCHEMA desk;
    CREATE TABLE desk.items (id bigserial PRIMARY KEY, sku text UNIQUE NOT NULL, qty integer NOT NULL, price numeric(10,2) NOT NULL);
    CREATE TABLE desk.customers (id integer PRIMARY KEY, name text NOT NULL);
    CREATE TABLE desk.orders (id uuid PRIMARY KEY, item_id bigint NOT NULL REFERENCES desk.items(id),
      customer_id integer NOT NULL REFERENCES desk.customers(id), qty integer NOT NULL, placed_at timestamptz NOT NULL);
    CREATE TABLE desk.audit (id bigserial PRIMARY KEY, what text NOT NULL, order_id uuid NOT NULL);
    CREATE TABLE desk.policies (id integer PRIMARY KEY, body text NOT NULL);
    INSERT INTO desk.customers SELECT g, 'customer ' || g FROM generate_series(1, 500) g;
    INSERT INTO desk.policies VALUES (1, 'Reserve only what is in stock.'), (2, 'Unused policy.');
    INSERT INTO desk.items (sku, qty, price)
      SELECT 'SKU-' || lpad(g::text, 7, '0'), 1000, (g % 90) + 0.5 FROM generate_series(1, ${options.items}) g;
    ANALYZE desk.items;
    GRANT USAGE ON SCHEMA desk TO ${role};
    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA desk TO ${role};
    GRANT USAGE ON ALL SEQUENCES IN SCHEMA desk TO ${role};
  `);
  await setup.end();
  const roleUrl = new URL(dbAdminUrl);
  roleUrl.username = role;
  roleUrl.password = password;
  return {
    name,
    role,
    url: roleUrl.toString(),
    adminUrl: dbAdminUrl,
    async drop() {
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.query(`DROP ROLE IF EXISTS ${role}`);
      await a.end();
    },
  };
}

/** The example model server answering with the desk's policy. */
export function startDeskModel(latencyMs: number | (() => number) = 0) {
  return startModelServer({ policy: deskPolicy, latencyMs });
}

export interface DeskServer {
  url: string;
  child: ChildProcess;
  /** Ids the server reported as recorded (finished), in order. */
  recorded: string[];
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts the desk server as a child process (node --import tsx) and waits for its port. */
export async function startDeskServer(env: Record<string, string>): Promise<DeskServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'desk-server.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const recorded: string[] = [];
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`desk server did not start: ${err}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      let nl = out.indexOf('\n');
      while (nl >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        nl = out.indexOf('\n');
        const listening = /^listening (\d+)$/.exec(line);
        if (listening) {
          clearTimeout(timer);
          resolve(Number(listening[1]));
        }
        const rec = /^recorded (\S+)$/.exec(line);
        if (rec) recorded.push(rec[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`desk server exited (${code}): ${err}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    recorded,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface SessionInput {
  session: number;
  sku: string;
  qty: number;
  customer: number;
  stream: boolean;
  modelUrl: string;
  secret: string;
}

/** The input of session n: its own item and customer; half the sessions stream. */
export function sessionInput(n: number, modelUrl: string, secret: string): SessionInput {
  return {
    session: n,
    sku: `SKU-${String(1000 + n * 7).padStart(7, '0')}`,
    qty: 1 + (n % 3),
    customer: 1 + (n % 400),
    stream: n % 2 === 1,
    modelUrl,
    secret,
  };
}

/** POSTs one session (with extra request headers); resolves with the status, the recording id header and the JSON body. */
export async function postSession(
  serverUrl: string,
  input: SessionInput,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  id: string | null;
  body: { answer?: string; drawn?: { clock: number[]; random: number[]; uuid: string[] } };
}> {
  const res = await fetch(`${serverUrl}/session`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'x-session': String(input.session) },
    body: JSON.stringify(input),
  });
  const text = await res.text();
  return { status: res.status, id: res.headers.get('x-tapedeck-recording'), body: JSON.parse(text) };
}
