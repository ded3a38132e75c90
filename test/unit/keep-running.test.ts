import { describe, expect, it } from 'vitest';
import { keepRunning, type ServerExit } from '../../scripts/local-stack/keep-running.ts';

/** A server whose process the test ends (`die`), and whose stop it sees. */
function fakeServer(name: string) {
  let end!: (exit: ServerExit) => void;
  const server = {
    name,
    stopped: false,
    exited: new Promise<ServerExit>((resolve) => (end = resolve)),
    die: (exit: ServerExit = { code: null, signal: 'SIGKILL' }) => end(exit),
    async stop() {
      server.stopped = true;
      end({ code: 0, signal: null });
    },
  };
  return server;
}
type FakeServer = ReturnType<typeof fakeServer>;

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

function watch(first: FakeServer, restart?: () => Promise<FakeServer>) {
  const said: string[] = [];
  const givenUp: string[] = [];
  const restarted: string[] = [];
  const running = keepRunning(first, {
    name: 'Temporal dev server',
    restart,
    restarted: (server) => restarted.push(server.name),
    maxRestarts: 2,
    windowMs: 60_000,
    report: (line) => said.push(line),
    giveUp: (reason) => givenUp.push(reason),
  });
  return { running, said, givenUp, restarted };
}

describe('a server npm start keeps running', () => {
  it('is started again when its process ends on its own, and the stop ends the one running then', async () => {
    const first = fakeServer('first');
    const second = fakeServer('second');
    const { running, said, givenUp, restarted } = watch(first, async () => second);
    first.die();
    await settle();
    expect(said).toEqual(['Temporal dev server exited (signal SIGKILL); starting it again', 'Temporal dev server running again']);
    expect(restarted).toEqual(['second']);
    await running.stop();
    expect(second.stopped).toBe(true);
    expect(givenUp).toEqual([]);
  });

  it('is given up when it keeps ending, or cannot be started again', async () => {
    const servers = [fakeServer('a'), fakeServer('b'), fakeServer('c')];
    let next = 1;
    const { givenUp } = watch(servers[0]!, async () => servers[next++]!);
    for (const server of servers) {
      server.die({ code: 1, signal: null });
      await settle();
    }
    expect(givenUp).toEqual(['the Temporal dev server exited (code 1), 3 times within 60 s']);

    const failing = fakeServer('failing');
    const { givenUp: failed } = watch(failing, async () => {
      throw new Error('port 7233 taken');
    });
    failing.die();
    await settle();
    expect(failed).toEqual(['the Temporal dev server did not start again: port 7233 taken']);
  });

  it('without a way to start it again (PostgreSQL), is given up at once', async () => {
    const postgres = fakeServer('postgres');
    const { givenUp, said } = watch(postgres);
    postgres.die({ code: null, signal: 'SIGKILL' });
    await settle();
    expect(givenUp).toEqual(['the Temporal dev server exited (signal SIGKILL)']);
    expect(said).toEqual([]);
  });

  it('is not started again once stopped, and a start under way when the stop comes is stopped too', async () => {
    const first = fakeServer('first');
    const late = fakeServer('late');
    let release!: () => void;
    const { running, said, givenUp } = watch(first, () => new Promise<FakeServer>((resolve) => (release = () => resolve(late))));
    first.die();
    await settle();
    const stopping = running.stop();
    release();
    await stopping;
    expect(late.stopped).toBe(true);
    expect(said).toEqual(['Temporal dev server exited (signal SIGKILL); starting it again']);
    expect(givenUp).toEqual([]);

    const quiet = fakeServer('quiet');
    const watched = watch(quiet, async () => fakeServer('never'));
    await watched.running.stop();
    await settle();
    expect(watched.said).toEqual([]);
  });
});
