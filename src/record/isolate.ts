// `record --isolate`: the agent's whole tree runs in the OS sandbox (sandbox/os) with the real
// run's files (a recording changes the world for real) and no network but tapedeck's doors:
//   - the recording proxy (sandbox/proxy): every HTTP(S) call of any process — curl, Python,
//     wget, a Go binary, and Node's own (the preload hands them over) — is made here, for real,
//     and recorded as the preload records Node's (the same capture messages, so it becomes a model
//     or tool step the same way); with world capture it keeps the step barriers; a WebSocket
//     upgrade through it is made and its conversation recorded (isolate-websocket.ts);
//   - the database: the ports of the database URLs the run names lead to the real database, and
//     so does the database's own address where it is another machine's (10.0.3.7: made the
//     sandbox's own, sandbox/os/netns.ts), for psql -h 10.0.3.7 as for the Node client;
//   - a service the run names by a URL at another machine's address (an env value
//     http://10.0.3.7:8080/…): that address inside leads to the recording proxy, which makes the
//     call and records it, for a client that reaches it directly (curl with NO_PROXY naming it);
//     one it names by a host name (http://api.internal:8080) the same, at a loopback address of
//     the name's own inside (OsSandbox.named, written to /etc/hosts there);
//   - the preload's IPC (loopback inside).
// Anything else is refused by the kernel and named (strace) as a side channel of the recording.
import net from 'node:net';
import { delimiter } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay, setImmediate as turn } from 'node:timers/promises';
import { Agent, fetch, Headers, type Response } from 'undici';
import type { Isolation } from '../../sandbox/os/detect.js';
import { OtherMachineDoors, openNamedDoors, pipeConnections } from '../../sandbox/os/doors.js';
import { pathsIn } from '../../sandbox/os/launcher.js';
import { nonLoopback, otherMachines } from '../../sandbox/os/netns.js';
import { type OsSandbox, openOsSandbox } from '../../sandbox/os/sandbox.js';
import type { OsAttempt } from '../../sandbox/os/trace.js';
import { PYTHON_COVERED_ENV } from '../../sandbox/preload/shared-python.mjs';
import { wireOf } from '../../sandbox/protocol.js';
import {
  CLIENT_LEFT,
  createSandboxProxy,
  type HeaderPairs,
  type ProxyRequest,
  type ProxyResponse,
} from '../../sandbox/proxy/server.js';
import { proxyEnv, writeTrust } from '../../sandbox/proxy/trust.js';
import { isolatedSites, pythonsOf } from '../../sandbox/python/hook.js';
import { loopbackPgEnv } from '../postgres/connect.js';
import { TEXT_STREAM_TYPES } from '../providers/index.js';
import { TapedeckError } from '../recording/index.js';
import { flushProxyWebSockets, webSocketDoor } from './isolate-websocket.js';

export { agentTrust } from '../../sandbox/proxy/trust.js';

const HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'host',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'content-length',
]);
const nowMs = () => performance.timeOrigin + performance.now();

/** How the recording proxy talks to the recording session: capture messages, and step barriers. */
export interface CaptureSink {
  send(message: Record<string, unknown>): void;
  /** Resolves once the session has handled everything before it (a step barrier). */
  sync(reason: 'req' | 'res'): Promise<void>;
  syncWorld: boolean;
}

export interface RecordSandbox {
  readonly box: OsSandbox;
  readonly ipcListener: net.Server;
  readonly ipcAddress: string;
  readonly proxyUrl: string;
  /** The ports open inside besides the proxy's (IPC, databases): a Node process's way to anything else is the proxy. */
  readonly doors: number[];
  /** What the recording should say: an address of another machine the sandbox could not serve inside. */
  readonly notes: string[];
  /** The interpreters (real paths) whose own sitecustomize is covered: -I/-E start the hook in them. */
  readonly pythonsCovered: string[];
  env(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Refused ways out, named (strace): the recording is incomplete where they are. */
  attempts(): OsAttempt[];
  /** Writes the turns of WebSocket conversations still open (the agent has exited). */
  flushTurns(): void;
  /**
   * Waits (at most a second) for the streams under way to be recorded to their end: a stream its
   * client left is given LEFT_GRACE_MS for its server's end, which can pass after the agent exits.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

function headerObject(pairs: HeaderPairs): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}${key === 'set-cookie' ? '\n' : ', '}${value}`;
  }
  return out;
}

/** The upstream answer's headers as pairs (each Set-Cookie on its own), minus what no longer holds for a decoded body. */
function responsePairs(headers: Headers): HeaderPairs {
  const out: HeaderPairs = [];
  headers.forEach((value, name) => {
    if (name === 'set-cookie' || name === 'content-encoding' || name === 'content-length') return;
    out.push([name, value]);
  });
  for (const cookie of headers.getSetCookie()) out.push(['set-cookie', cookie]);
  return out;
}

/**
 * A stream its client left before the server ended it (a client that stops reading at `[DONE]` and
 * closes): recorded as the preload records a fetch the agent aborted, an AbortError after the
 * chunks it was served, which a replay serves again and holds open until the client leaves again.
 */
const clientLeft = () => ({ code: 'AbortError', message: CLIENT_LEFT });
/**
 * How long a stream its client left is given to end: a client that stops at its last event
 * (`[DONE]`) and closes often leaves while the server's end of the stream is on its way or
 * already read, and such a stream was served whole: recorded ended, not left (its model step a
 * success, not an AbortError).
 */
const LEFT_GRACE_MS = 100;
/**
 * The grace, then one turn of the event loop past its I/O: what had reached the socket by then is
 * read first, however late the timer ran (a loaded machine may run it with the server's end unread).
 */
const graceOver = (signal?: AbortSignal) =>
  delay(LEFT_GRACE_MS, undefined, signal ? { signal } : {}).then(() => turn(undefined, signal ? { signal } : {}));

/** What the proxy's upstream calls share: the way out (trusting the agent's CAs) and where the run is told of what it could not make. */
interface Upstream {
  sink: CaptureSink;
  dispatcher: Agent;
  /** Streams under way, each settled once its end is recorded (settle() waits for them). */
  streams: Set<Promise<void>>;
  /** A call the proxy could not make as the agent would have: said once a host, not recorded as the world's answer. */
  cannot(host: string, reason: string): void;
}

/** Makes one call for real and records it, as the preload's capture would. */
async function forward(
  request: ProxyRequest,
  { sink, dispatcher, cannot, streams }: Upstream,
  id: string,
): Promise<ProxyResponse> {
  const pid = request.pid ?? 0;
  // The process's WebSocket turn so far is written first: its step comes before this call's.
  flushProxyWebSockets(pid);
  if (sink.syncWorld) await sink.sync('req');
  if (request.clientCertificate) {
    // The agent's key stays with the agent: a call made without it is not the one the agent made.
    const { host } = new URL(request.url);
    const reason = `the agent presents a client certificate (mTLS) to ${host}: the recording proxy cannot present it without the agent's key, so this call cannot be recorded under --isolate (record without --isolate)`;
    cannot(host, reason);
    return {
      status: 502,
      headers: [
        ['content-type', 'text/plain'],
        ['x-tapedeck-refused', 'client-certificate'],
      ],
      body: `tapedeck: ${reason}\n`,
    };
  }
  const ts = nowMs();
  const head = {
    id,
    pid,
    ts,
    method: request.method,
    url: request.url,
    headers: headerObject(request.headers),
    ...(request.body.length > 0 ? { body: wireOf(request.body) } : {}),
  };
  // The client's leaving stops the call at once, but a stream's only after the grace: its end may
  // be on its way (LEFT_GRACE_MS).
  const upstreamAbort = new AbortController();
  let streaming = false;
  const stop = () => (streaming ? void graceOver().then(() => upstreamAbort.abort()) : upstreamAbort.abort());
  if (request.signal.aborted) stop();
  else request.signal.addEventListener('abort', stop, { once: true });
  let upstream: Response;
  try {
    const headers = new Headers();
    for (const [name, value] of request.headers) if (!HOP.has(name.toLowerCase())) headers.append(name, value);
    upstream = await fetch(request.url, {
      dispatcher,
      method: request.method,
      headers,
      ...(request.body.length > 0 && request.method !== 'GET' && request.method !== 'HEAD'
        ? { body: new Uint8Array(request.body) }
        : {}),
      redirect: 'manual',
      signal: upstreamAbort.signal,
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    const failure = { code: cause?.code ?? (error as Error).name, message: (error as Error).message };
    sink.send({ t: 'xchg', ...head, end: nowMs(), error: failure });
    if (sink.syncWorld) await sink.sync('res');
    return { status: 0, headers: [], error: failure };
  }
  const resTs = nowMs();
  const pairs = responsePairs(upstream.headers);
  const res = { status: upstream.status, statusText: upstream.statusText, headers: headerObject(pairs) };
  if (upstream.body && TEXT_STREAM_TYPES.test(upstream.headers.get('content-type') ?? '')) {
    streaming = true;
    sink.send({ t: 'req', ...head });
    sink.send({ t: 'res', id, ts: resTs, ...res, stream: true });
    const body = upstream.body;
    return {
      status: upstream.status,
      statusText: upstream.statusText,
      headers: pairs,
      body: (async function* () {
        const decoder = new TextDecoder();
        const reader = body.getReader();
        let ended = false;
        // Its end may come after the agent has exited (the grace of a stream its client left).
        let settled = () => {};
        const recorded = new Promise<void>((resolve) => {
          settled = resolve;
        });
        streams.add(recorded);
        const end = (error?: { code: string; message: string }) => {
          ended = true;
          sink.send({ t: 'end', id, ts: nowMs(), ...(error ? { error } : {}) });
          streams.delete(recorded);
          settled();
        };
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            sink.send({ t: 'chunk', id, off: nowMs() - resTs, data: decoder.decode(value, { stream: true }) });
            yield value;
          }
          end();
        } catch (error) {
          end(request.signal.aborted ? clientLeft() : { code: 'Error', message: String((error as Error).message) });
        } finally {
          // The proxy stopped taking chunks (its client went away while one was on its way): whole
          // when the server's end comes next, within the grace; left otherwise (what follows is
          // not recorded: the agent never saw it).
          if (!ended) {
            const grace = new AbortController();
            const next = await Promise.race([
              reader.read().catch(() => undefined),
              graceOver(grace.signal).catch(() => undefined),
            ]);
            grace.abort();
            if (next?.done === true) end();
            else {
              end(clientLeft());
              void reader.cancel().catch(() => undefined);
            }
          }
          if (sink.syncWorld) await sink.sync('res');
        }
      })(),
    };
  }
  const bytes = Buffer.from(await upstream.arrayBuffer());
  sink.send({
    t: 'xchg',
    ...head,
    res: { ts: resTs, ...res, ...(bytes.length > 0 ? { body: wireOf(bytes) } : {}) },
    end: nowMs(),
  });
  if (sink.syncWorld) await sink.sync('res');
  return { status: upstream.status, statusText: upstream.statusText, headers: pairs, body: bytes };
}

/** Opens the sandbox of a recording (not yet the agent). */
export async function openRecordSandbox(input: {
  isolation: Isolation;
  cwd: string;
  command: string[];
  tmp: string;
  sink: CaptureSink;
  databases: Array<{ host: string; port: number }>;
  /** The Unix sockets of those databases (`databaseSockets`): PGHOST naming their folder leads to their door. */
  dbSockets?: readonly string[];
  /** URLs the run names (its env's values): those at another machine's address get a door there. */
  urls?: Iterable<string>;
  /** The CAs the proxy's upstream connections (HTTP and WebSocket) trust (agentTrust: the agent's own); the default roots when undefined. */
  upstreamCa?: string[] | undefined;
}): Promise<RecordSandbox> {
  const { isolation, sink } = input;
  if (isolation.level !== 'bwrap') {
    throw new TapedeckError(
      'NO_ISOLATION',
      `record --isolate needs the OS sandbox (bubblewrap with user namespaces): ${isolation.notes.join('; ')}`,
    );
  }
  const { createRunCa } = await import('../../sandbox/proxy/ca.js');
  const ca = await createRunCa('tapedeck recording CA');
  const trust = await writeTrust(input.tmp, ca);
  // Python processes started with -I or -E start the hook too (sandbox/python/hook.ts).
  const sites = await isolatedSites(pythonsOf(input.command, [process.env.PATH], input.cwd), input.tmp);
  const box = await openOsSandbox({
    isolation,
    cwd: input.cwd,
    fs: 'shared',
    over: sites.over,
    visible: pathsIn(input.command, input.cwd),
    hosts: input.databases.map((d) => d.host).filter((h) => net.isIP(h) === 0 && h !== 'localhost'),
    caPem: ca.certPem,
  });
  let seq = 0;
  const refused: string[] = [];
  const notes: string[] = [];
  const said = new Set<string>();
  const upstream: Upstream = {
    streams: new Set(),
    sink,
    // The agent's own CAs (a service behind a private CA), as for its WebSockets.
    dispatcher: new Agent(input.upstreamCa === undefined ? {} : { connect: { ca: input.upstreamCa } }),
    cannot(host, reason) {
      if (said.has(host)) return;
      said.add(host);
      notes.push(reason);
    },
  };
  const proxy = createSandboxProxy({
    ca,
    answer: (request) => forward(request, upstream, `proxy-${++seq}`),
    passThrough: webSocketDoor({ send: (message) => sink.send(message), ca: input.upstreamCa }),
    onRefused: (attempt) => refused.push(`${attempt.reason}: ${attempt.target}`),
  });
  const listeners: Array<net.Server & { insidePort: number }> = [];
  /** The doors at other machines' addresses (not ports a Node process connects to directly wherever they are). */
  const others: net.Server[] = [];
  let proxyListener: net.Server & { insidePort: number };
  let ipcListener: net.Server & { insidePort: number };
  try {
    proxyListener = await box.listen();
    proxy.serve(proxyListener);
    ipcListener = await box.listen();
    listeners.push(ipcListener);
    // One listener a port: every name leads to 127.0.0.1 inside, so the run's URLs naming one
    // database as 127.0.0.1 and as localhost (the --db URL, a POSTGRES_URL) share it; the first
    // address given (the --db URL's) is the one it leads to.
    const byPort = new Map<number, { host: string; port: number }>();
    for (const db of input.databases) if (!byPort.has(db.port)) byPort.set(db.port, db);
    for (const db of byPort.values()) {
      // Loopback or a named host: the same port inside leads to the real database.
      const listener = await box.listen(db.port);
      listeners.push(listener);
      pipeConnections(listener, db);
    }
    // At another machine's address, that address inside too (each database its own).
    const doors = new OtherMachineDoors(box, (door) => others.push(door));
    for (const db of input.databases) {
      const ip = nonLoopback(db.host);
      const listener = ip ? await doors.open(ip.address, db.port, 'the database') : undefined;
      if (listener && ip) pipeConnections(listener, { host: ip.address, port: db.port });
    }
    for (const target of otherMachines(input.urls ?? [])) {
      const listener = await doors.open(target.host, target.port, 'a service');
      if (listener) proxy.serveAs(listener, target);
    }
    notes.push(...doors.notes);
    // A service the run names by a host name: the name resolves inside to an address of its own
    // (OsSandbox.named), where the proxy makes the call and records it.
    const named = await openNamedDoors(box, input.urls ?? [], (listener, target) => proxy.serveAs(listener, target));
    others.push(...named.listeners);
    if (named.unserved.length > 0)
      notes.push(
        `services the run names cannot be reached at their host names inside the sandbox on this machine, by programs that skip the proxy: ${named.unserved.join(', ')}`,
      );
  } catch (error) {
    // A door that cannot open ends the recording: nothing of the sandbox is left running.
    for (const l of [...listeners, ...others]) l.close();
    await proxy.close().catch(() => {});
    await upstream.dispatcher.close().catch(() => {});
    await box.close().catch(() => {});
    throw error;
  }
  const proxyUrl = `http://127.0.0.1:${proxyListener.insidePort}`;
  return {
    box,
    ipcListener,
    ipcAddress: `tcp:127.0.0.1:${ipcListener.insidePort}`,
    proxyUrl,
    doors: listeners.map((l) => l.insidePort),
    notes,
    pythonsCovered: sites.covered,
    env: (base) => ({
      ...proxyEnv(base, proxyUrl, trust),
      ...loopbackPgEnv(base, input.dbSockets ?? []),
      [PYTHON_COVERED_ENV]: sites.covered.join(delimiter),
    }),
    attempts: () => [
      ...box.attempts,
      ...refused.map((line) => ({ pid: 0, kind: 'connect' as const, target: line, error: 'refused', line })),
    ],
    flushTurns: () => flushProxyWebSockets(),
    async settle() {
      if (upstream.streams.size === 0) return;
      const bound = new AbortController();
      await Promise.race([
        Promise.all(upstream.streams),
        delay(1000, undefined, { signal: bound.signal }).catch(() => {}),
      ]);
      bound.abort();
    },
    async close() {
      for (const l of [...listeners, ...others]) l.close();
      await proxy.close();
      await upstream.dispatcher.destroy().catch(() => {});
      await box.close();
    },
  };
}
