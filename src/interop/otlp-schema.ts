// OTLP/JSON traces (ExportTraceServiceRequest, opentelemetry-proto trace/v1, with the OTLP/JSON
// rules: lowerCamelCase fields, trace and span ids as hex, 64-bit integers as decimal strings or
// numbers, enums as integers). Files from other tools are untrusted input: they are read through
// this schema, within size limits.
import { readFileSync, statSync } from 'node:fs';
import * as z from 'zod';
import { TapedeckError } from '../recording/errors.js';
import { whyNotJson } from '../recording/json.js';

/** A trace (16 bytes) or span (8 bytes) id: hex as OTLP/JSON writes it, or base64 as plain proto3 JSON does. */
const HexId = (bytes: 16 | 8) =>
  z
    .string()
    .regex(bytes === 16 ? /^([0-9a-fA-F]{32}|[A-Za-z0-9+/]{22}==)$/ : /^([0-9a-fA-F]{16}|[A-Za-z0-9+/]{11}=)$/, {
      message: `expected a ${bytes}-byte id as hex`,
    });
const Int64 = z.union([z.string().regex(/^-?\d{1,20}$/), z.number().int()]);
/** A time: nanoseconds since 1970, not before it (at most 20 digits: before the year 5000). */
const UnixNano = z.union([
  z.string().regex(/^\d{1,20}$/, { message: 'expected nanoseconds since 1970' }),
  z.number().int().nonnegative(),
]);

export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  bytesValue?: string;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}
export interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}

export const AnyValueSchema: z.ZodType<OtlpAnyValue> = z.lazy(() =>
  z
    .object({
      stringValue: z.string().optional(),
      boolValue: z.boolean().optional(),
      intValue: Int64.optional(),
      doubleValue: z.union([z.number(), z.string()]).optional(),
      bytesValue: z.string().optional(),
      arrayValue: z.object({ values: z.array(AnyValueSchema).optional() }).optional(),
      kvlistValue: z.object({ values: z.array(KeyValueSchema).optional() }).optional(),
    })
    .strict(),
);
export const KeyValueSchema: z.ZodType<OtlpKeyValue> = z.lazy(() =>
  z.object({ key: z.string(), value: AnyValueSchema.optional() }).strict(),
);

const Attributes = z.array(KeyValueSchema).optional();

export const SpanSchema = z
  .object({
    traceId: HexId(16),
    spanId: HexId(8),
    parentSpanId: z.union([HexId(8), z.literal('')]).optional(),
    traceState: z.string().optional(),
    flags: z.number().int().optional(),
    name: z.string(),
    kind: z.number().int().min(0).max(5).optional(),
    startTimeUnixNano: UnixNano,
    endTimeUnixNano: UnixNano,
    attributes: Attributes,
    droppedAttributesCount: z.number().int().optional(),
    events: z
      .array(
        z
          .object({
            timeUnixNano: UnixNano.optional(),
            name: z.string(),
            attributes: Attributes,
            droppedAttributesCount: z.number().int().optional(),
          })
          .strict(),
      )
      .optional(),
    droppedEventsCount: z.number().int().optional(),
    links: z.array(z.looseObject({ traceId: HexId(16), spanId: HexId(8) })).optional(),
    droppedLinksCount: z.number().int().optional(),
    status: z
      .object({ code: z.number().int().min(0).max(2).optional(), message: z.string().optional() })
      .strict()
      .optional(),
  })
  .strict();

export const TracesSchema = z
  .object({
    resourceSpans: z.array(
      z
        .object({
          resource: z
            .object({ attributes: Attributes, droppedAttributesCount: z.number().int().optional() })
            .strict()
            .optional(),
          scopeSpans: z
            .array(
              z
                .object({
                  scope: z
                    .object({
                      name: z.string().optional(),
                      version: z.string().optional(),
                      attributes: Attributes,
                      droppedAttributesCount: z.number().int().optional(),
                    })
                    .strict()
                    .optional(),
                  spans: z.array(SpanSchema).optional(),
                  schemaUrl: z.string().optional(),
                })
                .strict(),
            )
            .optional(),
          schemaUrl: z.string().optional(),
        })
        .strict(),
    ),
  })
  .strict();

export type OtlpSpan = z.infer<typeof SpanSchema>;
export type OtlpTraces = z.infer<typeof TracesSchema>;

/** The plain value of an OTLP AnyValue (arrays and key-value lists become arrays and objects). */
export function anyValue(v: OtlpAnyValue | undefined): unknown {
  if (v === undefined) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.bytesValue !== undefined) return v.bytesValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(anyValue);
  if (v.kvlistValue !== undefined)
    return Object.fromEntries((v.kvlistValue.values ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
  return undefined;
}

/** An attribute for a plain value (the JS SDK's encoding: integers as intValue, other numbers as doubleValue). */
export function keyValue(key: string, value: unknown): OtlpKeyValue {
  return { key, value: toAnyValue(value) };
}

function toAnyValue(value: unknown): OtlpAnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(toAnyValue) } };
  return { stringValue: JSON.stringify(value) };
}

/** Span attributes as a plain object. */
export function attributesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

/** A hex id, whether given as hex or (as proto3 JSON does) base64. */
export function hexId(id: string): string {
  if (/^[0-9a-fA-F]+$/.test(id) && (id.length === 32 || id.length === 16)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

/** OTLP files larger than this are refused. */
export const MAX_OTLP_BYTES = 512 * 1024 * 1024;

/** Reads an OTLP/JSON traces file (or JSON lines of them, as the collector's file exporter writes). */
export function readOtlpFile(file: string): OtlpTraces {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new TapedeckError('NOT_FOUND', `${file}: no such file`);
  }
  if (size > MAX_OTLP_BYTES)
    throw new TapedeckError('OTLP_TOO_LARGE', `${file} is ${size} bytes, more than the ${MAX_OTLP_BYTES} allowed`);
  const text = readFileSync(file, 'utf8');
  const docs: unknown[] = [];
  try {
    docs.push(JSON.parse(text));
  } catch {
    for (const [i, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      try {
        docs.push(JSON.parse(line));
      } catch (error) {
        throw new TapedeckError('BAD_OTLP', `${file}:${i + 1}: not JSON: ${whyNotJson(error)}`);
      }
    }
  }
  const out: OtlpTraces = { resourceSpans: [] };
  for (const [i, doc] of docs.entries()) {
    const parsed = TracesSchema.safeParse(doc);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TapedeckError(
        'BAD_OTLP',
        `${file}${docs.length > 1 ? `:${i + 1}` : ''}: field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'} (expected OTLP/JSON traces: {resourceSpans: [...]})`,
      );
    }
    out.resourceSpans.push(...parsed.data.resourceSpans);
  }
  return out;
}
