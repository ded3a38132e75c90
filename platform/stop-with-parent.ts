/**
 * A process started with an IPC channel (by `npm start`'s supervisor, a test or a benchmark: `spawnEntry`) stops
 * itself when that channel closes, which happens when its parent is gone, even by SIGKILL: it then gets the SIGTERM a
 * supervisor would have sent, and stops as it does on one (a worker drains, a gateway finishes its requests). Left
 * running, it would hold its port and its task queue, and a next `npm start` would answer from it. A process started
 * without a channel (production, by systemd or Kubernetes) is untouched. Call it once the process's SIGTERM handling
 * is in place.
 */
export function stopWithParent(): void {
  const channel = process.channel;
  if (!channel) return;
  channel.unref(); // the channel alone must not keep the process alive
  const stop = () => process.kill(process.pid, 'SIGTERM');
  // Called once the process's SIGTERM handlers are in place: the parent may have gone while it started.
  if (!process.connected) stop();
  else process.once('disconnect', stop);
}
