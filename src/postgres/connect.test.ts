import { describe, expect, it } from 'vitest';
import { databaseAddresses, databaseSockets, loopbackPgEnv } from './connect.js';

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
    expect(loopbackPgEnv(env, databaseSockets(['postgres://u@127.0.0.1:5433/db', 'postgres://u@localhost/x']))).toEqual(
      out,
    );
  });

  it.each([
    ['?host= the folder, ?port=', 'postgresql:///app?host=/tmp&port=5433', 'postgresql://127.0.0.1/app?port=5433'],
    ['a percent-encoded folder as host', 'postgres://me@%2Fvar%2Frun%2Fpostgresql/app', 'postgres://me@127.0.0.1/app'],
    ['and a port', 'postgres://me@%2Ftmp:5433/app', 'postgres://me@127.0.0.1:5433/app'],
    ['key=value', 'host=/var/run/postgresql dbname=app user=me', 'host=127.0.0.1 dbname=app user=me'],
    ['key=value, quoted', "dbname=app host='/tmp' port=5433", 'dbname=app host=127.0.0.1 port=5433'],
  ])('a variable naming the socket: %s', (_what, value, loopback) => {
    const sockets = databaseSockets(['postgres://u@127.0.0.1:5433/db', 'postgres://u@localhost/x']);
    expect(loopbackPgEnv({ PGHOST: '127.0.0.1', APP_DB: value }, sockets)).toEqual({ APP_DB: loopback });
  });

  it.each([
    ['a TCP URL', 'postgres://me@127.0.0.1:5432/app'],
    ['another folder', 'postgresql:///app?host=/srv/pg'],
    ['another port', 'postgresql:///app?host=/tmp&port=6000'],
    ['another machine', 'postgres://me@db.internal/app'],
    ['key=value by TCP', 'host=localhost dbname=app'],
    ['a sentence', 'the host=/tmp folder'],
    ['not a URL', 'postgres://[oops'],
  ])('left alone: %s', (_what, value) => {
    const sockets = databaseSockets(['postgres://u@127.0.0.1:5433/db', 'postgres://u@localhost/x']);
    expect(loopbackPgEnv({ PGHOST: '127.0.0.1', APP_DB: value }, sockets)).toEqual({});
  });

  it('a URL with no host: the default folder, or PGHOST as libpq takes it', () => {
    const local = databaseSockets(['postgres://u@localhost/x']);
    expect(loopbackPgEnv({ A: 'postgresql:///app', B: 'postgresql:///app?user=me&sslmode=disable' }, local)).toEqual({
      PGHOST: '127.0.0.1',
      A: 'postgresql://127.0.0.1/app',
      B: 'postgresql://127.0.0.1/app?user=me&sslmode=disable',
    });
    // PGHOST by TCP: a URL with no host goes by TCP too, and is left alone.
    expect(loopbackPgEnv({ PGHOST: 'localhost', A: 'postgresql:///app' }, local)).toEqual({});
    const sockets = databaseSockets(['postgresql:///x?host=/srv/pg']);
    expect(loopbackPgEnv({ PGHOST: '/srv/pg', DB: 'postgresql:///app' }, sockets)).toEqual({
      PGHOST: '127.0.0.1',
      DB: 'postgresql://127.0.0.1/app',
    });
    expect(loopbackPgEnv({ DB: 'postgresql:///app' }, sockets)).toEqual({});
  });

  it('no PGHOST, and the database on another machine or at a folder of its own: left alone', () => {
    expect(loopbackPgEnv({}, databaseSockets(['postgres://u@db.internal/x']))).toEqual({});
    expect(loopbackPgEnv({}, databaseSockets(['postgresql:///x?host=/srv/pg']))).toEqual({});
    expect(loopbackPgEnv({}, [])).toEqual({});
  });
});
