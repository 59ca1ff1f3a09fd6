// Which requests only read. A read is never a side effect, whether it ran or a replay held it back:
// GET/HEAD/OPTIONS, and JSON-RPC methods that list or read (MCP tools/list, resources/read, the
// handshake and notifications). The recorder's classifier (user rules may declare more reads) and
// the state diff both ask here.

import { jsonOrText } from './json.js';

/** Methods that read. */
export const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** JSON-RPC methods that only read: MCP's protocol methods other than tools/call. */
const RPC_READS =
  /^(tools\/list|resources\/.*|prompts\/.*|roots\/.*|completion\/.*|logging\/.*|sampling\/.*|elicitation\/.*|initialize|ping|notifications\/.*)$/;

/** The JSON-RPC method of a request body, if it is a JSON-RPC request (or a batch: its first method). */
export function rpcMethod(body: unknown): string | undefined {
  const first = Array.isArray(body) ? body[0] : body;
  if (first === null || typeof first !== 'object') return undefined;
  const m = first as { jsonrpc?: unknown; method?: unknown };
  return m.jsonrpc === '2.0' && typeof m.method === 'string' ? m.method : undefined;
}

/** True for a JSON-RPC method that only reads (`tools/list`); false for `tools/call` and unknown methods. */
export function isReadRpc(method: string): boolean {
  return RPC_READS.test(method);
}

/** Whether a request only reads, by its method and (for JSON-RPC) the method in its body. */
export function isReadRequest(method: string, body?: unknown): boolean {
  if (READ_METHODS.has(method.toUpperCase())) return true;
  const rpc = rpcMethod(typeof body === 'string' ? jsonOrText(body) : body);
  return rpc !== undefined && isReadRpc(rpc);
}
