import net from 'node:net';

/**
 * Fails, naming the setting, when a process `npm start` is about to run could not listen where it is told to: a
 * gateway left by an earlier start that was killed outright (or any other program) would otherwise answer in its
 * place, and the banner would print its URLs.
 */
export async function requireFreePort(host: string, port: number, setting: string): Promise<void> {
  const server = net.createServer();
  const problem = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    server.once('error', resolve);
    server.listen({ host, port, exclusive: true }, () => resolve(undefined));
  });
  if (!problem) {
    await new Promise((resolve) => server.close(resolve));
    return;
  }
  if (problem.code === 'EADDRINUSE') {
    throw new Error(`${setting} ${port} is in use on ${host} (an earlier npm start still running, or another program): stop it, or set ${setting} to a free port`);
  }
  throw new Error(`Cannot listen on ${host} port ${port} (${setting}): ${problem.message}`);
}
