// How a model's streamed answer is framed on the wire, and the one place each framing is decoded
// into events: server-sent events (sse.ts), NDJSON (one JSON value a line: Ollama), and the AWS
// event stream (binary messages with headers: Bedrock's ConverseStream, aws-eventstream.ts). A
// provider names its framing; decodeModelCall, the recorder and the replay read streams through here.
import { parseUntrusted } from '../recording/json.js';
import type { StreamChunk } from '../recording/types.js';
import { parseAwsEventStream } from './aws-eventstream.js';
import { parseSse } from './sse.js';

export type Framing = 'sse' | 'ndjson' | 'aws-eventstream';

/** One event of a streamed answer: its type when the framing names one, its data (JSON text), when it arrived. */
export interface StreamEvent {
  event?: string;
  data: string;
  /** Offset (ms from the response start) of the chunk that completed the event. */
  offsetMs: number;
}

/** Content types whose streams are text, recorded chunk by chunk (the capture preloads keep their copy: shared-wire.mjs). */
export const TEXT_STREAM_TYPES = /text\/event-stream|application\/x-ndjson|application\/jsonl/i;

/** The framing a response's content type announces, if it is a stream. */
export function framingOfType(contentType: string | undefined): Framing | undefined {
  if (contentType === undefined) return undefined;
  if (/text\/event-stream/i.test(contentType)) return 'sse';
  if (/application\/(?:x-ndjson|jsonl)/i.test(contentType)) return 'ndjson';
  if (/application\/vnd\.amazon\.eventstream/i.test(contentType)) return 'aws-eventstream';
  return undefined;
}

/** The bytes of a chunk as recorded (text, or base64 for binary streams). */
export function chunkBytes(chunk: StreamChunk): Buffer {
  return Buffer.from(chunk.data, chunk.encoding === 'base64' ? 'base64' : 'utf8');
}

/** A recorded stream's whole body: its chunks' bytes in order (base64 chunks decoded, never joined as text). */
export function streamBytes(chunks: readonly StreamChunk[]): Buffer {
  return Buffer.concat(chunks.map(chunkBytes));
}

/** NDJSON: one event a non-blank line, stamped with the offset of the chunk that ended it. */
function parseNdjson(chunks: readonly StreamChunk[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  let last = 0;
  const push = (line: string, offsetMs: number) => {
    if (line.trim() !== '') events.push({ data: line.trim(), offsetMs });
  };
  for (const chunk of chunks) {
    buffer += decoder.decode(chunkBytes(chunk), { stream: true });
    last = chunk.offsetMs;
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      push(buffer.slice(0, nl), chunk.offsetMs);
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf('\n');
    }
  }
  push(buffer + decoder.decode(), last);
  return events;
}

/** The events of a recorded stream in the given framing. Never throws: a damaged stream yields the events before the damage. */
export function streamEvents(framing: Framing, chunks: readonly StreamChunk[]): StreamEvent[] {
  switch (framing) {
    case 'sse':
      return parseSse(chunks);
    case 'ndjson':
      return parseNdjson(chunks);
    case 'aws-eventstream':
      return parseAwsEventStream(chunks);
  }
}

/** Parses an event's data as JSON; undefined for `[DONE]` and non-JSON data. */
export function eventJson(event: StreamEvent): Record<string, unknown> | undefined {
  if (event.data === '[DONE]') return undefined;
  try {
    const value: unknown = parseUntrusted(event.data);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
