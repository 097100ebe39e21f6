import { pino, type Logger } from 'pino';
import { type DaemonLogger } from '@baton/runtime';

import type { LogLevel } from './log-levels.ts';

export { LOG_LEVELS, type LogLevel } from './log-levels.ts';

/**
 * A pino logger writing NDJSON synchronously to stderr (stdout carries the readiness line), so nothing is lost when the
 * process exits right after a line.
 */
export function createStderrLogger(level: LogLevel): Logger {
  return pino({ level, base: { svc: 'baton', pid: process.pid } }, pino.destination({ dest: 2, sync: true }));
}

/** Adapts pino to the daemon's `logger(level, msg, data)` callback. */
export function daemonLoggerOf(logger: Logger): DaemonLogger {
  return (level, msg, data) => {
    if (data === undefined) logger[level](msg);
    else logger[level](data, msg);
  };
}
