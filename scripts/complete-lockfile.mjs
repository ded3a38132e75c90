#!/usr/bin/env node
// `npm ci` refuses a lockfile that lacks an entry for any optional dependency, and the registry
// reachable here serves no metadata for some other platforms' native builds (@swc/core-darwin-*,
// -win32-*...), so `npm install` drops them. This adds each missing one as a platform-restricted
// optional entry: npm ci on this platform skips it, and on its own platform npm fetches it by version.
// Run after `npm install` changes the lockfile (a test fails while an entry is missing).
import { readFileSync, writeFileSync } from 'node:fs';

const PLATFORM = /-(darwin|linux|win32|freebsd|android|openharmony)-([a-z0-9]+)(?:-(gnu|musl|msvc|gnueabihf|eabi))?$/;
const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `${path ? `${path}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[hoisted]) continue;
    const match = PLATFORM.exec(name);
    if (!match) continue;
    const [, os, cpu, libc] = match;
    lock.packages[hoisted] = {
      version,
      optional: true,
      os: [os === 'win32' ? 'win32' : os],
      cpu: [cpu === 'arm' ? 'arm' : cpu === 'ia32' ? 'ia32' : cpu],
      ...(libc === 'gnu' || libc === 'musl' ? { libc: [libc === 'gnu' ? 'glibc' : 'musl'] } : {}),
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added === 0 ? 'package-lock.json: complete' : `package-lock.json: added ${added} platform entries`);
