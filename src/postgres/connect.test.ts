import { describe, expect, it } from 'vitest';
import { databaseAddresses, databaseSockets, loopbackPgHost } from './connect.js';

describe('a database URL: its address and its Unix sockets', () => {
  const DEFAULTS = (port: number) =>
    ['/var/run/postgresql', '/run/postgresql', '/tmp'].map((d) => `${d}/.s.PGSQL.${port}`);
  it.each([
    ['a loopback host: the usual socket folders at its port', 'postgres://u@127.0.0.1:5433/db', DEFAULTS(5433)],
    ['localhost, no port', 'postgresql://u@localhost/db', DEFAULTS(5432)],
    ['IPv6 loopback', 'postgres://u@[::1]:6000/db', DEFAULTS(6000)],
    ['no host (libpq: the default socket)', 'postgresql:///db', DEFAULTS(5432)],
    ['a socket folder named by ?host=', 'postgresql:///db?host=/srv/pg', ['/srv/pg/.s.PGSQL.5432']],
    ['?host= and ?port=', 'postgresql:///db?host=/srv/pg&port=5444', ['/srv/pg/.s.PGSQL.5444']],
    ['a socket folder as the host, percent-encoded', 'postgres://u@%2Fsrv%2Fpg/db', ['/srv/pg/.s.PGSQL.5432']],
    ['another machine: none', 'postgres://u@db.internal:5432/db', []],
    ['another machine by IP: none', 'postgres://u@10.0.0.5/db', []],
    ['not a database URL', 'https://api.example.com/v1', []],
    ['not a URL', 'postgres://[oops', []],
  ])('%s', (_what, url, sockets) => {
    expect(databaseSockets([url])).toEqual(sockets);
  });

  it('a URL naming a socket folder is a server on this machine, never a host named after the folder', () => {
    expect(databaseAddresses(['postgres://u@%2Fsrv%2Fpg:5444/db', 'postgresql:///db?host=/srv/pg'])).toEqual([
      { host: '127.0.0.1', port: 5444 },
      { host: '127.0.0.1', port: 5432 },
    ]);
  });

  it.each([
    ['PGHOST at the socket folder: loopback', { PGHOST: '/var/run/postgresql' }, { PGHOST: '127.0.0.1' }],
    ['with a trailing slash', { PGHOST: '/var/run/postgresql/' }, { PGHOST: '127.0.0.1' }],
    ['and its port', { PGHOST: '/tmp', PGPORT: '5433' }, { PGHOST: '127.0.0.1' }],
    ['another port: not that database', { PGHOST: '/var/run/postgresql', PGPORT: '6000' }, {}],
    ['another folder', { PGHOST: '/srv/elsewhere' }, {}],
    ['a host name', { PGHOST: 'db.internal' }, {}],
    ['no PGHOST: libpq would take the default folder', {}, { PGHOST: '127.0.0.1' }],
    ['no PGHOST, another port', { PGPORT: '6000' }, {}],
  ])('%s', (_what, env: Record<string, string>, out) => {
    expect(
      loopbackPgHost(env, databaseSockets(['postgres://u@127.0.0.1:5433/db', 'postgres://u@localhost/x'])),
    ).toEqual(out);
  });

  it('no PGHOST, and the database on another machine or at a folder of its own: left alone', () => {
    expect(loopbackPgHost({}, databaseSockets(['postgres://u@db.internal/x']))).toEqual({});
    expect(loopbackPgHost({}, databaseSockets(['postgresql:///x?host=/srv/pg']))).toEqual({});
    expect(loopbackPgHost({}, [])).toEqual({});
  });
});
