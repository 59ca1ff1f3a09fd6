// @ts-check
// The replay preload's nondeterministic values: clock, random, uuid and random bytes handed to the
// agent from the recording in order, then from a seeded generator (time never runs backwards), and
// the values handed since the last request, reported as the recorder reports them. A recorded
// answer is held until this process has drawn the values it had drawn when that answer came
// (`hold`), so concurrent branches take the same values as when recorded.
import path from 'node:path';
import { loadStretch, monotonicNow } from './shared-clock.mjs';
import { bytesToHex, patchNondeterminism } from './shared-nondeterminism.mjs';

// Taken at load: an agent's fake timers do not hold the replayer's own turn-end reports.
const realSetImmediate = setImmediate;
const realSetTimeout = setTimeout;
const realClearTimeout = clearTimeout;
/**
 * How long an answer waits at most for the values recorded before it: the call's recorded
 * latency, at least HOLD_MIN_MS (a replay's timers run late on a busy machine) and at most
 * HOLD_MAX_MS (an agent that no longer draws them, or draws them only after this answer), times
 * the machine's load per core (loadStretch, shared-clock.mjs).
 */
const HOLD_MIN_MS = 100;
const HOLD_MAX_MS = 2000;
/** A small deterministic PRNG for values asked for beyond what the recording holds. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MEMFS_FILES = [`${path.sep}memfs${path.sep}`, `${path.sep}@jsonjoy.com${path.sep}fs-`];
/** How many frames of a clock read's stack say whether the memfs volume reads it. */
const MEMFS_FRAMES = 10;

/**
 * Whether the clock is read by the memfs volume: a memfs file in the first MEMFS_FRAMES of the
 * read's frames (the clock patch's capture, shared with its own checks: its call sites from the
 * caller of Date.now or Date, `own` frames of the patch's counted above them).
 * @param {any[] | undefined} sites @param {number} own
 */
function fromFsSandbox(sites, own) {
  if (sites === undefined) return false;
  const n = Math.min(sites.length, MEMFS_FRAMES - own);
  for (let i = 0; i < n; i++) {
    const file = sites[i].getFileName?.() ?? '';
    if (MEMFS_FILES.some((m) => file.includes(m))) return true;
  }
  return false;
}

/**
 * Whether Node's own code may have read the clock: a replay's answer to the clock patch's
 * `internalsMayRead` (see patchNondeterminism). Node's only clock reads that reach the patch are
 * its bundled undici's (its other internals take Date from primordials), in two places: a
 * response body of a fetch that really went out ending, and FormData's append or set wrapping a
 * Blob-like that is not Node's (a polyfill's) in a file of its own. A replay answers every fetch
 * itself, so the first never happens unless Node's fetch is reached after all. Node's fetch and
 * FormData's two methods are marked, and until one has run a clock read is the agent's whatever
 * its stack says of Node (the stack is read all the same, for a telemetry SDK's reads: one capture
 * a read). FormData's are marked once undici's web globals are first touched (FormData, or
 * Headers, Request or Response, whose bodies' formData() make FormData): touching them loads
 * undici (~45 ms), which an agent that never uses them should not pay for.
 * @returns {() => boolean}
 */
export function watchNodeClockReads() {
  let mayRead = false;
  const mark = (target, key) => {
    const real = target?.[key];
    if (typeof real !== 'function') return;
    const marked = function (...args) {
      mayRead = true;
      return real.apply(this, args);
    };
    Object.defineProperties(marked, Object.getOwnPropertyDescriptors(real));
    const descriptor = Object.getOwnPropertyDescriptor(target, key);
    Object.defineProperty(target, key, { ...descriptor, value: marked });
  };
  mark(globalThis, 'fetch');
  let formData = false;
  const markFormData = () => {
    if (formData) return;
    formData = true;
    mark(globalThis.FormData?.prototype, 'append');
    mark(globalThis.FormData?.prototype, 'set');
  };
  for (const name of ['FormData', 'Headers', 'Request', 'Response']) {
    const own = Object.getOwnPropertyDescriptor(globalThis, name);
    // Already a value (loaded), or not Node's lazy global: marked now.
    if (!own?.get || !own.configurable) {
      markFormData();
      continue;
    }
    const settle = (value) =>
      Object.defineProperty(globalThis, name, {
        value,
        writable: true,
        configurable: true,
        enumerable: own.enumerable,
      });
    Object.defineProperty(globalThis, name, {
      configurable: true,
      enumerable: own.enumerable,
      get() {
        const value = own.get?.call(globalThis);
        settle(value);
        markFormData();
        return value;
      },
      set: settle,
    });
  }
  return () => mayRead;
}

/**
 * Serves recorded values (by kind, in order) and reports what was handed out.
 * @param {any} recorded
 * @param {number} seed
 * @param {() => boolean} suppressed
 * @param {() => boolean} memfs whether memfs is loaded for the fs sandbox (its clock reads are not the
 *   agent's): until it is, no clock read needs a look at the stack for it (~10 us a read)
 * @param {() => boolean} [internalsMayRead] whether Node's own code may read the clock (patchNondeterminism)
 * @param {string} [name] this process's name (shared-process.mjs): its reports carry it, and its
 *   values beyond the recording's come from a generator of its own
 * @param {() => void} [endOfTurn] called once at the end of each turn that handed out values (a
 *   process ended by a signal runs no exit handler: what it was handed is reported by then)
 * @param {{ skip?: Record<string, number>, never?: boolean }} [gate] the process's values start at
 *   its run's start, not at its own (a run recorded in-process by record(), replayed by a command):
 *   until `startRun` it draws real values, neither served nor reported. `startRun('call')` (its
 *   first recorded call, no marker before) passes over `skip`, the values its run drew before its
 *   first step; `never`: a process the command started before its run, whose values are all its own
 */
export function installNondeterminism(recorded, seed, suppressed, memfs, internalsMayRead, name, endOfTurn, gate) {
  /** How the run started ('marker', 'call'; none yet) and what was drawn before, by kind. */
  const runStart =
    gate === undefined
      ? undefined
      : {
          by: /** @type {'marker' | 'call' | undefined} */ (undefined),
          before: /** @type {Record<string, number>} */ ({}),
        };
  /** @param {'marker' | 'call'} by */
  const startRun = (by) => {
    if (runStart === undefined || runStart.by !== undefined || gate?.never) return;
    runStart.by = by;
    if (by === 'call') for (const [kind, n] of Object.entries(gate?.skip ?? {})) cursor[kind] = n;
  };
  let turnEnds = false;
  const atTurnEnd = () => {
    turnEnds = false;
    endOfTurn?.();
  };
  let own = seed;
  for (const c of name ?? '') own = (Math.imul(own, 31) + c.charCodeAt(0)) >>> 0;
  const prng = mulberry32(own);
  const cursor = { clock: 0, random: 0, uuid: 0, randomBytes: 0, hrtime: 0 };
  const served = { clock: 0, random: 0, uuid: 0, randomBytes: 0, hrtime: 0 };
  const fallback = { clock: 0, random: 0, uuid: 0, randomBytes: 0, hrtime: 0 };
  let clockShift;
  let hrtimeShift;
  const hex = (n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += Math.floor(prng() * 16).toString(16);
    return s;
  };
  // Values handed to the agent since the last request, reported like the recorder reports them.
  const handed = { clock: [], random: [], uuid: [], randomBytes: [], hrtime: [] };
  const HANDED_MAX = 10000;
  const choose = (kind, real) => {
    const list = recorded[kind] ?? [];
    const i = cursor[kind]++;
    if (i < list.length) {
      served[kind]++;
      const value = list[i];
      if (kind === 'clock') clockShift = undefined;
      if (kind === 'hrtime') hrtimeShift = undefined;
      if (kind === 'randomBytes') {
        const bytes = Buffer.from(String(value), 'hex');
        const view = new Uint8Array(real.buffer, real.byteOffset, real.byteLength);
        if (bytes.length === view.length) view.set(bytes);
        return real;
      }
      return value;
    }
    fallback[kind]++;
    switch (kind) {
      case 'clock': {
        // Time keeps flowing from the last recorded instant, never backwards.
        const last = list.length > 0 ? Number(list[list.length - 1]) : real;
        clockShift ??= last - real;
        return Math.max(last, real + clockShift);
      }
      case 'hrtime': {
        // The monotonic clock too goes on from the last recorded reading.
        const last = list.length > 0 ? Number(list[list.length - 1]) : real;
        hrtimeShift ??= last - real;
        return Math.max(last, real + hrtimeShift);
      }
      case 'random':
        return prng();
      case 'uuid': {
        const h = hex(32);
        return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Math.floor(prng() * 4)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
      }
      case 'randomBytes': {
        const view = new Uint8Array(real.buffer, real.byteOffset, real.byteLength);
        for (let j = 0; j < view.length; j++) view[j] = Math.floor(prng() * 256);
        return real;
      }
      default:
        return real;
    }
  };
  // Answers held until this process has drawn the values recorded before them (hold).
  /** @type {Set<{ need: Record<string, number>, resolve: () => void, timer: ReturnType<typeof setTimeout> | undefined }>} */
  const waiters = new Set();
  const self = name ?? '';
  let unheld = 0;
  let holding = true;
  const reached = (need) => {
    for (const kind in need) if ((cursor[kind] ?? 0) < need[kind]) return false;
    return true;
  };
  const release = () => {
    for (const waiter of waiters) {
      if (!reached(waiter.need)) continue;
      waiters.delete(waiter);
      realClearTimeout(waiter.timer);
      waiter.resolve();
    }
  };
  patchNondeterminism(
    (kind, real, sites, own) => {
      // The memfs volume stamps file times with Date: the recorded agent wrote to a real disk,
      // which reads no JS clock, so those reads must not consume recorded values.
      if (kind === 'clock' && memfs() && fromFsSandbox(sites, own)) return real;
      // Before its run's start the command draws its own values (a loader's, its modules' top level).
      if (runStart !== undefined && runStart.by === undefined) {
        runStart.before[kind] = (runStart.before[kind] ?? 0) + 1;
        return real;
      }
      const value = choose(kind, real);
      if (waiters.size > 0) release();
      if (handed[kind] && handed[kind].length < HANDED_MAX) {
        handed[kind].push(kind === 'randomBytes' ? bytesToHex(value) : value);
        if (endOfTurn !== undefined && !turnEnds) {
          turnEnds = true;
          realSetImmediate(atTurnEnd);
        }
      }
      return value;
    },
    suppressed,
    internalsMayRead,
    // The memfs check reads a clock read's stack: captured that deep, once, with the patch's own.
    () => (memfs() ? MEMFS_FRAMES : 0),
  );
  const takeHanded = () => {
    const out = {};
    let any = false;
    for (const kind of Object.keys(handed)) {
      if (handed[kind].length > 0) {
        out[kind] = handed[kind];
        handed[kind] = [];
        any = true;
      }
    }
    if (any && name !== undefined) out.process = name;
    return out;
  };
  /**
   * undefined when this process has drawn, of each kind, as many values as it had when the
   * recorded answer reached it (`drawn`, src/replay/drawn.ts), so the answer goes now (no timer,
   * no wait); else a promise, resolved once it has, or once the call has waited about as long as
   * it did when recorded (from `since`, monotonicNow() when the call was made; none: now): then
   * the answer goes anyway and `unheld` counts it.
   * @param {import('../protocol.js').Drawn | undefined} drawn @param {number} [since]
   * @returns {Promise<void> | undefined}
   */
  const hold = (drawn, since) => {
    const need = drawn?.counts[self];
    if (!holding || drawn === undefined || need === undefined || reached(need)) return undefined;
    const left =
      Math.min(Math.max(drawn.withinMs, HOLD_MIN_MS), HOLD_MAX_MS) * loadStretch() -
      (since === undefined ? 0 : monotonicNow() - since);
    if (left <= 0) {
      unheld++;
      return undefined;
    }
    return new Promise((resolve) => {
      /** @type {{ need: Record<string, number>, resolve: () => void, timer: ReturnType<typeof setTimeout> | undefined }} */
      const waiter = { need, resolve: () => resolve(undefined), timer: undefined };
      waiter.timer = realSetTimeout(() => {
        waiters.delete(waiter);
        unheld++;
        // The counts overstate what this agent draws before its answers: changed code, a recording
        // made before the recorder counted at the head (got's reads once the head has come counted
        // before the answer), or before it noted whether a request's socket was reused (the stand-in's
        // socket is then new, and connects: got reads the clock once more than on a reused one).
        // Its later answers are not held, rather than each waiting out the bound.
        holding = false;
        resolve(undefined);
      }, left);
      waiters.add(waiter);
    });
  };
  /** Whether this process has drawn, of each kind, as many values as `need` counts. */
  const drawnAsMany = (/** @type {Record<string, number>} */ need) => reached(need);
  return { served, fallback, takeHanded, hold, drawnAsMany, unheld: () => unheld, startRun, runStart: () => runStart };
}

/** Replayed streams held open until the replay has served the step they ended after. */
