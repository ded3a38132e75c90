import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../platform/config.ts';
import { requireFreePort } from '../scripts/local-stack/free-ports.ts';
import { ensureLocalServers } from '../scripts/local-stack/local-runtime.ts';

/** A port held by a program that accepts connections and never says anything (not PostgreSQL, not a gateway). */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const held: Server[] = [];
afterEach(() => {
  for (const server of held.splice(0)) server.close();
});

describe('npm start, where its ports are taken', () => {
  it("refuses a gateway port in use before starting anything, naming the setting", async () => {
    const { server, port } = await holdPort();
    held.push(server);
    await expect(requireFreePort('127.0.0.1', port, 'PORT')).rejects.toThrow(
      `PORT ${port} is in use on 127.0.0.1 (an earlier npm start still running, or another program): stop it, or set PORT to a free port`,
    );
    server.close();
    await expect(requireFreePort('127.0.0.1', port, 'PORT')).resolves.toBeUndefined();
  });

  it("names a program on the embedded PostgreSQL's port that is not PostgreSQL, instead of waiting on it", async () => {
    const { server, port } = await holdPort();
    held.push(server);
    const config = loadConfig({ EMBEDDED_POSTGRES_PORT: String(port) });
    await expect(ensureLocalServers(config, { temporal: false })).rejects.toThrow(`Port ${port} (EMBEDDED_POSTGRES_PORT) is taken by something that is not this project's PostgreSQL`);
  });
});
