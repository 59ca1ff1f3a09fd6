// The replay's watchdog: an agent that makes no progress for the idle limit (or runs past the
// optional wall limit) is stopped. Progress is anything the agent does that the replayer sees: a
// call asked or served, a tool or file step, output, a process's exit. Time the replayer itself
// spends answering (a live model thinking for minutes, a sandbox service) is never idle.
import type { ReplayNotice, ReplayQuestion } from '../../sandbox/index.js';
import { parseDuration } from '../config/duration.js';
import type { Stopped } from '../recording/index.js';
import type { AgentHandle, AgentWatch } from './setup.js';
import type { ReplayOptions } from './types.js';

/** The replay's limits in milliseconds; 0 is never. */
export interface ReplayLimits {
  /** Stop after this long with no progress (default DEFAULT_IDLE_MS). */
  idleMs: number;
  /** Stop after this long in all, progress or not (default 0: never). */
  wallMs: number;
}

/**
 * Five minutes without any call, step, output or exit: far past what an honest agent spends
 * computing on its own between calls, and waiting on a live model or service is not counted.
 */
export const DEFAULT_IDLE_MS = 5 * 60_000;

export type StopReason = 'idle' | 'wall' | 'interrupted';

/**
 * Tells `expire` once, when the agent made no progress for `idleMs` (while nothing is being
 * answered for it) or ran for `wallMs`. `progress` restarts the idle clock; `busy` marks time the
 * replayer spends on the agent's behalf until the returned function is called.
 * @example const dog = new Watchdog({ idleMs: 90_000, wallMs: 0 }, (why) => stopAgent(why));
 */
export class Watchdog {
  private idleTimer: NodeJS.Timeout | undefined;
  private wallTimer: NodeJS.Timeout | undefined;
  private busyCount = 0;
  private done = false;
  private readonly started = Date.now();
  /** When the agent last made progress, and what it was. */
  lastAt = Date.now();
  last = 'started';

  constructor(
    readonly limits: ReplayLimits,
    private readonly expire: (reason: StopReason) => void,
  ) {
    if (limits.wallMs > 0) {
      this.wallTimer = setTimeout(() => this.fire('wall'), limits.wallMs);
      this.wallTimer.unref();
    }
    this.arm();
  }

  /** The agent did something: the idle clock starts again. */
  progress(what?: string): void {
    if (this.done) return;
    this.lastAt = Date.now();
    if (what !== undefined) this.last = what;
    this.arm();
  }

  /** The replayer works for the agent (answering a call) until the returned function is called. */
  busy(what: string): () => void {
    this.progress(what);
    this.busyCount++;
    this.disarm();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.busyCount--;
      this.progress();
    };
  }

  /** Stops the agent from outside (a signal to tapedeck). */
  interrupt(): void {
    this.fire('interrupted');
  }

  /** Milliseconds since the agent's last progress, and since the start. */
  idleFor(): number {
    return Date.now() - this.lastAt;
  }
  elapsed(): number {
    return Date.now() - this.started;
  }

  stop(): void {
    this.done = true;
    this.disarm();
    if (this.wallTimer) clearTimeout(this.wallTimer);
  }

  private arm(): void {
    this.disarm();
    if (this.done || this.busyCount > 0 || this.limits.idleMs === 0) return;
    this.idleTimer = setTimeout(() => this.fire('idle'), this.limits.idleMs);
    this.idleTimer.unref();
  }

  private disarm(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private fire(reason: StopReason): void {
    if (this.done) return;
    this.stop();
    this.expire(reason);
  }
}

/** The replay's limits: the options', else the project config's, else the defaults. */
export function limitsOf(options: ReplayOptions): ReplayLimits {
  const config = options.chain?.config ?? options.config;
  return {
    idleMs:
      options.idleTimeoutMs ??
      (config?.timeout === undefined ? DEFAULT_IDLE_MS : parseDuration('the config file’s timeout', config.timeout)),
    wallMs:
      options.wallTimeoutMs ??
      options.timeoutMs ??
      (config?.wallTimeout === undefined ? 0 : parseDuration('the config file’s wallTimeout', config.wallTimeout)),
  };
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * One replay's watchdog wired to its agent: the calls asked (busy while answered), the notices
 * (steps the preload served or began), the output; on expiry or a signal, what the agent was
 * doing is read and its whole tree stopped, and `ended` gives the account the recording keeps.
 */
export class ReplayGuard {
  private readonly dog: Watchdog;
  private agent: AgentHandle | undefined;
  private stopped: Stopped | undefined;
  private stopping: Promise<void> | undefined;
  private last: string | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    // A second signal while the first is handled: the user means it.
    if (this.stopped?.reason === 'interrupted') process.exit(130);
    this.stop('interrupted', signal);
  };

  constructor(
    private readonly limits: ReplayLimits,
    private readonly session: { readonly lastStep: number },
    private readonly signals: boolean,
  ) {
    this.dog = new Watchdog(limits, (reason) => this.stop(reason));
    if (signals) for (const name of SIGNALS) process.on(name, this.onSignal);
  }

  /** A call the agent asks: busy (not idle) until the returned function is called. */
  asked(question: ReplayQuestion): () => void {
    const what =
      question.kind === 'http'
        ? callName(question.method, question.url)
        : question.kind === 'tool'
          ? `tool ${question.name}`
          : undefined;
    const done = this.dog.busy(what ?? 'a step');
    return () => {
      if (what !== undefined) this.last = what;
      done();
    };
  }

  /** A notice: a call the preload served itself, a step it began, values it drew. */
  noticed(notice: ReplayNotice): void {
    const what =
      notice.t === 'served'
        ? callName(notice.method, notice.url)
        : notice.t === 'file'
          ? `${notice.name} ${notice.args.path}`
          : notice.t === 'rpc'
            ? `rpc ${notice.request.method}`
            : undefined;
    if (what !== undefined) this.last = what;
    this.dog.progress(what);
  }

  /** What the runner tells: the agent started (its handle), and each piece of output. */
  watch(spawned: (agent: AgentHandle) => void): AgentWatch {
    return {
      started: (agent) => {
        this.agent = agent;
        this.dog.progress();
        spawned(agent);
      },
      output: () => this.dog.progress(),
    };
  }

  /** After the agent's exit: why it was stopped, or undefined when it ended by itself. */
  async ended(): Promise<Stopped | undefined> {
    this.end();
    await this.stopping;
    return this.stopped;
  }

  /** No more stops: the timers and the signal handlers go. */
  end(): void {
    this.dog.stop();
    if (this.signals) for (const name of SIGNALS) process.off(name, this.onSignal);
  }

  private stop(reason: StopReason, signal?: NodeJS.Signals): void {
    if (this.stopped) return;
    const agent = this.agent;
    this.stopped = {
      reason,
      ...(reason === 'interrupted' ? {} : { limitMs: reason === 'idle' ? this.limits.idleMs : this.limits.wallMs }),
      ...(signal ? { signal } : {}),
      lastStep: this.session.lastStep,
      ...(this.last !== undefined ? { last: this.last.slice(0, 500) } : {}),
      doing: 'not started yet',
    };
    const stopped = this.stopped;
    this.stopping = (async () => {
      if (!agent) return;
      // What it was doing is read while it still runs, then the whole tree goes.
      stopped.doing = (await agent.describe().catch(() => 'in a state that could not be read')).slice(0, 2000);
      agent.stop();
    })();
  }
}

/** A call as the stop line names it: method, origin and path (a query may carry secrets). */
function callName(method: string, url: string): string {
  try {
    const u = new URL(url);
    return `${method} ${u.origin}${u.pathname}`;
  } catch {
    return `${method} ${url.split('?')[0]}`;
  }
}
