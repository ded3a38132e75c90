import { describe, expect, it } from 'vitest';
import { lastWordsOf } from '../../scripts/local-stack/log-files.ts';

const line = (entry: object) => JSON.stringify(entry);

describe("what npm start repeats of a process that exited", () => {
  it('is its last error log line, with its error when that says more', () => {
    const log = [
      line({ level: 30, msg: 'starting' }),
      line({ level: 50, msg: 'an earlier failure' }),
      line({ level: 60, msg: 'Cannot reach Temporal', err: { message: 'connect ECONNREFUSED 127.0.0.1:7233' } }),
      line({ level: 30, msg: 'closing' }),
    ].join('\n');
    expect(lastWordsOf(log)).toBe('Cannot reach Temporal (connect ECONNREFUSED 127.0.0.1:7233)');
    expect(lastWordsOf(line({ level: 50, msg: 'listen EADDRINUSE here', err: { message: 'listen EADDRINUSE' } }))).toBe('listen EADDRINUSE here');
  });

  it("is a thrown error's first line when Node printed one, not the stack or Node's version", () => {
    const printed = [
      line({ level: 30, msg: 'starting' }),
      'file:///app/worker/main.ts:18',
      'TransportError: Failed to connect before the deadline',
      '    at NativeConnection.connect (/app/node_modules/@temporalio/worker/lib/connection.js:200:19)',
      '',
      'Node.js v24.21.0',
    ].join('\n');
    expect(lastWordsOf(printed)).toBe('TransportError: Failed to connect before the deadline');
  });

  it('is nothing when the log tells no failure', () => {
    expect(lastWordsOf('')).toBeUndefined();
    expect(lastWordsOf([line({ level: 30, msg: 'gateway listening' }), '{ not json', 'plain text'].join('\n'))).toBeUndefined();
  });
});
