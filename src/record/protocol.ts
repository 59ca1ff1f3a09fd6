// The messages the capture layer (src/record/preload/record.mjs) sends to the recording session,
// one JSON object per line over IPC (or directly, in-process). Validated with zod on arrival.
import { z } from 'zod';
import { DbChangedPayloadSchema, StateTypeSchema } from '../recording/schema.js';

/** A body as the capture layer sends it: utf8 text or base64, with the original size. */
export const WireBodySchema = z.object({
  size: z.number(),
  text: z.string().optional(),
  b64: z.string().optional(),
  truncated: z.boolean().optional(),
});
export type WireBody = z.infer<typeof WireBodySchema>;

const Headers = z.record(z.string(), z.string());
const WireError = z.object({ code: z.string(), message: z.string() });

const REQUEST = {
  id: z.string(),
  pid: z.number(),
  ts: z.number(),
  method: z.string(),
  url: z.string(),
  headers: Headers,
  body: WireBodySchema.optional(),
};
const RESPONSE_HEAD = { ts: z.number(), status: z.number(), statusText: z.string().optional(), headers: Headers };

export const CaptureMessageSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('hello'),
    pid: z.number(),
    ppid: z.number().optional(),
    argv: z.array(z.string()),
    cwd: z.string(),
  }),
  z.object({ t: z.literal('req'), ...REQUEST }),
  z.object({
    t: z.literal('res'),
    id: z.string(),
    ...RESPONSE_HEAD,
    /** Streamed responses: chunks and an `end` message follow. */
    stream: z.boolean().optional(),
    body: WireBodySchema.optional(),
    /** Time the whole body was read (non-streamed responses). */
    end: z.number().optional(),
    error: WireError.optional(),
  }),
  z.object({ t: z.literal('chunk'), id: z.string(), off: z.number(), data: z.string() }),
  /** A whole non-streamed exchange in one message (request, response, end). */
  z.object({
    t: z.literal('xchg'),
    ...REQUEST,
    res: z.object({ ...RESPONSE_HEAD, body: WireBodySchema.optional() }).optional(),
    end: z.number(),
    error: WireError.optional(),
  }),
  z.object({ t: z.literal('end'), id: z.string(), ts: z.number(), error: WireError.optional() }),
  z.object({
    t: z.literal('tool'),
    id: z.string(),
    pid: z.number(),
    name: z.string(),
    ts: z.number(),
    end: z.number(),
    args: z.unknown(),
    result: z.unknown().optional(),
    error: WireError.optional(),
    stateType: StateTypeSchema.optional(),
    mutating: z.boolean().optional(),
    /** Row changes the tool's own database statements committed (observed world capture): its effects. */
    db: z.array(DbChangedPayloadSchema).optional(),
  }),
  z.object({
    t: z.literal('nd'),
    pid: z.number(),
    ts: z.number(),
    batches: z.object({
      clock: z.array(z.number()).optional(),
      random: z.array(z.number()).optional(),
      uuid: z.array(z.string()).optional(),
      randomBytes: z.array(z.string()).optional(),
    }),
  }),
  z.object({ t: z.literal('sync'), n: z.number(), reason: z.enum(['req', 'res']), id: z.string().optional() }),
  /** Row changes the run's own database statements committed (observed world capture), in order. */
  z.object({ t: z.literal('db'), ts: z.number(), changes: z.array(DbChangedPayloadSchema) }),
]);
export type CaptureMessage = z.infer<typeof CaptureMessageSchema>;
export type MessageOf<T extends CaptureMessage['t']> = Extract<CaptureMessage, { t: T }>;

/** Decodes a wire body to bytes. */
export function wireBytes(body: WireBody | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (body.b64 !== undefined) return Buffer.from(body.b64, 'base64');
  return Buffer.from(body.text ?? '', 'utf8');
}
