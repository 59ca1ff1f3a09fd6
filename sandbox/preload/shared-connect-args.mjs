// @ts-check
// The argument forms of net.Socket#connect, read and rewritten in one place: where a call goes
// (targetOf), and the same call aimed elsewhere (aimed) — by the replay's network guard, the
// recording's proxy door and socket watch, and the tree's own Unix sockets in the OS sandbox.

/** The target of a net.Socket#connect call, from any of its argument forms. */
export function targetOf(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  // An agent's options carry `path: null` for a TCP connection (node:http's, and the
  // interceptors' passthrough): no path, not a Unix socket named "null".
  if (first !== null && typeof first === 'object')
    return { path: first.path ?? undefined, host: first.host, port: first.port };
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first };
  return { port: first, host: typeof args[1] === 'string' ? args[1] : undefined };
}

/** The same call, aimed at `to` (host and port), keeping its options and callback. */
export function aimed(args, to) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const callback = args.find((a) => typeof a === 'function');
  const options = first !== null && typeof first === 'object' ? { ...first } : {};
  options.host = to.host;
  options.port = Number(to.port);
  delete options.path;
  // A lookup function or family picked for the old host would not fit the new one.
  delete options.lookup;
  delete options.family;
  return callback ? [options, callback] : [options];
}
