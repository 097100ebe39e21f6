import { InvalidArgumentError } from 'commander';

/** Where `--metrics` serves `/metrics`. */
export interface MetricsAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Reads `--metrics <host:port>`: a host name or IPv4 address and a port (`127.0.0.1:9464`, `0.0.0.0:9464`), or an
 * IPv6 address in brackets (`[::1]:9464`). Port 0 picks a free one (printed at start-up).
 */
export function parseMetricsAddress(value: string): MetricsAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(value);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (host === undefined || !Number.isInteger(port) || port > 65_535) {
    throw new InvalidArgumentError('expected <host:port>, e.g. 127.0.0.1:9464 or [::1]:9464');
  }
  return { host, port };
}
