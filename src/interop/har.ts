// HAR 1.2 interop: a recording's HTTP exchanges as a HAR archive (browsers, proxies, HAR viewers),
// and a HAR archive as a recording. Import feeds each entry to the recorder's own session, so model
// calls are decoded and tool calls classified exactly as when recording. What HAR has no field for
// (exchange ids, streamed chunks with their offsets, binary request bodies) rides in `_tapedeck`.
import { readFileSync, statSync } from 'node:fs';
import * as z from 'zod';
import { packageVersion } from '../package.js';
import { streamBytes } from '../providers/index.js';
import { RecordSession } from '../record/session.js';
import { TapedeckError } from '../recording/errors.js';
import { bodyBytes, HeaderName, HeaderValue, HttpRequestSchema, IsoTime, whyNotJson } from '../recording/index.js';
import type { HttpExchangePayload, Recording } from '../recording/types.js';
import { writeImported } from './imported.js';

export const MAX_HAR_BYTES = 512 * 1024 * 1024;

/**
 * A header as the recording format takes it (a replay sends and serves it): the reader's rules, so
 * an archive from elsewhere is refused here, naming its field, not written into a recording no
 * command reads.
 */
const Header = z.object({ name: HeaderName, value: HeaderValue }).loose();
/** A duration in ms that keeps every time it is added to a Date (about 3 years at most). */
const Duration = z.number().nonnegative().max(1e11);
const TapedeckExtra = z
  .object({
    exchangeId: z.string().min(1).optional(),
    chunks: z
      .array(z.object({ offsetMs: Duration, data: z.string(), encoding: z.literal('base64').optional() }).strict())
      .optional(),
    requestBase64: z.string().optional(),
    ttfbMs: Duration.optional(),
    error: z.object({ code: z.string(), message: z.string() }).strict().optional(),
  })
  .strict();
export const HarSchema = z
  .object({
    log: z
      .object({
        version: z.string().optional(),
        entries: z.array(
          z
            .object({
              startedDateTime: IsoTime,
              time: Duration,
              request: z
                .object({
                  method: HttpRequestSchema.shape.method,
                  url: HttpRequestSchema.shape.url,
                  headers: z.array(Header),
                  postData: z
                    .object({ mimeType: z.string().optional(), text: z.string().optional() })
                    .loose()
                    .optional(),
                })
                .loose(),
              response: z
                .object({
                  status: z.number().int().min(0).max(999),
                  statusText: z.string().optional(),
                  headers: z.array(Header),
                  content: z
                    .object({
                      size: z.number().optional(),
                      mimeType: z.string().optional(),
                      text: z.string().optional(),
                      encoding: z.string().optional(),
                    })
                    .loose(),
                })
                .loose(),
              // HAR gives -1 for a timing that does not apply.
              timings: z
                .object({ wait: z.union([Duration, z.literal(-1)]).optional() })
                .loose()
                .optional(),
              _tapedeck: TapedeckExtra.optional(),
            })
            .loose(),
        ),
      })
      .loose(),
  })
  .loose();
export type Har = z.infer<typeof HarSchema>;

type Headers = Record<string, string>;
const headerList = (h: Headers) => Object.entries(h).map(([name, value]) => ({ name, value }));
function headerMap(list: ReadonlyArray<{ name: string; value: string }>): Headers {
  const out: Headers = {};
  for (const { name, value } of list) {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}\n${value}`;
  }
  return out;
}

function isUtf8Text(bytes: Buffer): boolean {
  return Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);
}

/** A recording's HTTP exchanges as a HAR 1.2 log, in recorded order. */
export function recordingToHar(recording: Recording): Har {
  const entries = recording.events
    .filter((e) => e.type === 'http.exchange')
    .map((e) => {
      const x = e.payload as HttpExchangePayload;
      const request = bodyBytes(recording, x.request.body);
      const response = x.response?.chunks ? streamBytes(x.response.chunks) : bodyBytes(recording, x.response?.body);
      const url = new URL(x.request.url);
      const requestText = isUtf8Text(request);
      const responseText = isUtf8Text(response);
      return {
        startedDateTime: x.startedAt,
        time: x.durationMs,
        request: {
          method: x.request.method,
          url: x.request.url,
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: headerList(x.request.headers),
          queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
          ...(x.request.body
            ? {
                postData: {
                  mimeType: x.request.body.contentType ?? x.request.headers['content-type'] ?? '',
                  text: requestText ? request.toString('utf8') : '',
                },
              }
            : {}),
          headersSize: -1,
          bodySize: request.length,
        },
        response: {
          status: x.response?.status ?? 0,
          statusText: x.response?.statusText ?? '',
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: headerList(x.response?.headers ?? {}),
          content: {
            size: response.length,
            mimeType: x.response?.body?.contentType ?? x.response?.headers['content-type'] ?? '',
            ...(responseText
              ? { text: response.toString('utf8') }
              : { text: response.toString('base64'), encoding: 'base64' }),
          },
          redirectURL: '',
          headersSize: -1,
          bodySize: response.length,
        },
        cache: {},
        timings: {
          send: 0,
          wait: x.ttfbMs ?? x.durationMs,
          receive: Math.max(0, x.durationMs - (x.ttfbMs ?? x.durationMs)),
        },
        _tapedeck: {
          exchangeId: x.exchangeId,
          ...(x.response?.chunks ? { chunks: x.response.chunks } : {}),
          ...(x.request.body && !requestText ? { requestBase64: request.toString('base64') } : {}),
          ...(x.ttfbMs !== undefined ? { ttfbMs: x.ttfbMs } : {}),
          ...(x.error ? { error: x.error } : {}),
        },
      };
    });
  return { log: { version: '1.2', creator: { name: 'tapedeck', version: packageVersion() }, pages: [], entries } };
}

export function readHarFile(file: string): Har {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new TapedeckError('NOT_FOUND', `${file}: no such file`);
  }
  if (size > MAX_HAR_BYTES)
    throw new TapedeckError('HAR_TOO_LARGE', `${file} is ${size} bytes, more than the ${MAX_HAR_BYTES} allowed`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TapedeckError('BAD_HAR', `${file}: not JSON: ${whyNotJson(error)}`);
  }
  const parsed = HarSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'BAD_HAR',
      `${file}: field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'} (expected a HAR 1.2 archive)`,
    );
  }
  return parsed.data;
}

export interface HarImportResult {
  dir: string;
  exchanges: number;
  modelCalls: number;
}

/** Writes a recording of a HAR archive's exchanges, decoded by the recorder's session. */
export async function harToRecording(har: Har, options: { out: string; name?: string }): Promise<HarImportResult> {
  const entries = [...har.log.entries].sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));
  const recording = await writeImported(
    options.out,
    {
      name: options.name ?? 'har',
      agent: { command: [], cwd: '' },
      ...(entries[0] ? { createdAt: new Date(Date.parse(entries[0].startedDateTime)).toISOString() } : {}),
    },
    async (writer) => {
      writer.setManifest({ tags: ['imported:har'] });
      const start = entries[0] ? Date.parse(entries[0].startedDateTime) : Date.now();
      writer.append({
        type: 'run.started',
        stepId: 0,
        time: new Date(start).toISOString(),
        payload: { command: [], cwd: '' },
      });
      const session = new RecordSession(writer);
      const wire = (bytes: Buffer) =>
        isUtf8Text(bytes)
          ? { size: bytes.length, text: bytes.toString('utf8') }
          : { size: bytes.length, b64: bytes.toString('base64') };
      let end = start;
      for (const [i, entry] of entries.entries()) {
        const extra = entry._tapedeck ?? {};
        const id = extra.exchangeId ?? `har-${i + 1}`;
        const ts = Date.parse(entry.startedDateTime);
        const done = ts + Math.max(0, entry.time);
        end = Math.max(end, done);
        const requestBytes =
          extra.requestBase64 !== undefined
            ? Buffer.from(extra.requestBase64, 'base64')
            : Buffer.from(entry.request.postData?.text ?? '', 'utf8');
        const req = {
          id,
          pid: 0,
          ts,
          method: entry.request.method,
          url: entry.request.url,
          headers: headerMap(entry.request.headers),
          ...(entry.request.postData ? { body: wire(requestBytes) } : {}),
        };
        const wait = entry.timings?.wait === -1 ? undefined : entry.timings?.wait;
        const ttfb = ts + (extra.ttfbMs ?? wait ?? entry.time);
        const head = {
          ts: ttfb,
          status: entry.response.status,
          ...(entry.response.statusText ? { statusText: entry.response.statusText } : {}),
          headers: headerMap(entry.response.headers),
        };
        if (extra.chunks) {
          session.accept({ t: 'req', ...req });
          session.accept({ t: 'res', id, ...head, stream: true });
          for (const c of extra.chunks)
            session.accept({
              t: 'chunk',
              id,
              off: c.offsetMs,
              data: c.data,
              ...(c.encoding ? { encoding: c.encoding } : {}),
            });
          session.accept({ t: 'end', id, ts: done, ...(extra.error ? { error: extra.error } : {}) });
          continue;
        }
        const content = entry.response.content;
        const responseBytes =
          content.encoding === 'base64'
            ? Buffer.from(content.text ?? '', 'base64')
            : Buffer.from(content.text ?? '', 'utf8');
        const noResponse = entry.response.status === 0 && extra.error !== undefined;
        session.accept({
          t: 'xchg',
          ...req,
          ...(noResponse
            ? {}
            : {
                res: {
                  ...head,
                  ...(responseBytes.length > 0 || content.text !== undefined ? { body: wire(responseBytes) } : {}),
                },
              }),
          end: done,
          ...(extra.error ? { error: extra.error } : {}),
        });
      }
      await session.finish();
      writer.append({
        type: 'run.completed',
        stepId: 0,
        time: new Date(end).toISOString(),
        payload: {
          status: 'complete',
          exitCode: 0,
          ...(session.lastOutput !== undefined ? { finalOutput: session.lastOutput } : {}),
        },
      });
      await writer.close('complete');
    },
  );
  return {
    dir: recording.dir,
    exchanges: recording.events.filter((e) => e.type === 'http.exchange').length,
    modelCalls: recording.events.filter((e) => e.type === 'model.called').length,
  };
}
