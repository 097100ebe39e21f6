export { startNatsServer, freePort, type NatsServerHandle, type NatsServerOptions } from './nats-server.ts';
