/** Log levels `--log-level` accepts (pino's). Kept apart from the logger so parsing the command line loads no pino. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
