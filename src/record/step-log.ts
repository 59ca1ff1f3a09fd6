// The steps a recording session writes, in the order it decides (src/record/session.ts reads the
// capture layer's messages and says which step each makes): each numbered next and named by the
// format's StepNamer, its events appended through the writer and handed to the onEvent observer,
// the model's decided tool calls counted off as steps carry them out; and the world's changes since
// the last look, as the events of a step or as a step of their own.
import { carriedToolCalls } from '../providers/index.js';
import type {
  AppendInput,
  DbChangedPayload,
  EventType,
  FsChangedPayload,
  RecordingWriter,
  StepEvent,
  StepRecord,
} from '../recording/index.js';
import { StepNamer, stepEvents, ToolCallAccount } from '../recording/index.js';
import type { FileLook } from './protocol.js';

/**
 * Where the session gets the world changes since it last asked. `files`: files the agent's
 * process read itself, applied first; `quiet`: nothing else is looked for; `busy`: files the
 * agent's file calls in flight are changing, left to their own messages (src/record/world).
 */
export interface WorldSource {
  drain(
    files?: FileLook[],
    quiet?: boolean,
    busy?: readonly string[],
  ): Promise<{ fs: FsChangedPayload[]; db: DbChangedPayload[] }>;
}

/** An event as the session appended it (after seq assignment), for onEvent observers. */
export interface RecordedEvent {
  seq: number;
  type: EventType;
  stepId: number;
  parentStepId?: number;
  payload: unknown;
}

/** What a message says of the world at its boundary (src/record/protocol.ts: QUIET, BUSY). */
export interface WorldLook {
  files?: FileLook[] | undefined;
  quiet?: boolean | undefined;
  busy?: readonly string[] | undefined;
}

export class StepLog {
  private last = 0;
  /** Names each step as it is written, and knows the last model step that decided tool calls. */
  private readonly namer = new StepNamer(carriedToolCalls);
  /** Tool calls the model decided that no step carried out: said when the recording closes. */
  readonly toolCalls = new ToolCallAccount();

  constructor(
    private readonly writer: RecordingWriter,
    private readonly world: WorldSource | undefined,
    private readonly onEvent: ((event: RecordedEvent) => void | Promise<void>) | undefined,
  ) {}

  /** The number of steps written so far (the last one's id). */
  get count(): number {
    return this.last;
  }

  /** The parent of the tool steps that follow: the last model step that decided tool calls. */
  get lastThink(): number | undefined {
    return this.namer.lastThink;
  }

  /** Appends one event and tells the observer (awaited: the agent waits at the next step boundary). */
  async emit(input: AppendInput): Promise<void> {
    const seq = this.writer.append(input);
    this.toolCalls.see(input);
    await this.onEvent?.({
      seq,
      type: input.type,
      stepId: input.stepId,
      ...(input.parentStepId === undefined ? {} : { parentStepId: input.parentStepId }),
      payload: input.payload,
    });
  }

  /** Writes one step (numbered next, named by the format's StepNamer) through its step writer; returns its id. */
  async write(step: Omit<StepRecord, 'stepId'>): Promise<number> {
    const stepId = ++this.last;
    for (const event of stepEvents(this.namer.name({ ...step, stepId }))) await this.emit(event);
    return stepId;
  }

  /**
   * The world's changes since the last drain: with `files` (read by the agent) applied first;
   * `quiet`: those alone; `busy`: files the agent's file calls in flight change, left to them.
   */
  async worldChanges(at: WorldLook = {}): Promise<StepEvent[]> {
    const { files, quiet, busy } = at;
    if (this.world === undefined || (quiet === true && files === undefined)) return [];
    const { fs, db } = await this.world.drain(files, quiet, busy);
    return [
      ...fs.map((payload): StepEvent => ({ type: 'fs.changed', payload })),
      ...db.map((payload): StepEvent => ({ type: 'db.changed', payload })),
    ];
  }

  /** World changes made between steps (by the agent itself or by other processes) become their own step. */
  async drainBetweenSteps(busy?: readonly string[]): Promise<void> {
    await this.writeChanges(await this.worldChanges({ busy }), Date.now());
  }

  /** World changes made by the agent itself between calls: a step of their own. */
  async writeChanges(changes: StepEvent[], now: number): Promise<void> {
    if (changes.length === 0) return;
    const hasFs = changes.some((c) => c.type === 'fs.changed');
    await this.write({
      stateType: hasFs ? 'FILE_WRITE' : 'DB_QUERY',
      name: hasFs ? 'file changes' : 'database changes',
      parentStepId: this.lastThink,
      start: now,
      end: now,
      events: changes,
      status: 'success',
    });
  }
}
