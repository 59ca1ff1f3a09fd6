// @ts-check
// Patches the sources of nondeterminism an agent reads (Date/Date.now and Intl.DateTimeFormat's
// formatting of the current time, performance.now and
// performance.timeOrigin (and process.hrtime and uptime on its scale), Math.random, crypto.randomUUID, crypto.getRandomValues, node:crypto's
// randomBytes, randomFill(Sync) and randomInt) so that every value handed to the agent passes
// through one hook: the recorder logs it, a replayer can substitute the recorded value.
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * patchNondeterminism(hook) -> restore()
 * hook(kind, realValue, sites, own) returns the value the agent gets; kind is 'clock' | 'random' | 'uuid' |
 * 'randomBytes' | 'hrtime' (performance.now() and performance.timeOrigin, in the order read;
 * process.hrtime() and process.uptime() as performance.now() readings).
 * For 'randomBytes' the real value is the filled typed array (mutate it in place to substitute).
 * Calls made while `suppressed()` returns true (the capture layer's own) bypass the hook, and so
 * do draws that are not the agent's (drawnBy): Node's own clock reads, while `internalsMayRead()`
 * says its code may be reading the clock (undici's fetch reads Date.now() at the end of every
 * network response body, which a replay that answers it does not), a database driver's random
 * bytes to authenticate, and a telemetry SDK's draws.
 * Each draw's stack is captured once (drawnBy), and `sites` hands the hook that capture: the call
 * sites from the caller of the patched function the agent called, `own` the frames of this module
 * above them that the checks count (drawnBy), at least `clockFrames()` frames in all for a clock
 * read (the frames the hook reads of it, counted so: a replay's memfs check), so the hook's own
 * checks share the draw's one capture.
 */
export function patchNondeterminism(
  hook,
  suppressed = () => false,
  internalsMayRead = () => true,
  clockFrames = () => 0,
) {
  const RealDate = globalThis.Date;
  const realNow = RealDate.now;
  const realRandom = Math.random;
  const webCrypto = globalThis.crypto;
  const realUuid = crypto.randomUUID;
  const realWebUuid = webCrypto?.randomUUID;
  const realGetRandomValues = webCrypto?.getRandomValues;
  const realNodeGetRandomValues = crypto.getRandomValues;
  // Overloaded in Node's types: called here with what the agent gave.
  const realRandomBytes = /** @type {(...args: any[]) => any} */ (crypto.randomBytes);
  const realRandomFillSync = /** @type {(...args: any[]) => any} */ (crypto.randomFillSync);
  const realRandomFill = /** @type {(...args: any[]) => any} */ (crypto.randomFill);
  const realRandomInt = /** @type {(...args: any[]) => any} */ (crypto.randomInt);

  // Each patched function that draws passes itself (`entry`: the draw's stack is captured from its
  // caller) and how many frames of this module's its checks have always counted (`own`, see drawnBy).
  /**
   * Whether a clock read is not the agent's: Node's own (while it may read), or a telemetry SDK's.
   * @param {Function} entry @param {number} own
   */
  const notAgentsRead = (entry, own) => {
    const by = drawnBy(entry, own, clockFrames());
    return by === 'telemetry' || (by === 'internal' && internalsMayRead());
  };
  /** @param {Function} entry @param {number} own */
  const readClock = (entry, own) => {
    const value = realNow.call(RealDate);
    return suppressed() || notAgentsRead(entry, own) ? value : hook('clock', value, drawSites, own);
  };
  const now = function now() {
    return readClock(now, 2);
  };
  function construct(target, args, newTarget) {
    if (args.length === 0)
      return Reflect.construct(target, [readClock(construct, 3)], newTarget === PatchedDate ? target : newTarget);
    return Reflect.construct(target, args, newTarget === PatchedDate ? target : newTarget);
  }
  function apply() {
    return new RealDate(readClock(apply, 3)).toString();
  }
  const PatchedDate = new Proxy(RealDate, {
    construct,
    apply,
    get(target, key, receiver) {
      if (key === 'now') return now;
      return Reflect.get(target, key, receiver);
    },
  });
  globalThis.Date = PatchedDate;
  // Intl.DateTimeFormat's format() and formatToParts() with no date format the current time, read
  // inside V8 (no Date.now): given the agent's clock instead ("today is Sunday" in a prompt).
  const dtf = Intl.DateTimeFormat.prototype;
  const formatDescriptor = Object.getOwnPropertyDescriptor(dtf, 'format');
  const realFormatToParts = dtf.formatToParts;
  const formats = new WeakMap();
  if (typeof formatDescriptor?.get === 'function') {
    const formatOf = formatDescriptor.get;
    Object.defineProperty(dtf, 'format', {
      ...formatDescriptor,
      get() {
        const bound = formatOf.call(this);
        let format = formats.get(bound);
        if (format === undefined) {
          format = function format(date) {
            return bound(date === undefined ? readClock(format, 3) : date);
          };
          formats.set(bound, format);
        }
        return format;
      },
    });
  }
  const formatToPartsDescriptor = Object.getOwnPropertyDescriptor(dtf, 'formatToParts');
  if (formatToPartsDescriptor)
    Object.defineProperty(dtf, 'formatToParts', {
      ...formatToPartsDescriptor,
      value: function formatToParts(date) {
        return realFormatToParts.call(this, date === undefined ? readClock(formatToParts, 3) : date);
      },
    });
  // The monotonic clock: span timings (OpenTelemetry's end times), durations an agent reports.
  // Node's own reads (fetch's timing info) are left out as the clock's are. `performance` is one
  // object, node:perf_hooks' too: its own properties shadow the prototype's until restored.
  const perf = globalThis.performance;
  const realPerfNow = perf?.now;
  const originOf = perf ? Object.getOwnPropertyDescriptor(Object.getPrototypeOf(perf), 'timeOrigin')?.get : undefined;
  // Node's own monotonic reads are never the agent's, replayed or not: unlike the clock's (undici's
  // alone, which a replay that answers every fetch does not make), they go on in a replay as
  // recorded (performance.eventLoopUtilization() and console.time()/timeEnd() read the public
  // process.hrtime()), so `internalsMayRead` does not gate them.
  /** @param {Function} entry @param {number} own */
  const notAgentsMonotonicRead = (entry, own) => {
    const by = drawnBy(entry, own);
    return by === 'telemetry' || by === 'internal';
  };
  /** @param {number} value @param {Function} entry @param {number} own */
  const monotonic = (value, entry, own) =>
    suppressed() || notAgentsMonotonicRead(entry, own) ? value : hook('hrtime', value, drawSites, own);
  // Own properties as the prototype's are: not enumerable.
  if (perf && typeof realPerfNow === 'function') {
    Object.defineProperty(perf, 'now', {
      configurable: true,
      writable: true,
      enumerable: false,
      value: function now() {
        return monotonic(realPerfNow.call(perf), now, 3);
      },
    });
    if (originOf)
      Object.defineProperty(perf, 'timeOrigin', {
        configurable: true,
        enumerable: false,
        get: function timeOrigin() {
          return monotonic(originOf.call(perf), timeOrigin, 3);
        },
      });
  }
  // process.hrtime(), process.hrtime.bigint() and process.uptime(): the same monotonic clock in
  // other units (the durations a tool reports, a metrics library's timers), read through the same
  // hook as performance.now() readings, so the time between any two readings of the three is the
  // recorded one. hrtime keeps its origin, this process's (arbitrary, and a replaying machine's
  // own); uptime is counted from performance.now()'s zero (the process's start, to a few ms).
  const realHrtime = process.hrtime;
  const realHrtimeBigint = realHrtime?.bigint;
  const realUptime = process.uptime;
  const monotonicClocks =
    perf !== undefined && typeof realPerfNow === 'function' && typeof realHrtimeBigint === 'function';
  if (monotonicClocks) {
    /** The hrtime of performance.now()'s zero, in nanoseconds. */
    const hrZero = realHrtimeBigint() - BigInt(Math.round(realPerfNow.call(perf) * 1e6));
    /** @param {Function} entry */
    const readNs = (entry) =>
      hrZero + BigInt(Math.round(monotonic(Number(realHrtimeBigint() - hrZero) / 1e6, entry, 4) * 1e6));
    const hrtime = function hrtime(/** @type {[number, number] | undefined} */ time) {
      // Node's own checks of `time`, and its errors.
      if (time !== undefined) realHrtime(time);
      const ns = readNs(hrtime);
      let sec = Number(ns / 1_000_000_000n);
      let nsec = Number(ns % 1_000_000_000n);
      if (time === undefined) return [sec, nsec];
      sec -= time[0];
      nsec -= time[1];
      if (nsec < 0) {
        sec -= 1;
        nsec += 1e9;
      }
      return [sec, nsec];
    };
    hrtime.bigint = function hrtimeBigInt() {
      return readNs(hrtimeBigInt);
    };
    process.hrtime = /** @type {NodeJS.HRTime} */ (hrtime);
    process.uptime = function uptime() {
      return monotonic(realPerfNow.call(perf), uptime, 3) / 1000;
    };
  }
  Math.random = function random() {
    const value = realRandom();
    return suppressed() || drawnBy(random, 1) === 'telemetry' ? value : hook('random', value, drawSites, 1);
  };
  const uuid = (real) =>
    function randomUUID(options) {
      const value = real.call(this, options);
      return suppressed() || drawnBy(randomUUID, 1) === 'telemetry' ? value : hook('uuid', value, drawSites, 1);
    };
  /** Whether random bytes are not the agent's: a database driver's to authenticate, or a telemetry SDK's. */
  /** @param {Function} entry @param {number} own */
  const notAgentsBytes = (entry, own) => {
    const by = drawnBy(entry, own);
    return by === 'driver' || by === 'telemetry';
  };
  const fill = (real) =>
    function getRandomValues(array) {
      const result = real.call(this, array);
      if (!suppressed() && !notAgentsBytes(getRandomValues, 2)) hook('randomBytes', result, drawSites, 2);
      return result;
    };
  // node:crypto's own: randomBytes (and its callback form), randomFillSync and randomFill. A range
  // filled is what the hook sees (and what a replay writes into). randomInt: below.
  const bytesOf = (buf, offset = 0, size) => {
    const view = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    const start = Number(offset) || 0;
    return view.subarray(start, size === undefined ? view.length : start + Number(size));
  };
  /** @param {Uint8Array} bytes @param {Function} entry */
  const drawn = (bytes, entry) => {
    if (!suppressed() && !notAgentsBytes(entry, 3)) hook('randomBytes', bytes, drawSites, 3);
  };
  function randomBytes(size, callback) {
    // Not a callback: Node's own answer (its error for a wrong one).
    if (callback !== undefined && typeof callback !== 'function') return realRandomBytes.call(this, size, callback);
    if (callback === undefined) {
      const bytes = realRandomBytes.call(this, size);
      drawn(bytes, randomBytes);
      return bytes;
    }
    // The draw counts when its bytes are handed over (a driver's is told apart now, at the call).
    const driver = notAgentsBytes(randomBytes, 2);
    const sites = drawSites;
    return realRandomBytes.call(this, size, (error, bytes) => {
      if (!error && !driver && !suppressed()) hook('randomBytes', bytes, sites, 2);
      callback(error, bytes);
    });
  }
  function randomFillSync(buf, offset, size) {
    const result = realRandomFillSync.call(this, buf, offset, size);
    drawn(bytesOf(buf, offset, size), randomFillSync);
    return result;
  }
  function randomFill(buf, ...rest) {
    const callback = rest.pop();
    if (typeof callback !== 'function') return realRandomFill.call(this, buf, ...rest, callback);
    const [offset, size] = rest;
    const driver = notAgentsBytes(randomFill, 2);
    const sites = drawSites;
    return realRandomFill.call(this, buf, ...rest, (error, filled) => {
      if (!error && !driver && !suppressed()) hook('randomBytes', bytesOf(buf, offset, size), sites, 2);
      callback(error, filled);
    });
  }
  /**
   * randomInt([min,] max[, callback]) as Node computes it (lib/internal/crypto/random.js: 6 bytes
   * read big-endian, redrawn while at or above the largest multiple of the range), each 6 bytes
   * drawn through the hook: a replay hands back the recorded bytes, so the same integers. (Node's
   * own draws from a cache it fills through its internal bindings, which the patches above do not
   * see.) Arguments Node refuses get Node's own error; a callback is called on the next tick, as
   * Node does while its cache holds bytes.
   */
  function randomInt(...args) {
    let [min, max, callback] = args;
    const minNotGiven = max === undefined || typeof max === 'function';
    if (minNotGiven) [min, max, callback] = [0, min, max];
    const valid =
      (callback === undefined || typeof callback === 'function') &&
      Number.isSafeInteger(min) &&
      Number.isSafeInteger(max) &&
      max > min &&
      max - min <= RAND_MAX;
    if (!valid) return realRandomInt.apply(this, args);
    const range = max - min;
    const limit = RAND_MAX - (RAND_MAX % range);
    let n;
    for (;;) {
      const bytes = realRandomBytes(6);
      drawn(bytes, randomInt);
      const x = bytes.readUIntBE(0, 6);
      if (x < limit) {
        n = (x % range) + min;
        break;
      }
    }
    if (callback === undefined) return n;
    process.nextTick(callback, undefined, n);
  }
  set(crypto, 'randomUUID', uuid(realUuid));
  set(crypto, 'getRandomValues', fill(realNodeGetRandomValues));
  set(crypto, 'randomBytes', randomBytes);
  set(crypto, 'randomFillSync', randomFillSync);
  set(crypto, 'randomFill', randomFill);
  set(crypto, 'randomInt', randomInt);
  if (webCrypto) {
    if (realWebUuid) set(webCrypto, 'randomUUID', uuid(realWebUuid.bind(webCrypto)));
    if (realGetRandomValues) set(webCrypto, 'getRandomValues', fill(realGetRandomValues.bind(webCrypto)));
  }
  syncBuiltinESMExports();

  return function restore() {
    globalThis.Date = RealDate;
    if (formatDescriptor) Object.defineProperty(dtf, 'format', formatDescriptor);
    if (formatToPartsDescriptor) Object.defineProperty(dtf, 'formatToParts', formatToPartsDescriptor);
    if (perf && typeof realPerfNow === 'function') {
      // The own properties go: the prototype's show again.
      Reflect.deleteProperty(perf, 'now');
      if (originOf) Reflect.deleteProperty(perf, 'timeOrigin');
    }
    if (monotonicClocks) {
      process.hrtime = realHrtime;
      process.uptime = realUptime;
    }
    Math.random = realRandom;
    set(crypto, 'randomUUID', realUuid);
    set(crypto, 'getRandomValues', realNodeGetRandomValues);
    set(crypto, 'randomBytes', realRandomBytes);
    set(crypto, 'randomFillSync', realRandomFillSync);
    set(crypto, 'randomFill', realRandomFill);
    set(crypto, 'randomInt', realRandomInt);
    if (webCrypto) {
      if (realWebUuid) set(webCrypto, 'randomUUID', realWebUuid);
      if (realGetRandomValues) set(webCrypto, 'getRandomValues', realGetRandomValues);
    }
    syncBuiltinESMExports();
  };
}

/**
 * This module's frames, by the names a stack gives them: its URL under Node's ESM loader, its path
 * under a loader that runs it as transformed code (vitest's: `record()` in a test), where a URL
 * alone would count the patch's own wrapper as the caller, and every draw as the agent's.
 */
const SELF = new Set([import.meta.url, fileURLToPath(import.meta.url)]);
/** randomInt's largest range (Node's RAND_MAX: what 6 bytes hold). */
const RAND_MAX = 0xffff_ffff_ffff;

/**
 * Where database drivers draw random bytes to authenticate: pg's SCRAM client nonce (lib/crypto,
 * through getRandomValues), postgres.js's (randomBytes), the MongoDB driver's SCRAM (cmap/auth).
 */
const DRIVER_AUTH =
  /[\\/]node_modules[\\/](?:pg[\\/]lib[\\/]crypto|postgres[\\/](?:cjs[\\/])?src|mongodb[\\/]lib[\\/]cmap[\\/]auth)[\\/]/;

/**
 * Telemetry SDKs, and tracers and task queues that run beside the agent: what they draw (span
 * and run ids, a batch's multipart boundary, export times, a queue's scheduling reads) and how
 * often depends on when their batches flush and their queued callbacks run, which a replay
 * (answering at once) does not reproduce, so their draws would shift the agent's later values.
 * Left out while recording and replaying alike, as their exports are answered whatever they
 * carry (src/record/classify.ts, isTelemetry).
 */
const TELEMETRY = new RegExp(
  `[\\\\/]node_modules[\\\\/](?:${[
    'langsmith',
    '@opentelemetry',
    '@sentry',
    'langfuse[^\\\\/]*',
    '@langfuse',
    '@arizeai',
    '@traceloop',
    'braintrust',
    '@braintrust',
    'dd-trace',
    '@datadog',
    'newrelic',
    '@honeycombio',
    '@langchain[\\\\/]core[\\\\/]dist[\\\\/]tracers',
    'p-queue',
    'bottleneck',
  ].join('|')})[\\\\/]`,
);
/** Id libraries draw for their caller: the frame above them says whose draw it is. */
const DRAWS_FOR_CALLER = /[\\/]node_modules[\\/](?:uuid|nanoid|ulid|@paralleldrive[\\/]cuid2)[\\/]/;

/**
 * The frames drawnBy reads: the first FIRST_FRAMES, and when those do not tell, the first
 * DEEP_FRAMES, counted as they have always been counted, from the check: this module's own frames
 * between the check and the drawing function's caller included (`own`: 1 for Math.random, 2 for
 * Date.now, 3 for `new Date()`...), though they are not captured.
 */
const FIRST_FRAMES = 5;
const DEEP_FRAMES = 12;
/**
 * The call sites of the draw drawnBy last told apart (its one capture, from the drawing function's
 * caller), read by the patch right after, in the same synchronous call, and handed to the hook.
 * @type {any[] | undefined}
 */
let drawSites;
/** How many of the captured frames readStack read to tell its last draw. */
let framesRead = 0;

/** How many draws a place's first capture is sized by (drawnBy): the most frames one of them needed. */
const PLACE_DRAWS = 16;
/**
 * Where draws come from, by the patched function the agent called: for how many frames drawnBy
 * captures first. The draws of a place are alike (got's clock reads are told by their caller's
 * frame; an id library's draws, through uuid's or nanoid's own frames, by the frame past them), so
 * a first capture as deep as the most that the place's recent draws needed (grown at once, shrunk
 * every PLACE_DRAWS draws) tells a draw, and a second, deeper one is rare.
 * @type {WeakMap<Function, { frames: number, most: number, draws: number }>}
 */
const PLACES = new WeakMap();

/**
 * Who draws a value, from the call stack: Node's own code ('internal': the caller is in
 * node:internal, as fetch's timing info is), a database driver authenticating ('driver': pg's
 * SCRAM nonce through getRandomValues, postgres.js's and the MongoDB driver's through
 * randomBytes; whether it happens depends on the server and on how many connections a pool
 * opens), a telemetry SDK ('telemetry': the nearest caller past Node's code and id libraries), or
 * the agent. Only the agent's draws are recorded and handed back.
 * The stack is captured once from the caller of `entry` (the patched function the agent called),
 * as deep as its place's recent draws needed (PLACES) and as `frames`, the frames the hook reads of
 * it (counted as the check's, `own` included): in a client's code a capture costs ~3 us with its
 * first frame and ~0.5-1.3 us each next one, most of a draw's cost (got draws six values a request).
 * @param {Function} entry @param {number} own @param {number} [frames]
 * @returns {'internal' | 'driver' | 'telemetry' | 'agent'}
 */
function drawnBy(entry, own, frames = 0) {
  let place = PLACES.get(entry);
  if (place === undefined) {
    place = { frames: 1, most: 1, draws: 0 };
    PLACES.set(entry, place);
  }
  const limit = Math.max(place.frames, frames - own);
  let sites = callSites(limit, entry);
  let by = readStack(sites, own, sites.length < limit);
  if (by === undefined) {
    const deep = Math.max(DEEP_FRAMES - own, frames - own);
    sites = callSites(deep, entry);
    by = readStack(sites, own, sites.length < deep) ?? 'agent';
  }
  place.most = Math.max(place.most, framesRead);
  place.frames = Math.max(place.frames, framesRead);
  if (++place.draws === PLACE_DRAWS) {
    place.frames = place.most;
    place.most = 1;
    place.draws = 0;
  }
  drawSites = sites;
  return by;
}

/** What a frame's file says of a draw (the three patterns above), by file: a process has few. */
const KINDS = new Map();
const KINDS_MAX = 10_000;
/** @param {string} file @returns {{ driver: boolean, forCaller: boolean, telemetry: boolean }} */
function kindOf(file) {
  let kind = KINDS.get(file);
  if (kind === undefined) {
    kind = { driver: DRIVER_AUTH.test(file), forCaller: DRAWS_FOR_CALLER.test(file), telemetry: TELEMETRY.test(file) };
    // Files are code a process loaded: bounded in practice, and held to a bound all the same.
    if (KINDS.size >= KINDS_MAX) KINDS.clear();
    KINDS.set(file, kind);
  }
  return kind;
}

/**
 * Reads a draw's frames (from the drawing function's caller, `own` frames of this module above
 * them counted) in order, to the first that tells: a driver's among the first two, Node's
 * internals' (then the next frame is Node's: fetch's timing info), else the first that is neither
 * Node's nor an id library's (the agent's or a telemetry SDK's). When the first FIRST_FRAMES do
 * not tell, the next to DEEP_FRAMES are read; past them, or past the stack's end (`whole`: the
 * sites are all there is), the draw is the agent's (or Node's, its caller being Node's).
 * @param {any[]} sites @param {number} own @param {boolean} whole
 * @returns {'internal' | 'driver' | 'telemetry' | 'agent' | undefined} undefined: more frames are
 *   needed than were captured
 */
function readStack(sites, own, whole) {
  let frame = 0;
  let internal = false;
  const n = Math.min(sites.length, DEEP_FRAMES - own);
  for (let i = 0; i < n; i++) {
    // The first frames told nothing more than that Node's code drew: Node's draw.
    if (internal && own + i === FIRST_FRAMES) return told('internal', i);
    const file = sites[i].getFileName?.() ?? '';
    if (SELF.has(file)) continue;
    frame++;
    const kind = kindOf(file);
    if (frame <= 2 && kind.driver) return told('driver', i + 1);
    if (frame === 1 && file.startsWith('node:internal/')) {
      internal = true;
      continue;
    }
    if (internal) return told('internal', i + 1);
    if (file.startsWith('node:') || kind.forCaller) continue;
    return told(kind.telemetry ? 'telemetry' : 'agent', i + 1);
  }
  // Every frame read was ours, Node's or an id library's.
  if (whole || own + n >= DEEP_FRAMES) return told(internal ? 'internal' : 'agent', n);
  return undefined;
}

/**
 * @template {string} T @param {T} by @param {number} frames how many frames telling it took
 * @returns {T}
 */
function told(by, frames) {
  framesRead = frames;
  return by;
}

/**
 * The call sites of the caller of `below` (at most `limit`): call sites, not a formatted stack,
 * which costs ten times more.
 * @returns {any[]}
 */
export function callSites(limit, below) {
  const stackLimit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = limit;
  Error.prepareStackTrace = (_error, sites) => sites;
  /** @type {{ stack?: unknown }} */
  const holder = {};
  try {
    Error.captureStackTrace(holder, below);
    return Array.isArray(holder.stack) ? holder.stack : [];
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = stackLimit;
  }
}

// Some of these are accessor properties (node:crypto.getRandomValues): redefine them as values.
function set(target, key, value) {
  try {
    Object.defineProperty(target, key, { value, writable: true, configurable: true, enumerable: true });
  } catch {
    // A frozen or non-configurable property stays as it is: its values are not recorded.
  }
}

/** A typed array's bytes as lowercase hex (how randomBytes values are recorded). */
export function bytesToHex(array) {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString('hex');
}

/**
 * Replaces target[key] (a function or class) with a wrapper that runs it between enter() and
 * leave(), so clock/random values drawn inside (an interceptor's own request ids) are not counted
 * as the agent's. Returns the undo, or undefined when target[key] is not a function.
 */
export function wrapSuppressed(target, key, enter, leave) {
  const real = target[key];
  if (typeof real !== 'function') return undefined;
  const patched = function (...args) {
    enter();
    try {
      return new.target ? Reflect.construct(real, args, new.target) : real.apply(this, args);
    } finally {
      leave();
    }
  };
  Object.defineProperties(patched, Object.getOwnPropertyDescriptors(real));
  target[key] = patched;
  return () => {
    target[key] = real;
  };
}

/**
 * The ClientRequest interceptor's socket parses what a request writes and draws the request's id
 * (Math.random) once its headers are complete: on a later tick (the request's flush) or inside the
 * agent's req.end(), outside the wrapped http.request. So the write and end of every socket class
 * a ClientRequest is handed (other than net.Socket's own) are wrapped too, with `suppressDuring`
 * (target, key) as for http.request; else each node:http call the interceptors see (axios, got)
 * takes one of the agent's random values. Returns the undo of the onSocket patch.
 * @param {typeof import('node:http')} http
 * @param {typeof import('node:net')} net
 * @param {(target: any, key: string) => void} suppressDuring
 */
export function quietRequestSockets(http, net, suppressDuring) {
  const proto = http.ClientRequest.prototype;
  const onSocket = proto.onSocket;
  const quieted = new WeakSet();
  proto.onSocket = function (socket, ...rest) {
    const socketProto = socket ? Object.getPrototypeOf(socket) : undefined;
    if (socketProto && socketProto !== net.Socket.prototype && !quieted.has(socketProto)) {
      quieted.add(socketProto);
      suppressDuring(socketProto, 'write');
      suppressDuring(socketProto, 'end');
    }
    return onSocket.call(this, socket, ...rest);
  };
  return () => {
    proto.onSocket = onSocket;
  };
}
