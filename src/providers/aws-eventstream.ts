// The AWS event stream (application/vnd.amazon.eventstream: Bedrock's ConverseStream) decoded into
// stream events: each binary message (length prelude, headers, payload, CRC32s) checked and split
// by the maintained codec of the AWS SDKs (@smithy/core's EventStreamCodec), its `:event-type`
// header (or `:exception-type`) as the event's type and its JSON payload as the data.
import { createRequire } from 'node:module';
import type { EventStreamCodec, Message } from '@smithy/core/event-streams';
import type { StreamChunk } from '../recording/types.js';
import type { StreamEvent } from './framing.js';

const utf8 = new TextDecoder();
let codec: EventStreamCodec | undefined;
/** The codec, loaded at the first event stream read: @smithy/core is ~260 KB of CommonJS (~40 ms
 * of CPU) that every command reading a recording loaded, for Bedrock's streams alone. */
function codecOf(): EventStreamCodec {
  if (codec) return codec;
  const smithy = createRequire(import.meta.url)(
    '@smithy/core/event-streams',
  ) as typeof import('@smithy/core/event-streams');
  codec = new smithy.EventStreamCodec(
    (bytes) => utf8.decode(bytes),
    (text) => new TextEncoder().encode(text),
  );
  return codec;
}

/** A message's string header, if it has one. */
function header(message: Message, name: string): string | undefined {
  const value = message.headers[name];
  return value?.type === 'string' ? value.value : undefined;
}

/** The events of an AWS event stream's chunks; a damaged or cut message ends the stream there. */
export function parseAwsEventStream(chunks: readonly StreamChunk[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  let pending = Buffer.alloc(0);
  for (const chunk of chunks) {
    pending = Buffer.concat([pending, Buffer.from(chunk.data, chunk.encoding === 'base64' ? 'base64' : 'utf8')]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (length < 16) return events;
      if (pending.length < length) break;
      let message: Message;
      try {
        message = codecOf().decode(new Uint8Array(pending.subarray(0, length)));
      } catch {
        return events;
      }
      pending = pending.subarray(length);
      const type = header(message, ':event-type') ?? header(message, ':exception-type');
      events.push({
        ...(type === undefined ? {} : { event: type }),
        data: utf8.decode(message.body),
        offsetMs: chunk.offsetMs,
      });
    }
  }
  return events;
}
