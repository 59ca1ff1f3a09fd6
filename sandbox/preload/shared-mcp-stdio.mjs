// @ts-check
// MCP over stdio: a server the agent starts and talks to through the child's stdin and stdout,
// newline-delimited JSON-RPC 2.0 (the MCP stdio transport: the MCP SDK's StdioClientTransport,
// MCPServerStdio of the OpenAI Agents SDK, LangChain's MCP adapters). Each request the agent
// writes and the answer it reads is handed to `emit` (`rpc` messages: the recorder makes them
// steps as it does MCP over HTTP's exchanges, and so does the replayer, whose agent talks to the
// server again). The pipes are watched, never read: what the agent writes and reads passes
// unchanged (the stream's own push is wrapped, so a reader that attaches late still gets every
// chunk). A child whose first line on stdin is not JSON-RPC is left alone from then on.
import { ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

/** A line longer than this is not watched further (the child is left alone). */
const MAX_LINE = 16 * 1024 * 1024;

/** @typedef {import('../protocol.js').StdioRpc} StdioRpc */

/**
 * @typedef {object} McpStdioContext
 * @property {() => any} current what a spawn belongs to (the recorder's run), undefined: not watched
 * @property {(owner: any) => boolean} ignore whether a spawn is not watched after all (a tool() call's)
 * @property {(owner: any, rpc: StdioRpc) => void} emit
 * @property {() => void} [begin] called as the agent writes a request, before it reaches the child
 * @property {() => number} nowMs
 */

/**
 * Watches the stdio of every child started while `current()` names an owner. Returns undo (the
 * spawn wrapper stops watching where another layer wrapped it since).
 * @param {McpStdioContext} ctx
 * @returns {() => void}
 */
export function watchMcpStdio(ctx) {
  const proto = /** @type {any} */ (ChildProcess.prototype);
  const realSpawn = proto.spawn;
  let active = true;
  const watchedSpawn = function spawnWatched(/** @type {unknown} */ options) {
    const result = realSpawn.call(this, options);
    if (active) {
      try {
        const owner = ctx.current();
        if (owner !== undefined && !ctx.ignore(owner) && this.stdin && this.stdout) watch(this, owner);
      } catch {
        // Watching is best effort: the agent's spawn is never failed by it.
      }
    }
    return result;
  };
  proto.spawn = watchedSpawn;

  /**
   * @param {import('node:child_process').ChildProcess} child
   * @param {any} owner
   */
  function watch(child, owner) {
    /** Requests the agent sent, by JSON-RPC id, until answered. */
    const pending = new Map();
    let rpc = true;
    /** Whether the agent has written a JSON-RPC line yet (until then the child's output is not read). */
    let speaks = false;
    const stop = () => {
      rpc = false;
      pending.clear();
    };
    /** `waits`: whether a chunk is worth reading now; a skipped one drops the partial line. */
    const lines = (/** @type {(line: string) => void} */ onLine, /** @type {() => boolean} */ waits) => {
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      return (/** @type {unknown} */ chunk, /** @type {BufferEncoding | undefined} */ encoding) => {
        if (!rpc || chunk === null || chunk === undefined) return;
        if (!waits()) {
          buffer = '';
          return;
        }
        buffer +=
          typeof chunk === 'string'
            ? Buffer.from(chunk, encoding && Buffer.isEncoding(encoding) ? encoding : 'utf8').toString('utf8')
            : chunk instanceof Uint8Array
              ? decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
              : '';
        // What is not JSON from its first character (a program's text or bytes) is no MCP traffic.
        if (!speaks && /^\s*[^\s{[]/.test(buffer)) {
          stop();
          return;
        }
        let at = buffer.indexOf('\n');
        while (at !== -1 && rpc) {
          const line = buffer.slice(0, at).replace(/\r$/, '');
          buffer = buffer.slice(at + 1);
          if (line.trim() !== '') onLine(line);
          at = buffer.indexOf('\n');
        }
        if (buffer.length > MAX_LINE) stop();
      };
    };
    const parse = (/** @type {string} */ line) => {
      try {
        const message = JSON.parse(line);
        const rpcObject = (/** @type {any} */ m) => m !== null && typeof m === 'object' && m.jsonrpc === '2.0';
        // One message, or a batch of them.
        if (Array.isArray(message)) return message.length > 0 && message.every(rpcObject) ? message : undefined;
        return rpcObject(message) ? message : undefined;
      } catch {
        return undefined;
      }
    };
    const key = (/** @type {unknown} */ id) => `${typeof id}:${String(id)}`;

    const written = lines(
      (line) => {
        const message = parse(line);
        if (message === undefined) {
          // Not JSON-RPC: this child is not an MCP server.
          if (!speaks) stop();
          return;
        }
        speaks = true;
        for (const one of Array.isArray(message) ? message : [message]) {
          if (typeof one?.method !== 'string' || one.id === undefined || one.id === null) continue;
          ctx.begin?.();
          pending.set(key(one.id), { request: { method: one.method, params: one.params }, ts: ctx.nowMs() });
        }
      },
      () => true,
    );
    // The child's output matters only while an answer is awaited.
    const read = lines(
      (line) => {
        const message = parse(line);
        if (message === undefined) return;
        for (const one of Array.isArray(message) ? message : [message]) {
          if (one?.method !== undefined || one?.id === undefined) continue;
          const open = pending.get(key(one.id));
          if (open === undefined) continue;
          pending.delete(key(one.id));
          answered(open, one.error === undefined ? { result: one.result } : { error: one.error });
        }
      },
      () => speaks && pending.size > 0,
    );
    /** @param {{ request: StdioRpc['request'], ts: number }} open @param {StdioRpc['response']} response */
    const answered = (open, response) =>
      ctx.emit(owner, {
        ts: open.ts,
        end: ctx.nowMs(),
        request: open.request,
        ...(response === undefined ? {} : { response }),
      });

    const stdin = /** @type {any} */ (child.stdin);
    const realWrite = stdin.write;
    stdin.write = function write(/** @type {unknown} */ chunk, /** @type {unknown} */ encoding, ...rest) {
      try {
        written(chunk, typeof encoding === 'string' ? /** @type {BufferEncoding} */ (encoding) : undefined);
      } catch {}
      return realWrite.call(this, chunk, encoding, ...rest);
    };
    // end(chunk) writes its last chunk without write().
    const realEnd = stdin.end;
    stdin.end = function end(/** @type {unknown} */ chunk, /** @type {unknown} */ encoding, ...rest) {
      try {
        if (chunk !== undefined && chunk !== null && typeof chunk !== 'function')
          written(chunk, typeof encoding === 'string' ? /** @type {BufferEncoding} */ (encoding) : undefined);
      } catch {}
      return realEnd.call(this, chunk, encoding, ...rest);
    };
    const stdout = /** @type {any} */ (child.stdout);
    const realPush = stdout.push;
    stdout.push = function push(/** @type {unknown} */ chunk, /** @type {unknown} */ encoding) {
      try {
        read(chunk, typeof encoding === 'string' ? /** @type {BufferEncoding} */ (encoding) : undefined);
      } catch {}
      return realPush.call(this, chunk, encoding);
    };
    // A server that ends (or is killed) with requests unanswered: they end without an answer.
    child.once('close', () => {
      for (const open of pending.values()) answered(open, undefined);
      stop();
    });
  }

  return function undo() {
    active = false;
    if (proto.spawn === watchedSpawn) proto.spawn = realSpawn;
  };
}
