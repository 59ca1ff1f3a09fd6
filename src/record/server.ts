// Recording in a server: each request is one recorded run (record() in its own async context),
// named from the request, sampled by rate and rules, with the recording's id in a response
// header. Thin adapters over one core: a node:http handler wrapper, an Express/Connect
// middleware (also a Fastify onRequest hook), and a wrapper for web-standard handlers
// (Request -> Response: Next.js route handlers, Hono's app.fetch, any fetch-style server).
// The recorder never breaks a request: its own failures go to onError and the request runs unrecorded.
import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RunResponse } from '../recording/index.js';
import { type RecordContext, record } from './in-process.js';
import type { RecordOptions } from './recorder.js';

export interface ServerRunInfo {
  /** The request's method and path (without the query). */
  method: string;
  path: string;
}

export interface ServerRecordOptions<Req> extends Omit<RecordOptions, 'name' | 'input' | 'out' | 'onRecorderError'> {
  /** The run's name (default: `METHOD /path`). */
  name?: (request: Req, info: ServerRunInfo) => string;
  /** The run's input for replay (runInput() in the replayed command); default none. */
  input?: (request: Req) => unknown;
  /** Where recordings go: recordings/ under cwd by default; each run gets <folder>/<id>. */
  folder?: string;
  /** The response header carrying the recording id (default `x-tapedeck-recording`); false: none. */
  header?: string | false;
  /** Answers with this status or above are failed runs (kept by the `errors` sampling rule); default 500. */
  failStatus?: number;
  /**
   * Called when a run's recording is kept: `status` is the status its client was sent (undefined
   * when none was: the client left, or the handler threw, before the headers went out), and
   * `clientLeft` whether the client left before the answer's end.
   */
  onRecorded?: (run: RecordedRun) => void;
  /** Failures of the recorder itself (default: a process warning); the request is served regardless. */
  onError?: (error: unknown) => void;
}

/** What `onRecorded` is told of a kept run. */
export interface RecordedRun extends RunResponse {
  id: string;
  dir: string;
  name: string;
  status: number | undefined;
}

export const RECORDING_HEADER = 'x-tapedeck-recording';

function warnOnce(): (error: unknown) => void {
  const seen = new Set<string>();
  return (error) => {
    const message = error instanceof Error ? error.message : String(error);
    if (seen.has(message)) return;
    seen.add(message);
    process.emitWarning(`tapedeck: a run was not recorded: ${message}`, { code: 'TAPEDECK_RECORD' });
  };
}

/** A request's record() options; `answer()`: how its answer went, when its recording is kept. */
function runOptions<Req>(
  options: ServerRecordOptions<Req>,
  request: Req,
  info: ServerRunInfo,
  onError: (error: unknown) => void,
  answer: () => RunResponse,
): RecordOptions {
  const { name, input, folder, header: _h, failStatus: _f, onRecorded, onError: _e, ...rest } = options;
  const runName = name ? name(request, info) : `${info.method} ${info.path}`;
  return {
    ...rest,
    name: runName,
    ...(input ? { input: input(request) } : {}),
    ...(folder ? { folder } : {}),
    onRecorderError: onError,
    // Kept runs are announced whether the handler returned or threw (a thrown one is failed).
    ...(onRecorded
      ? {
          onKept: (run) => {
            const { status, clientLeft } = answer();
            onRecorded({ id: run.id, dir: run.dir, name: runName, status, clientLeft });
          },
        }
      : {}),
  };
}

function infoOf(method: string | undefined, url: string | undefined): ServerRunInfo {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return { method: (method ?? 'GET').toUpperCase(), path: q < 0 ? raw : raw.slice(0, q) };
}

/**
 * Records one node:http exchange: `proceed()` starts the handler (or the next middleware) inside
 * the run; the run ends when the response has been sent (or the connection closed).
 */
function recordExchange(
  req: IncomingMessage,
  res: ServerResponse,
  options: ServerRecordOptions<IncomingMessage>,
  onError: (error: unknown) => void,
  proceed: () => unknown,
  chain: 'handler' | 'middleware',
): Promise<void> {
  const info = infoOf(req.method, req.originalUrl ?? req.url);
  const header = options.header ?? RECORDING_HEADER;
  const failStatus = options.failStatus ?? 500;
  // Until the run has an answer of its own (a handler that threw has none yet): what was sent so
  // far, and whether the client has left (its response closed before its end).
  let answer: RunResponse | undefined;
  const sent = (): RunResponse => answer ?? { ...statusSent(res), clientLeft: res.closed && !res.writableFinished };
  const opts = runOptions(options, req, info, onError, sent);
  return record(opts, async (ctx: RecordContext) => {
    if (ctx.id !== '' && header !== false && !res.headersSent) res.setHeader(header, ctx.id);
    const ended = responseOver(res, chain);
    try {
      await proceed();
    } finally {
      ctx.setResponse(sent());
    }
    answer = await ended;
    ctx.setResponse(answer);
    if (answer.clientLeft || res.statusCode >= failStatus) ctx.fail();
  }).then(() => undefined);
}

/** The status a node:http response has sent (none before its headers went out). */
const statusSent = (res: ServerResponse): { status?: number } => (res.headersSent ? { status: res.statusCode } : {});

/** How long a middleware's run waits, once its client has left, for the chain to end the response. */
const ABANDONED_RESPONSE_MS = 120_000;

/**
 * Resolves when the exchange is over for the run: the status sent (none when the client left
 * before the headers went out: a handler's later res.end() sends nothing), and whether the client
 * left before the response's end. A client that leaves does not stop the handler (an agent session
 * goes on, its calls made): a handler's run ends with its promise (`recordHandler` awaits it), a
 * middleware's, which sees no promise, when the chain ends the response all the same (Express's
 * res.json(), an error handler's answer), or ABANDONED_RESPONSE_MS after the client left.
 */
function responseOver(res: ServerResponse, chain: 'handler' | 'middleware'): Promise<RunResponse> {
  return new Promise<RunResponse>((resolve) => {
    const closed = () => {
      if (res.writableFinished) return resolve({ ...statusSent(res), clientLeft: false });
      // What the client was sent before it left; nothing written to the closed response reaches it.
      const left: RunResponse = { ...statusSent(res), clientLeft: true };
      if (chain === 'handler' || res.writableEnded) return resolve(left);
      const bound = setTimeout(() => resolve(left), ABANDONED_RESPONSE_MS);
      bound.unref();
      const end = res.end;
      res.end = function (this: ServerResponse, ...args: Parameters<ServerResponse['end']>) {
        clearTimeout(bound);
        resolve(left);
        return end.apply(this, args);
      } as ServerResponse['end'];
    };
    if (res.writableFinished) return resolve({ ...statusSent(res), clientLeft: false });
    // Already closed when the run starts (the client left while the run was opening: the first
    // run installs the capture layer): its 'close' has been emitted, and will not come again.
    if (res.closed) return closed();
    res.once('finish', () => resolve({ ...statusSent(res), clientLeft: false }));
    res.once('close', closed);
  });
}

declare module 'node:http' {
  interface IncomingMessage {
    /** Express keeps the URL before mounting here. */
    originalUrl?: string;
  }
}

/**
 * Wraps a node:http request handler: every request is a recorded run.
 *
 * @example
 * http.createServer(recordHandler(async (req, res) => res.end(await agent(req)), { sample: { rate: 0.05, errors: true } }));
 */
export function recordHandler<Req extends IncomingMessage, Res extends ServerResponse>(
  handler: (req: Req, res: Res) => unknown,
  options: ServerRecordOptions<IncomingMessage> = {},
): (req: Req, res: Res) => Promise<void> {
  const onError = options.onError ?? warnOnce();
  return (req, res) => recordExchange(req, res, options, onError, () => handler(req, res), 'handler');
}

/**
 * Express / Connect middleware (and a Fastify onRequest hook: `fastify.addHook('onRequest',
 * (request, reply, done) => mw(request.raw, reply.raw, done))`): the rest of the chain runs
 * inside the run.
 *
 * @example
 * app.use(recordMiddleware({ name: (req) => `chat ${req.headers['x-user'] ?? ''}`, sample: { rate: 0.1, errors: true } }));
 */
export function recordMiddleware(
  options: ServerRecordOptions<IncomingMessage> = {},
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const onError = options.onError ?? warnOnce();
  return (req, res, next) => {
    void recordExchange(req, res, options, onError, () => next(), 'middleware').catch(onError);
  };
}

/**
 * Wraps a web-standard handler (Request -> Response): Next.js route handlers, Hono's `app.fetch`,
 * any fetch-style server. The run ends when the response body has been read to its end.
 *
 * @example
 * export const POST = recordFetchHandler(async (request) => Response.json(await agent(await request.json())));
 */
export function recordFetchHandler<A extends unknown[]>(
  handler: (request: Request, ...rest: A) => Response | Promise<Response>,
  options: ServerRecordOptions<Request> = {},
): (request: Request, ...rest: A) => Promise<Response> {
  const onError = options.onError ?? warnOnce();
  const header = options.header ?? RECORDING_HEADER;
  const failStatus = options.failStatus ?? 500;
  return (request, ...rest) => {
    const url = new URL(request.url);
    const info = { method: request.method.toUpperCase(), path: url.pathname };
    // The client left: the request's signal aborts (@hono/node-server, Next.js, Deno, Bun).
    let answer: RunResponse = { clientLeft: false };
    let abandon: (() => void) | undefined;
    const leave = () => {
      answer = { ...answer, clientLeft: true };
      abandon?.();
    };
    if (request.signal.aborted) leave();
    else request.signal.addEventListener('abort', leave, { once: true });
    const opts = runOptions(options, request, info, onError, () => answer);
    return new Promise<Response>((resolve, reject) => {
      let answered = false;
      record(opts, async (ctx: RecordContext) => {
        let response: Response;
        try {
          response = await handler(request, ...rest);
        } catch (error) {
          answered = true;
          ctx.setResponse(answer);
          reject(error);
          throw error;
        }
        // An answer to a client that has left is never sent.
        if (!answer.clientLeft) answer = { status: response.status, clientLeft: false };
        if (response.status >= failStatus) ctx.fail();
        const headers = new Headers(response.headers);
        if (ctx.id !== '' && header !== false) headers.set(header, ctx.id);
        let bodyDone: Promise<void> = Promise.resolve();
        let body: ReadableStream<Uint8Array> | null = response.body;
        if (body !== null) {
          // The run lasts until the body has been read to its end (a stream is the agent still
          // working), and the body is read inside the run, whoever pulls it. A body that fails
          // part way (the model's stream broke after the headers went out with a 200), or that the
          // client leaves before its end, is a failed run, as a node:http answer cut short is.
          // A body its client left is read by no one (@hono/node-server leaves one its client left
          // before the answer unread): it is cancelled, at once when the client left before the
          // answer, else once the reader has let it be for ABANDONED_RESPONSE_MS.
          let settled!: () => void;
          bodyDone = new Promise<void>((r) => (settled = r));
          let over = false;
          let bound: NodeJS.Timeout | undefined;
          const done = (failed: boolean) => {
            if (over) return;
            over = true;
            clearTimeout(bound);
            request.signal.removeEventListener('abort', leave);
            if (failed) ctx.fail();
            settled();
          };
          const source = body.getReader();
          const cancel = () => {
            done(true);
            source.cancel(new Error('the client left')).catch(() => {});
          };
          if (answer.clientLeft) cancel();
          else
            abandon = () => {
              bound ??= setTimeout(cancel, ABANDONED_RESPONSE_MS);
              bound.unref();
            };
          body = new ReadableStream<Uint8Array>({
            pull: AsyncResource.bind(async (controller: ReadableStreamDefaultController<Uint8Array>) => {
              try {
                const next = await source.read();
                if (next.done) {
                  controller.close();
                  done(false);
                } else controller.enqueue(next.value);
              } catch (error) {
                controller.error(error);
                done(true);
              }
            }),
            cancel: (reason) => {
              answer = { ...answer, clientLeft: true };
              done(true);
              return source.cancel(reason);
            },
          });
        }
        answered = true;
        resolve(new Response(body, { status: response.status, statusText: response.statusText, headers }));
        await bodyDone;
        request.signal.removeEventListener('abort', leave);
        if (answer.clientLeft) ctx.fail();
        ctx.setResponse(answer);
      }).catch((error: unknown) => {
        if (!answered) reject(error);
      });
    });
  };
}
