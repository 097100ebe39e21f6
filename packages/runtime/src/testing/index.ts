export { startNatsServer, freePort, type NatsServerHandle, type NatsServerOptions } from './nats-server.ts';
export * from './loopback-model/index.ts';
