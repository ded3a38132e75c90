import { ConfigError } from './config.ts';

/** A setting optional in general but required by this process (e.g. DATABASE_URL for `npm run gateway`). */
export function requireSetting<T>(value: T | undefined, env: string): T {
  if (value === undefined) throw new ConfigError([`${env}: required by this process (npm start sets it when it runs the embedded servers)`]);
  return value;
}
