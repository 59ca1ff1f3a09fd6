// Recording in a server: each request is one recorded run (record() in its own async context),
// named from the request, sampled by rate and rules, with the recording's id in a response
// header. Thin adapters over one core: a node:http handler wrapper, an Express/Connect
// middleware (also a Fastify onRequest hook), and a wrapper for web-standard handlers
// (Request -> Response: Next.js route handlers, Hono's app.fetch, any fetch-style server).
// The recorder never breaks a request: its own failures go to onError and the request runs unrecorded.
import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
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
  /** Called when a run's recording is kept. */
  onRecorded?: (run: { id: string; dir: string; name: string; status: number | undefined }) => void;
  /** Failures of the recorder itself (default: a process warning); the request is served regardless. */
  onError?: (error: unknown) => void;
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

/** A request's record() options; `status()`: the answer's status when its recording is kept. */
function runOptions<Req>(
  options: ServerRecordOptions<Req>,
  request: Req,
  info: ServerRunInfo,
  onError: (error: unknown) => void,
  status: () => number | undefined,
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
      ? { onKept: (run) => onRecorded({ id: run.id, dir: run.dir, name: runName, status: status() }) }
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
  const opts = runOptions(options, req, info, onError, () => res.statusCode);
  return record(opts, async (ctx: RecordContext) => {
    if (ctx.id !== '' && header !== false && !res.headersSent) res.setHeader(header, ctx.id);
    const ended = responseOver(res, chain);
    await proceed();
    const finished = await ended;
    if (!finished || res.statusCode >= failStatus) ctx.fail();
  }).then(() => undefined);
}

/** How long a middleware's run waits, once its client has left, for the chain to end the response. */
const ABANDONED_RESPONSE_MS = 120_000;

/**
 * Resolves when the exchange is over for the run: true once the response has been sent, false
 * when the client left first. A client that leaves does not stop the handler (an agent session
 * goes on, its calls made): a handler's run ends with its promise (`recordHandler` awaits it), a
 * middleware's, which sees no promise, when the chain ends the response all the same (Express's
 * res.json(), an error handler's answer), or ABANDONED_RESPONSE_MS after the client left.
 */
function responseOver(res: ServerResponse, chain: 'handler' | 'middleware'): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const closed = () => {
      if (res.writableFinished || chain === 'handler' || res.writableEnded) return resolve(res.writableFinished);
      const bound = setTimeout(() => resolve(false), ABANDONED_RESPONSE_MS);
      bound.unref();
      const end = res.end;
      res.end = function (this: ServerResponse, ...args: Parameters<ServerResponse['end']>) {
        clearTimeout(bound);
        resolve(false);
        return end.apply(this, args);
      } as ServerResponse['end'];
    };
    if (res.writableFinished) return resolve(true);
    // Already closed when the run starts (the client left while the run was opening: the first
    // run installs the capture layer): its 'close' has been emitted, and will not come again.
    if (res.closed) return closed();
    res.once('finish', () => resolve(true));
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
    let status: number | undefined;
    const opts = runOptions(options, request, info, onError, () => status);
    return new Promise<Response>((resolve, reject) => {
      let answered = false;
      record(opts, async (ctx: RecordContext) => {
        let response: Response;
        try {
          response = await handler(request, ...rest);
        } catch (error) {
          answered = true;
          reject(error);
          throw error;
        }
        status = response.status;
        if (status >= failStatus) ctx.fail();
        const headers = new Headers(response.headers);
        if (ctx.id !== '' && header !== false) headers.set(header, ctx.id);
        let bodyDone: Promise<void> = Promise.resolve();
        let body: ReadableStream<Uint8Array> | null = response.body;
        if (body !== null) {
          // The run lasts until the body has been read to its end (a stream is the agent still
          // working), and the body is read inside the run, whoever pulls it. A body that fails
          // part way (the model's stream broke after the headers went out with a 200), or that the
          // client leaves before its end, is a failed run, as a node:http answer cut short is.
          let settled!: () => void;
          bodyDone = new Promise<void>((r) => (settled = r));
          let over = false;
          const done = (failed: boolean) => {
            if (over) return;
            over = true;
            if (failed) ctx.fail();
            settled();
          };
          const source = body.getReader();
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
              done(true);
              return source.cancel(reason);
            },
          });
        }
        answered = true;
        resolve(new Response(body, { status: response.status, statusText: response.statusText, headers }));
        await bodyDone;
      }).catch((error: unknown) => {
        if (!answered) reject(error);
      });
    });
  };
}
