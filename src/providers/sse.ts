// Server-sent events: splits recorded stream chunks into events, each stamped with the offset
// of the chunk that completed it (so time-to-first-token can be measured from the recording).
import type { StreamChunk } from '../recording/types.js';
import type { StreamEvent } from './framing.js';

/** An SSE event: its `event:` field as the type. */
export type SseEvent = StreamEvent;

/** Parses SSE text delivered in chunks; events without data (comments, keep-alives) are skipped. */
export function parseSse(chunks: readonly StreamChunk[]): SseEvent[] {
  const events: SseEvent[] = [];
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  const dispatch = (offsetMs: number) => {
    if (data.length > 0) events.push({ ...(event === undefined ? {} : { event }), data: data.join('\n'), offsetMs });
    event = undefined;
    data = [];
  };
  const feedLine = (line: string, offsetMs: number) => {
    if (line === '') return dispatch(offsetMs);
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  };
  let last = 0;
  for (const chunk of chunks) {
    buffer += chunk.data;
    last = chunk.offsetMs;
    let nl = buffer.search(/\r\n|\r|\n/);
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      const skip = buffer.startsWith('\r\n', nl) ? 2 : 1;
      buffer = buffer.slice(nl + skip);
      feedLine(line, chunk.offsetMs);
      nl = buffer.search(/\r\n|\r|\n/);
    }
  }
  if (buffer !== '') feedLine(buffer, last);
  dispatch(last);
  return events;
}
