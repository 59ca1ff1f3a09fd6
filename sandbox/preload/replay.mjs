// @ts-check
// The replayer's preload, loaded into the agent process with `node --import` (and inherited by
// node grandchildren through NODE_OPTIONS). Every HTTP request (fetch, http/https) and in-process
// tool() call is answered by the parent replayer over IPC; nondeterministic values come from the
// recording; the recorded fs root is a memfs volume; every other connection is blocked.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { installContainment } from './contain.mjs';
import { installNetworkGuard, sameHost, trustRoutedTls } from './network-guard.mjs';
import { installFsSandbox } from './replay-fs.mjs';
import { installFastHttp } from './replay-http.mjs';
import { installHttp2Replay } from './replay-http2.mjs';
import { connectReplayIpc } from './replay-ipc.mjs';
import { installNondeterminism, watchNodeClockReads } from './replay-nondeterminism.mjs';
import { holdPgReplies } from './replay-pg.mjs';
import { patchFileOps } from './shared-file-ops.mjs';
import { watchMcpStdio } from './shared-mcp-stdio.mjs';
import { quietRequestSockets, wrapSuppressed } from './shared-nondeterminism.mjs';
import {
  flushBeforePosting,
  keepGivenEnv,
  nameChildren,
  processEnvForRedaction,
  processName,
  threadOrigin,
} from './shared-process.mjs';
import { reportUnhookedPython } from './shared-python.mjs';
import { installUnixOverLoopback } from './shared-unix-sockets.mjs';
import { chunkBytesOf, encodeBody, HOP_HEADERS, headerObject, monotonicNow, nowMs } from './shared-wire.mjs';
import { dispatchBody, dispatchRequest, onUndiciLoad, ownDispatch } from './undici-hook.mjs';

/** @typedef {import('../protocol.js').ReplayConfig} ReplayConfig */
/** @typedef {import('../protocol.js').ReplayNotice} ReplayNotice */
/** @typedef {import('../protocol.js').ReplayQuestion} ReplayQuestion */
/** @typedef {import('../protocol.js').FastEntry} FastEntry */
/** @typedef {import('../protocol.js').WireBody} WireBody */

const REPLAYER_KEY = Symbol.for('tapedeck.recorder');
const realWriteFileSync = fs.writeFileSync;
const realReadFileSync = fs.readFileSync;
const held = [];

/** The held streams that end once step `step` is served. */
function heldUntil(step) {
  return typeof step === 'number' ? held.filter((h) => h.after <= step) : [];
}

function releaseHeld(due) {
  for (const h of due) {
    held.splice(held.indexOf(h), 1);
    h.release();
  }
}

function responseFrom(reply, timing, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(reply.headers ?? {})) {
    if (HOP_HEADERS.has(name.toLowerCase())) continue;
    // Set-Cookie values the recorder kept apart (newline-separated) are separate headers again.
    for (const v of String(value).split('\n')) {
      try {
        headers.append(name, v);
      } catch {}
    }
  }
  const status = reply.status >= 200 && reply.status <= 599 ? reply.status : 500;
  let body = null;
  if (![204, 205, 304].includes(status)) {
    if (reply.chunks) {
      const chunks = reply.chunks;
      const factor = timing.kind === 'none' ? 0 : timing.kind === 'scaled' ? timing.factor : 1;
      let i = 0;
      const start = monotonicNow();
      let release;
      const ended = reply.closeAfterStep === undefined ? undefined : new Promise((resolve) => (release = resolve));
      body = new ReadableStream({
        start(controller) {
          // An open stream ends as it did when recorded: when the agent aborts its request.
          if (reply.open && signal) signal.addEventListener('abort', () => controller.error(signal.reason));
        },
        async pull(controller) {
          if (i >= chunks.length) {
            // Recorded as ending after later steps: ends once the replay has served them.
            if (ended) {
              await ended;
              try {
                controller.close();
              } catch {}
              return;
            }
            // Recorded as aborted by the agent: stays open until the agent aborts it.
            if (reply.open) return new Promise(() => {});
            controller.close();
            return;
          }
          const chunk = chunks[i++];
          const wait = factor > 0 ? start + chunk.offsetMs * factor - monotonicNow() : 0;
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          controller.enqueue(chunkBytesOf(chunk));
        },
      });
      if (ended) held.push({ after: reply.closeAfterStep, release });
    } else if (reply.body?.b64 !== undefined) body = Buffer.from(reply.body.b64, 'base64');
    else if (reply.body?.text !== undefined) body = reply.body.text;
  }
  return new Response(body, { status, statusText: reply.statusText ?? '', headers });
}

/** A URL's path and query, as the fast index keeps them. */
function pathAndQuery(url) {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

function encodeChanges(changes) {
  const out = [];
  for (const [abs, v] of Object.entries(changes)) {
    if (v === null) out.push({ abs, gone: true });
    else if (v === 'dir') out.push({ abs, dir: true });
    else out.push({ abs, mode: v.mode, b64: Buffer.from(v.data).toString('base64') });
  }
  return out;
}

/**
 * Starts the replay client in this process from the config file the replayer wrote.
 * @param {ReplayConfig} config
 */
export function installReplay(config) {
  const ipc = connectReplayIpc(config.socket);
  const pid = process.pid;
  ipc.send({
    t: 'hello',
    pid,
    ppid: process.ppid,
    argv: process.argv,
    cwd: process.cwd(),
    env: processEnvForRedaction(),
  });
  let depth = 0;
  const suppressed = () => depth > 0;
  const quiet = (fn) => {
    depth++;
    try {
      return fn();
    } finally {
      depth--;
    }
  };
  const send = (/** @type {ReplayNotice} */ message) => quiet(() => ipc.send(message));
  const sendBatched = (/** @type {ReplayNotice} */ message) => quiet(() => ipc.send(message, { batch: true }));
  // until K: how many more steps the agent may begin without asking (a file operation, a request
  // over a child's stdio) before step K ends; each answer renews it (beginStep below).
  let budget = config.untilBudget;
  // Whether the agent's file steps are reported, for the replay to write them as they happen:
  // where it does not copy the recorded ones (counterfactual, past --fork-at, past a divergence).
  let fileSteps = config.fileSteps === true;
  const ask = (/** @type {ReplayQuestion} */ message) =>
    quiet(() => ipc.sync({ ...message, pid })).then((reply) => {
      if (typeof reply.budget === 'number') budget = reply.budget;
      if (reply.fileSteps === true) fileSteps = true;
      return reply;
    });

  // Which process of the agent's tree this is: it is handed its own recorded process's values.
  // (Claimed before the fs sandbox is installed: the claim is a file of the replay's, not the agent's.)
  const name = processName(path.join(path.dirname(config.dumpPrefix), 'process-'));

  let fsBox;
  if (config.fsRoot) {
    /** @type {Record<string, { mode: number, data: Buffer }>} */
    const files = {};
    const seed = config.seedFile ? JSON.parse(realReadFileSync(config.seedFile, 'utf8')) : { files: [] };
    for (const [abs, mode, b64] of seed.files) files[abs] = { mode, data: Buffer.from(b64, 'base64') };
    fsBox = installFsSandbox({
      root: config.fsRoot,
      files,
      onOutsideWrite: (abs) => send({ t: 'outside-write', path: abs }),
      onRefused: (what) => send({ t: 'side-channel', what: 'fs', target: what, pid }),
      rootOnDisk: config.fsOnDisk === true,
      // The OS sandbox's private folders (MASKED in sandbox/os/sandbox.ts) are not the real disk:
      // the tree shares them, so writes there go to disk (a psql -f, a python3 script sees them),
      // except in the host's folders bound there (the replay's own, the agent's scripts).
      privateDirs: config.privateDirs ?? (config.os ? ['/tmp', '/var/tmp', '/run', '/dev/shm'] : []),
      sharePrivate: config.privateDirs !== undefined,
      hostDirs: config.hostDirs ?? [],
      // The volume is made at first use, inside the agent's calls: what memfs draws is not its.
      quiet,
    });
  }
  const applyEffects = (effects) => {
    if (!fsBox || !effects?.length) return;
    fsBox.applyEffects(
      effects.map((e) => ({
        abs: e.abs,
        mode: e.mode ?? 0o644,
        data: e.gone ? null : Buffer.from(e.b64 ?? '', 'base64'),
      })),
    );
  };
  const takeChanges = () => (fsBox ? encodeChanges(fsBox.takeChanges()) : []);

  // A run recorded in-process starts inside its command (runInput(), record()): the agent's own
  // process draws its own values until then, and a process it starts before is the command's.
  const beforeRun = name !== undefined && (name === '0' || name.startsWith('0.'));
  const gate =
    config.runStart === undefined
      ? undefined
      : name === undefined
        ? config.runStart
        : beforeRun
          ? { never: true }
          : undefined;
  const nd = installNondeterminism(
    (name === undefined ? config.nondeterminism : config.processes?.[name]) ?? {},
    config.seed ?? 1,
    suppressed,
    () => fsBox?.loaded() === true,
    watchNodeClockReads(),
    name,
    // What it was handed this turn, reported at its end (the answers it waits on carry the rest).
    () => {
      const values = nd.takeHanded();
      if (Object.keys(values).some((k) => k !== 'process')) sendBatched({ t: 'values', nd: values });
    },
    gate,
  );
  // The agent's first recorded call (HTTP, tool(), MCP, a database reply) starts its run when the
  // command has not marked it: the values it drew before were its own (ExitDump runStart).
  const callMade = () => nd.startRun('call');
  // The OS sandbox refuses Unix sockets: the tree's own (tsx's CLI and its child) go over its loopback.
  if (config.os === true) installUnixOverLoopback();
  installNetworkGuard(
    { hosts: config.allow ?? [], paths: [path.resolve(config.socket)], unixOverLoopback: config.os === true },
    (target) => send({ t: 'blocked', target }),
    config.routes ?? [],
    undefined,
    config.socketRoutes ?? [],
  );
  // The database's replies wait for the values drawn before them when recorded (replay-pg.mjs).
  // After the guard: it sees the connect the agent made.
  const pgReplies =
    config.dbOrder === true
      ? holdPgReplies(
          (name === undefined ? config.nondeterminism : config.processes?.[name])?.dbReply,
          (drawn) => {
            callMade();
            return nd.hold(drawn);
          },
          name ?? '',
          suppressed,
          config.dbTargets,
          config.dbOneBackend === true,
          nd.drawnAsMany,
        )
      : undefined;
  // wss:// conversations: the replay's answerer presents a certificate of its own CA.
  if (config.webSocketCa) trustRoutedTls(config.routes ?? [], config.webSocketCa);
  // Child processes, workers, UDP, DNS, raw bindings and signals (sandbox/preload/contain.mjs).
  installContainment({
    os: config.os === true,
    preload: import.meta.url,
    report: (what, target) => send({ t: 'side-channel', what, target, pid }),
    beforeSpawn: () => quiet(() => ipc.flush()),
    // What a child process or a worker writes in the world copy is not this thread's to know of.
    started: (running) => fsBox?.foreign(running),
  });
  // After containment, so a child gets its name whatever env containment gives it, and what is
  // tapedeck's in the env (the preload, its config, the OS sandbox's proxy) whatever env the
  // agent gives it.
  // The processes the command starts before its run are its own (`0.n`): the run's first is `1`.
  const startedBeforeRun = nameChildren(
    name,
    gate === undefined || name !== undefined ? undefined : () => nd.runStart()?.by !== undefined,
  );
  keepGivenEnv(import.meta.url);
  // A Python program it starts without tapedeck's hook (python -S) is handed no recorded values: said.
  reportUnhookedPython((found) => send({ t: 'unhooked', pid, ...found }));
  /**
   * A step the agent begins without asking: counted under until K. Past the budget the agent is
   * stopped before it begins (the notice reaches the replayer through the exit's synchronous
   * flush); a file step's notice carries the changes made before it, which are the last step's.
   * @param {'file' | 'rpc'} what
   */
  const beginStep = (what) => {
    if (budget === undefined) {
      if (what === 'file' && fileSteps) sendBatched({ t: 'begin', what, fs: takeChanges(), nd: nd.takeHanded() });
      return;
    }
    if (budget > 0) {
      budget--;
      if (what === 'file') sendBatched({ t: 'begin', what, fs: takeChanges(), nd: nd.takeHanded() });
      return;
    }
    sendBatched({ t: 'begin', what, stop: true, fs: takeChanges(), nd: nd.takeHanded() });
    process.exit(0);
  };
  if (fsBox) {
    // The agent's file operations under the root, the recorder's own (shared-file-ops.mjs): each
    // begins a step (until K counts it) and, when reported, ends as the recorder's message of it
    // with the changes it made. Otherwise a call goes straight through.
    /** @param {Record<string, unknown>} message */
    const fileDone = (message) => {
      if (!fileSteps) return;
      const { t: _t, id: _id, pid: _pid, ...call } = message;
      const notice = /** @type {ReplayNotice} */ ({ t: 'file', ...call, fs: takeChanges(), nd: nd.takeHanded() });
      sendBatched(notice);
    };
    /** @type {import('./shared-file-ops.mjs').FileStepHooks<true>} */
    const hooks = {
      before: () => beginStep('file'),
      async fileOp(_run, fileRun, report) {
        const ts = nowMs();
        let value;
        try {
          value = await fileRun();
        } catch (error) {
          fileDone(report(ts, undefined, error));
          throw error;
        }
        fileDone(report(ts, value, undefined));
        return value;
      },
      fileStart: () => ({ mine: undefined, ready: undefined }),
      fileDone: (_run, message) => fileDone(message),
    };
    patchFileOps(
      path.resolve(config.fsRoot),
      hooks,
      () => (budget !== undefined || fileSteps ? true : undefined),
      suppressed,
    );
  }
  // An MCP server over stdio answers again: each request and its answer is a step of the replay.
  watchMcpStdio({
    current: () => true,
    ignore: () => false,
    begin: () => beginStep('rpc'),
    emit: (_owner, rpc) => {
      callMade();
      sendBatched({ t: 'rpc', ...rpc, fs: takeChanges(), nd: nd.takeHanded() });
    },
    nowMs,
  });

  const finish = () => {
    try {
      quiet(() => ipc.flushSync());
      const runStart = name === undefined ? nd.runStart() : undefined;
      /** @type {import('../protocol.js').ExitDump} */
      const dump = {
        pid,
        // Notices not written to the socket: the replayer reads them from here.
        pending: ipc.takeBuffered(),
        fs: takeChanges(),
        nd: nd.takeHanded(),
        nondeterminism: {
          served: nd.served,
          fallback: nd.fallback,
          unheld: nd.unheld(),
          ...(pgReplies?.late() ? { dbLate: pgReplies.late() } : {}),
          ...(runStart !== undefined
            ? { runStart: { ...runStart, ...(startedBeforeRun() > 0 ? { processes: startedBeforeRun() } : {}) } }
            : {}),
        },
      };
      // A worker thread's dump is its own: its process's would overwrite it.
      realWriteFileSync.call(fs, `${config.dumpPrefix}.${threadOrigin()}.json`, JSON.stringify(dump));
    } catch {}
  };
  process.on('exit', finish);
  // A worker thread's parent may end it as soon as it hears from it (terminate(), process.exit()),
  // which runs no exit handler: the notices of the calls it made before are written first.
  flushBeforePosting(() => quiet(() => ipc.flushNow()));

  // Exact mode's fast index, read when a call first looks at it: a Node process that makes no
  // HTTP call (a tool the agent runs as a child process) does not read and parse every recorded
  // answer at its start.
  const fast = Boolean(config.fastIndex);
  /** @type {FastEntry[] | undefined} */
  let fastEntries;
  const fastIndex = () => {
    fastEntries ??= config.fastIndex ? JSON.parse(realReadFileSync(config.fastIndex, 'utf8')) : [];
    return /** @type {FastEntry[]} */ (fastEntries);
  };
  let cursor = 0;
  // Questions still waiting for the replayer: a call answered here must not overtake them (the
  // agent would see answers in another order than recorded, e.g. an MCP stream opened late).
  let asking = 0;

  /** Asks the replayer about an HTTP call (with the writes and values since the last one). */
  const askHttp = async (request) => {
    callMade();
    asking++;
    const reply = await ask({ kind: 'http', ...request, fs: takeChanges(), nd: nd.takeHanded() }).finally(() => {
      asking--;
    });
    if (typeof reply.cursor === 'number')
      cursor = reply.cursor < 0 ? (fast ? fastIndex().length : 0) : Math.max(cursor, reply.cursor);
    return reply;
  };

  /**
   * Exact mode's fast path: the next recorded call's reply when this call (method, path and query,
   * body) is it byte for byte, answered here and reported to the replayer afterwards, saving a
   * round trip per call. `pq`: the URL's path and query when the caller has read them already.
   * @param {string} method @param {string} url @param {Record<string, string>} headers
   * @param {import('../protocol.js').WireBody | undefined} body @param {string} [pq]
   */
  const takeFast = (method, url, headers, body, pq) => {
    const entry = asking === 0 && fast ? fastIndex()[cursor] : undefined;
    if (!entry || entry.ask || entry.method !== method || entry.body !== (body?.text ?? '')) return undefined;
    if (body !== undefined && body.text === undefined) return undefined;
    if (entry.pq !== (pq ?? pathAndQuery(url))) return undefined;
    callMade();
    cursor = entry.i + 1;
    sendBatched({ t: 'served', i: entry.i, method, url, headers, body, fs: takeChanges(), nd: nd.takeHanded() });
    return entry.reply;
  };

  /** Whether a URL's host:port is a recorded WebSocket's, routed to the replay's answerer. */
  const routedWebSocket = (/** @type {string} */ url) => {
    try {
      const u = new URL(url);
      const host = u.hostname.replace(/^\[|\]$/g, '');
      const port = Number(u.port) || (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80);
      return (config.routes ?? []).some(
        (r) => r.websocket === true && r.from.port === port && sameHost(r.from.host, host),
      );
    } catch {
      return false;
    }
  };

  /** What the interceptor asks of every request it sees: answered here or by the replayer, never passed through. */
  const onIntercepted = async ({ request, controller }) => {
    // An upgrade (a WebSocket): what would go over it is not in any recording (tapedeck records
    // HTTP; the recorder said so). Refused as the network guard refuses a connection, and reported.
    const upgrade = request.headers.get('upgrade');
    // A recorded WebSocket's: through, to the network guard, which routes it to the replay's
    // answerer (src/replay/websocket.ts) — no network.
    if (upgrade !== null && upgrade.toLowerCase() === 'websocket' && routedWebSocket(request.url)) return;
    if (upgrade !== null) {
      const protocol = upgrade.toLowerCase();
      send({
        t: 'blocked',
        target: protocol === 'websocket' ? request.url.replace(/^http/, 'ws') : request.url,
        upgrade: protocol,
      });
      controller.errorWith(
        Object.assign(
          new Error(
            `connect ECONNREFUSED ${request.url} (an ${upgrade} upgrade, refused by the tapedeck replay: not recorded)`,
          ),
          {
            code: 'ECONNREFUSED',
          },
        ),
      );
      return;
    }
    const since = monotonicNow();
    let body;
    if (request.body !== null && request.method !== 'GET' && request.method !== 'HEAD') {
      // Every request is answered here or by the replayer (none is passed through), so the body
      // is read directly rather than from a clone (which tees the stream: a cost on every call).
      body = encodeBody(new Uint8Array(await request.arrayBuffer()), -1);
    }
    const headers = headerObject(request.headers);
    const fastReply = takeFast(request.method, request.url, headers, body);
    if (fastReply) {
      await nd.hold(fastReply.drawn, since);
      controller.respondWith(responseFrom(fastReply, config.timing ?? { kind: 'none' }));
      return;
    }
    const reply = await askHttp({ method: request.method, url: request.url, headers, body });
    if (reply.ack === -1) {
      controller.errorWith(new Error('tapedeck replay: the replayer went away'));
      return;
    }
    applyEffects(reply.effects);
    if (reply.stop) {
      process.exit(0);
    }
    await nd.hold(reply.drawn, since);
    if (reply.error) {
      controller.errorWith(Object.assign(new TypeError(reply.error.message), { code: reply.error.code }));
      return;
    }
    // Streams held until this step end once its response is on its way.
    const due = heldUntil(reply.step);
    controller.respondWith(responseFrom(reply, config.timing ?? { kind: 'none' }, request.signal));
    releaseHeld(due);
  };

  /**
   * Exact mode's fast path for the plainest fetch calls (a URL string, and at most method,
   * headers and a string body): the next recorded call, asked for byte for byte, is answered
   * without building the interceptor's Request and Response wrappers. Anything else, or any
   * doubt, goes through the interceptor as before.
   */
  const fastFetchAnswer = (input, init) => {
    const entry = asking === 0 && fast ? fastIndex()[cursor] : undefined;
    if (!entry || entry.ask || typeof input !== 'string') return undefined;
    const status = entry.reply.status ?? 200;
    if (entry.reply.chunks || (status >= 300 && status < 400)) return undefined;
    if (init !== undefined && (init === null || typeof init !== 'object')) return undefined;
    for (const key in init ?? {}) if (key !== 'method' && key !== 'headers' && key !== 'body') return undefined;
    const method = init?.method ?? 'GET';
    const text = init?.body ?? undefined;
    if (method !== entry.method || (text !== undefined && typeof text !== 'string')) return undefined;
    if (text !== undefined && (method === 'GET' || method === 'HEAD')) return undefined;
    if ((text ?? '') !== entry.body) return undefined;
    let u;
    let headers;
    try {
      u = new URL(input);
      headers = new Headers(init?.headers);
    } catch {
      return undefined;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password) return undefined;
    if (entry.pq !== `${u.pathname}${u.search}`) return undefined;
    if (text !== undefined && !headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    callMade();
    cursor = entry.i + 1;
    sendBatched({
      t: 'served',
      i: entry.i,
      method,
      url: u.href,
      headers: headerObject(headers),
      body: text === undefined ? undefined : encodeBody(text, -1),
      fs: takeChanges(),
      nd: nd.takeHanded(),
    });
    const response = responseFrom(entry.reply, config.timing ?? { kind: 'none' });
    // The response carries the request's URL, as the interceptor sets it.
    responseState ??= Object.getOwnPropertySymbols(response).find((k) => k.description === 'state') ?? null;
    if (responseState && Array.isArray(response[responseState]?.urlList)) response[responseState].urlList.push(u);
    else Object.defineProperty(response, 'url', { value: u.href, enumerable: true, configurable: true });
    const wait = nd.hold(entry.reply.drawn);
    return wait === undefined ? Promise.resolve(response) : wait.then(() => response);
  };
  /** undici's Response keeps its URL list under a symbol: found once. @type {symbol | null | undefined} */
  let responseState;
  function installFastFetch() {
    const own = globalThis.fetch;
    const fetch = function fetch(input, init) {
      return fastFetchAnswer(input, init) ?? interceptorNow().fetch.call(this, input, init);
    };
    Object.defineProperties(fetch, Object.getOwnPropertyDescriptors(own));
    globalThis.fetch = fetch;
  }

  // The interceptors' own randomness (request ids) must not count as the agent's.
  const suppressDuring = (target, key) =>
    wrapSuppressed(
      target,
      key,
      () => depth++,
      () => depth--,
    );

  // The interceptor (@mswjs/interceptors) answers every call the fast paths do not: another call
  // than the recorded next one, a body that differs, streams, every call outside exact mode. With
  // a fast index it is loaded at the first such call, not at the start: its import is most of what
  // a replayed Node process costs to start (60-75 ms here), and an agent whose calls are all the
  // recorded ones never needs it. It is applied over Node's own fetch, request, get and
  // ClientRequest (the fast paths' wrappers are taken off for that moment and put back on top),
  // and the wrappers hand it what they do not answer.
  const nodeOwn = {
    fetch: globalThis.fetch,
    ClientRequest: http.ClientRequest,
    mods: new Map([http, https].map((m) => [m, { request: m.request, get: m.get }])),
  };
  const requireHere = createRequire(import.meta.url);
  /** @type {{ fetch: typeof fetch, ClientRequest: typeof http.ClientRequest, mods: Map<any, { request: Function, get: Function }> } | undefined} */
  let intercepted;
  const interceptorNow = () => {
    if (intercepted) return intercepted;
    const now = () => ({
      fetch: globalThis.fetch,
      ClientRequest: http.ClientRequest,
      mods: new Map([http, https].map((m) => [m, { request: m.request, get: m.get }])),
    });
    const put = (fns) => {
      globalThis.fetch = fns.fetch;
      http.ClientRequest = fns.ClientRequest;
      for (const [mod, own] of fns.mods) {
        mod.request = own.request;
        mod.get = own.get;
      }
    };
    const wrappers = now();
    // Loading and applying it draws no value today; should a version of it draw one, the draw is
    // the preload's, not the agent's.
    depth++;
    try {
      const { BatchInterceptor } = requireHere('@mswjs/interceptors');
      const { ClientRequestInterceptor } = requireHere('@mswjs/interceptors/ClientRequest');
      const { FetchInterceptor } = requireHere('@mswjs/interceptors/fetch');
      put(nodeOwn);
      const interceptor = new BatchInterceptor({
        name: 'tapedeck-replay',
        interceptors: [new ClientRequestInterceptor(), new FetchInterceptor()],
      });
      interceptor.on('request', onIntercepted);
      interceptor.apply();
      const taken = now();
      // The interceptors' own randomness (request ids) must not count as the agent's.
      suppressDuring(taken, 'fetch');
      suppressDuring(taken, 'ClientRequest');
      for (const own of taken.mods.values()) {
        suppressDuring(own, 'request');
        suppressDuring(own, 'get');
      }
      intercepted = taken;
    } finally {
      put(wrappers);
      depth--;
    }
    return intercepted;
  };
  installFastFetch();
  quietRequestSockets(http, net, suppressDuring);
  installFastHttp(
    [http, https],
    fast
      ? {
          peek: () => {
            const entry = asking === 0 ? fastIndex()[cursor] : undefined;
            return entry && !entry.ask ? entry : undefined;
          },
          answer: (method, url, headers, bytes, pq) =>
            takeFast(method, url, headers, bytes.length > 0 ? encodeBody(bytes, -1) : undefined, pq),
          hold: (reply) => nd.hold(reply.drawn),
        }
      : undefined,
    (mod) => /** @type {{ request: Function }} */ (interceptorNow().mods.get(mod)),
  );
  // A ClientRequest made directly (not through request or get) is the interceptor's.
  const ClientRequest = new Proxy(nodeOwn.ClientRequest, {
    construct(_target, args, newTarget) {
      const Intercepted = interceptorNow().ClientRequest;
      return Reflect.construct(Intercepted, args, newTarget === ClientRequest ? Intercepted : newTarget);
    },
  });
  http.ClientRequest = ClientRequest;
  // Without a fast index every call is the interceptor's: it is there from the start.
  if (!fast) interceptorNow();
  // An ESM agent's `import { request } from 'node:http'` is bound to the module's exports as they
  // were last synced, not to its properties now: without this its calls went to Node's own
  // request, past the fast path and the interceptor, and the network guard refused them.
  syncBuiltinESMExports();

  // The npm undici package (its own dispatchers, not global fetch's): every dispatch is answered
  // like a fetch call — from the fast index, or through the same question to the replayer —
  // driving undici's handler.
  onUndiciLoad(({ DispatcherBase, unwrap }) => {
    const real = DispatcherBase.dispatch;
    DispatcherBase.dispatch = function tapedeckDispatch(opts, handler) {
      if (!ownDispatch(opts, handler)) return real.call(this, opts, handler);
      const h = unwrap(handler);
      let aborted = false;
      try {
        h.onConnect?.(() => {
          aborted = true;
        });
      } catch {}
      const since = monotonicNow();
      void (async () => {
        try {
          const request = dispatchRequest(opts, this);
          // A string body (JSON, the common case) is taken as it is: no bytes and back.
          const given = opts.body;
          const bytes = typeof given === 'string' ? undefined : await dispatchBody(given);
          const body =
            typeof given === 'string'
              ? encodeBody(given, -1)
              : bytes
                ? encodeBody(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), -1)
                : undefined;
          const fastReply = takeFast(request.method, request.url, request.headers, body);
          const reply = fastReply ?? (await askHttp({ ...request, body }));
          if (!fastReply) {
            applyEffects(reply.effects);
            if (reply.stop) process.exit(0);
          }
          const held = nd.hold(reply.drawn, since);
          if (held) await held;
          if (aborted) return;
          if (('ack' in reply && reply.ack === -1) || reply.error) {
            const error = reply.error ?? { code: 'IPC_CLOSED', message: 'tapedeck replay: the replayer went away' };
            h.onError(Object.assign(new Error(error.message), { code: error.code }));
            return;
          }
          const raw = [];
          for (const [name, value] of Object.entries(reply.headers ?? {})) {
            if (HOP_HEADERS.has(name.toLowerCase())) continue;
            for (const v of String(value).split('\n')) raw.push(Buffer.from(name, 'latin1'), Buffer.from(v, 'latin1'));
          }
          const chunks = reply.chunks
            ? reply.chunks.map(chunkBytesOf)
            : reply.body?.b64 !== undefined
              ? [Buffer.from(reply.body.b64, 'base64')]
              : reply.body?.text !== undefined
                ? [Buffer.from(reply.body.text, 'utf8')]
                : [];
          h.onHeaders(reply.status ?? 200, raw, () => {}, reply.statusText ?? '');
          for (const chunk of chunks) {
            if (aborted) return;
            h.onData(chunk);
          }
          if (!aborted) h.onComplete([]);
        } catch (error) {
          if (!aborted) h.onError(error);
        }
      })();
      return true;
    };
  });

  // node:http2 client sessions (gRPC…): each request stream is answered like a fetch call.
  installHttp2Replay({
    targets: config.http2 ?? [],
    timing: config.timing ?? { kind: 'none' },
    async answer(request, since) {
      const fastReply = takeFast(request.method, request.url, request.headers, request.body);
      const reply = fastReply ?? (await askHttp(request));
      if (!fastReply) {
        applyEffects(reply.effects);
        if (reply.stop) process.exit(0);
      }
      await nd.hold(reply.drawn, since);
      return reply;
    },
  });

  // In-process tool() calls: served from the recording when they match, else per policy.
  globalThis[REPLAYER_KEY] = {
    async tool(name, fn, args, toolOptions = {}) {
      callMade();
      const since = monotonicNow();
      const reply = await ask({
        kind: 'tool',
        name,
        args: args.length === 1 ? args[0] : args,
        mutating: toolOptions.mutating,
        fs: takeChanges(),
        nd: nd.takeHanded(),
      });
      applyEffects(reply.effects);
      if (reply.stop) process.exit(0);
      if (reply.run) return fn(...args);
      await nd.hold(reply.drawn, since);
      if (reply.error) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
      return reply.result;
    },
    // runInput(), or record() under the replay: the command's run starts here (its values with it).
    runStarts() {
      nd.startRun('marker');
    },
  };
  return { ipc };
}

const configPath = process.env.TAPEDECK_REPLAY_CONFIG;
if (configPath && !globalThis[REPLAYER_KEY]) {
  installReplay(JSON.parse(realReadFileSync(configPath, 'utf8')));
}
