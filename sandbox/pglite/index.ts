// PGlite served over the Postgres wire protocol to many connections at once (the PGlite sandbox).
export { type PgliteServer, type PgliteServerOptions, servePglite } from './server.js';
