// The recorder's low-overhead HTTP observers, used when no world capture needs step barriers:
// node:http/https through Node's diagnostics channels (the request's write/end and the
// response's push are observed on the instance — nothing is re-implemented), and fetch through
// a thin wrapper that reads a clone of the response. One IPC write per exchange (streams: one
// per chunk); decoding (gzip, brotli) is left to the parent.
import dc from 'node:diagnostics_channel';
import http from 'node:http';

const STREAM_TYPES = /text\/event-stream|application\/x-ndjson|application\/jsonl/i;

function concat(chunks, size) {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function toBytes(chunk, encoding) {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8');
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

function headerObject(headers) {
  const out = {};
  if (!headers) return out;
  if (typeof headers.forEach === 'function' && !Array.isArray(headers)) {
    headers.forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  if (Array.isArray(headers)) {
    for (const [name, value] of headers) out[String(name).toLowerCase()] = String(value);
    return out;
  }
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/**
 * Observes node:http/https client requests and global fetch.
 * ctx: { send(msg), encodeBody(bytes), nowMs(), suppressed(), pid, track(promise) } — track() is
 * told about background stream readers so step boundaries can wait for them. Returns dispose().
 */
export function installFastCapture(ctx) {
  const { send, encodeBody, nowMs, suppressed, pid, track } = ctx;
  let seq = 0;

  // node:http / https (and everything built on ClientRequest: axios, got, node-fetch, …). Node 20
  // announces a request only once it is flushed, so the body is observed on write()/end().
  const kRec = Symbol('tapedeck.exchange');
  const proto = http.ClientRequest.prototype;
  const own = { write: Object.hasOwn(proto, 'write'), end: Object.hasOwn(proto, 'end') };
  const { write: realWrite, end: realEnd } = proto;
  const recordOf = (request) => {
    let rec = request[kRec];
    if (rec === undefined) {
      rec = suppressed() ? null : { id: `${pid}-h${++seq}`, ts: nowMs(), chunks: [], size: 0, done: false };
      request[kRec] = rec;
    }
    return rec;
  };
  const keep = (rec, chunk, encoding) => {
    const bytes = toBytes(chunk, encoding);
    if (rec !== null && bytes !== undefined && bytes.byteLength > 0) {
      rec.chunks.push(bytes);
      rec.size += bytes.byteLength;
    }
  };
  proto.write = function write(chunk, encoding, callback) {
    keep(recordOf(this), chunk, encoding);
    return realWrite.call(this, chunk, encoding, callback);
  };
  proto.end = function end(chunk, encoding, callback) {
    keep(recordOf(this), chunk, encoding);
    return realEnd.call(this, chunk, encoding, callback);
  };
  const onRequest = ({ request }) => {
    recordOf(request);
  };
  const onError = ({ request, error }) => {
    const rec = request[kRec];
    if (!rec || rec.done) return;
    rec.done = true;
    send({
      t: 'xchg',
      ...head(request, rec),
      end: nowMs(),
      error: { code: error?.code ?? error?.name ?? 'Error', message: String(error?.message) },
    });
  };
  const head = (request, rec) => {
    const host = request.getHeader('host') ?? request.host;
    return {
      id: rec.id,
      pid,
      ts: rec.ts,
      method: request.method,
      url: `${request.protocol}//${host}${request.path}`,
      headers: headerObject(request.getHeaders()),
      body: rec.size > 0 ? encodeBody(concat(rec.chunks, rec.size)) : undefined,
    };
  };
  const onResponse = ({ request, response }) => {
    const rec = request[kRec];
    if (!rec || rec.done) return;
    const resTs = nowMs();
    const res = {
      status: response.statusCode,
      statusText: response.statusMessage,
      headers: headerObject(response.headers),
    };
    const streamed = STREAM_TYPES.test(response.headers['content-type'] ?? '');
    if (streamed) {
      rec.done = true;
      send({ t: 'req', ...head(request, rec) });
      send({ t: 'res', id: rec.id, ts: resTs, ...res, stream: true });
    }
    const chunks = [];
    let size = 0;
    const decoder = streamed ? new TextDecoder() : undefined;
    const push = response.push;
    response.push = function (chunk, encoding) {
      if (chunk === null) {
        if (streamed) send({ t: 'end', id: rec.id, ts: nowMs() });
        else if (!rec.done) {
          rec.done = true;
          send({
            t: 'xchg',
            ...head(request, rec),
            res: { ts: resTs, ...res, body: encodeBody(concat(chunks, size)) },
            end: nowMs(),
          });
        }
      } else if (streamed) {
        send({ t: 'chunk', id: rec.id, off: nowMs() - resTs, data: decoder.decode(chunk, { stream: true }) });
      } else {
        chunks.push(chunk);
        size += chunk.byteLength;
      }
      return push.call(this, chunk, encoding);
    };
  };
  dc.subscribe('http.client.request.start', onRequest);
  dc.subscribe('http.client.request.error', onError);
  dc.subscribe('http.client.response.finish', onResponse);

  // fetch (undici): a wrapper; the body is read from a clone, never from the agent's response.
  const realFetch = globalThis.fetch;
  async function fetch(input, init) {
    if (suppressed()) return realFetch.call(this, input, init);
    const id = `${pid}-f${++seq}`;
    const ts = nowMs();
    const isRequest = typeof Request !== 'undefined' && input instanceof Request;
    const method = (init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
    const url = isRequest ? input.url : input instanceof URL ? input.href : String(input);
    const headers = { ...(isRequest ? headerObject(input.headers) : {}), ...headerObject(init?.headers) };
    let bodyBytes;
    const rawBody = init?.body;
    if (rawBody !== undefined && rawBody !== null) {
      if (typeof rawBody === 'string') bodyBytes = rawBody;
      else if (rawBody instanceof URLSearchParams) bodyBytes = rawBody.toString();
      else if (typeof Blob !== 'undefined' && rawBody instanceof Blob)
        bodyBytes = new Uint8Array(await rawBody.arrayBuffer());
      // FormData and stream bodies are sent as they are and not recorded (reading them would consume them).
      else bodyBytes = toBytes(rawBody);
    } else if (isRequest && input.body !== null) {
      bodyBytes = new Uint8Array(await input.clone().arrayBuffer());
    }
    const req = { id, pid, ts, method, url, headers, body: bodyBytes ? encodeBody(bodyBytes) : undefined };
    let response;
    try {
      response = await realFetch.call(this, input, init);
    } catch (error) {
      send({
        t: 'xchg',
        ...req,
        end: nowMs(),
        error: { code: error?.cause?.code ?? error?.name ?? 'Error', message: String(error?.message) },
      });
      throw error;
    }
    const resTs = nowMs();
    const res = { status: response.status, statusText: response.statusText, headers: headerObject(response.headers) };
    if (response.body === null) {
      send({ t: 'xchg', ...req, res: { ts: resTs, ...res }, end: resTs });
      return response;
    }
    const reader = response.clone().body.getReader();
    const streamed = STREAM_TYPES.test(res.headers['content-type'] ?? '');
    if (streamed) {
      send({ t: 'req', ...req });
      send({ t: 'res', id, ts: resTs, ...res, stream: true });
    }
    const reading = (async () => {
      const chunks = [];
      let size = 0;
      const decoder = streamed ? new TextDecoder() : undefined;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (streamed) send({ t: 'chunk', id, off: nowMs() - resTs, data: decoder.decode(value, { stream: true }) });
          else {
            chunks.push(value);
            size += value.byteLength;
          }
        }
        if (streamed) send({ t: 'end', id, ts: nowMs() });
        else
          send({ t: 'xchg', ...req, res: { ts: resTs, ...res, body: encodeBody(concat(chunks, size)) }, end: nowMs() });
      } catch (error) {
        const failure = { code: error?.name ?? 'Error', message: String(error?.message) };
        if (streamed) send({ t: 'end', id, ts: nowMs(), error: failure });
        else send({ t: 'xchg', ...req, res: { ts: resTs, ...res }, end: nowMs(), error: failure });
      }
    })();
    if (streamed) track(reading);
    return response;
  }
  if (typeof realFetch === 'function') {
    Object.defineProperties(fetch, Object.getOwnPropertyDescriptors(realFetch));
    globalThis.fetch = fetch;
  }

  return function dispose() {
    dc.unsubscribe('http.client.request.start', onRequest);
    dc.unsubscribe('http.client.request.error', onError);
    dc.unsubscribe('http.client.response.finish', onResponse);
    for (const [key, real] of [
      ['write', realWrite],
      ['end', realEnd],
    ]) {
      if (own[key]) proto[key] = real;
      else delete proto[key];
    }
    if (globalThis.fetch === fetch) globalThis.fetch = realFetch;
  };
}
