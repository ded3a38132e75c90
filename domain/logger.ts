/**
 * The logging that activities and use cases need. The processes give them a pino logger (platform/logger.ts),
 * which satisfies this; keeping the type here lets the lower layers log without depending on the platform.
 */
export interface Logger {
  debug(details: object, message?: string): void;
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
  error(details: object, message?: string): void;
}
