// Types of network-guard.mjs for the TypeScript side (the recorder's account of connections).
import type { HostPort } from '../protocol.js';

/** Whether two host names name the same host (every loopback name is one). */
export declare const sameHost: (a: string, b: string) => boolean;
/** Installs the guard on net.Socket#connect (see the module). */
export declare function installNetworkGuard(
  allowed: { hosts: HostPort[]; paths: string[]; unixOverLoopback?: boolean },
  onBlocked: (target: string) => void,
  routes?: Array<{ from: HostPort; to: HostPort }>,
  onRouted?: (from: string, to: string) => void,
  socketRoutes?: Array<{ from: string; to: HostPort }>,
): void;
/** A TLS connection to a routed WebSocket's address trusts `ca` (PEM) too. Returns undo(). */
export declare function trustRoutedTls(routes: Array<{ from: HostPort; websocket?: boolean }>, ca: string): () => void;
