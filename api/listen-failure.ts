/** Why the gateway could not listen, named by the settings that choose where it listens (HOST, PORT). */
export function listenFailure(error: unknown, host: string, port: number): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const where = `${host} port ${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `Cannot listen on ${where}: something else is listening there. Stop it, or set PORT to a free port`;
    case 'EACCES':
      return `Cannot listen on ${where}: not permitted (ports below 1024 need privileges). Set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${where}: this machine has no such address. Set HOST to one of its addresses, or 0.0.0.0`;
    default:
      return `Cannot listen on ${where}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
