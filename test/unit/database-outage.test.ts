import { describe, expect, inject, it } from 'vitest';
import { ConnectionException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { createServer, type AddressInfo } from 'node:net';
import { isDatabaseOutage } from '../../data/database-outage.ts';
import { openOrm } from '../../data/orm.ts';

const pgError = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('PostgreSQL away, as the APIs tell it (503, never 500)', () => {
  it('is a connection lost, refused or never made, and a server shutting down or starting', () => {
    expect(isDatabaseOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseOutage(pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isDatabaseOutage(new DriverException(pgError('terminating connection due to administrator command', '57P01')))).toBe(true);
    expect(isDatabaseOutage(pgError('the database system is starting up', '57P03'))).toBe(true);
    expect(isDatabaseOutage(pgError('could not receive data from client', '08006'))).toBe(true);
    expect(isDatabaseOutage(new ConnectionException(new Error('gone')))).toBe(true);
    // Found among the causes, as an ORM or a transaction wraps it.
    expect(isDatabaseOutage(new Error('commit failed', { cause: pgError('terminating connection due to administrator command', '57P01') }))).toBe(true);
  });

  it('is not a statement the database refused', () => {
    expect(isDatabaseOutage(new UniqueConstraintViolationException(pgError('duplicate key value', '23505')))).toBe(false);
    expect(isDatabaseOutage(pgError('canceling statement due to statement timeout', '57014'))).toBe(false);
    expect(isDatabaseOutage(new Error('Internal'))).toBe(false);
    expect(isDatabaseOutage('Connection terminated')).toBe(false);
    // A protocol violation is a bug (too many parameters), and a client hanging up mid-body is the request's own error.
    expect(isDatabaseOutage(pgError('bind message has 70000 parameter formats', '08P01'))).toBe(false);
    expect(isDatabaseOutage(Object.assign(pgError('aborted', 'ECONNRESET'), { statusCode: 400 }))).toBe(false);
  });
});

describe('a database that takes no connection', () => {
  it('fails a statement as the database away after the connect timeout, not after the system gives up on TCP', async () => {
    // A port that accepts connections and never answers PostgreSQL's start-up: a host dropping packets looks the same.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const orm = await openOrm({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/payments`, poolSize: 1, connectTimeoutMs: 300 });
    try {
      const failure = await orm.em.fork().execute('select 1').then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect(isDatabaseOutage(failure)).toBe(true);
    } finally {
      await orm.close(true);
      silent.close();
    }
  });

  it('leaves a wait for a free connection of a busy pool alone: only opening a connection is timed', async () => {
    const orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 1, connectTimeoutMs: 300 });
    try {
      await orm.em.fork().execute('select 1'); // the pool's one connection, open
      // It is busy for a second; the next statement waits for it, past the connect timeout.
      const busy = orm.em.fork().execute('select pg_sleep(1)');
      const waiting = orm.em.fork().execute<{ n: number }[]>('select 1 as n');
      await busy;
      expect(await waiting).toEqual([{ n: 1 }]);
    } finally {
      await orm.close(true);
    }
  });
});
