// Child process run inside the farm namespace (ip netns exec): the delaying proxy in front of the
// service, a second one in front of an echo server (the RTT probe's target), and the echo server
// itself, also reachable without the proxy (the bare link's RTT). Answers commands over IPC:
// { id, cmd: 'counts' | 'requests' | 'reset' }  ->  { id, result }.
import net from 'node:net';
import { startDelayProxy } from './delay-proxy.js';

export interface ProxyChildInput {
  /** Farm end of the shaped link. */
  host: string;
  /** The service, on the farm's loopback. */
  servicePort: number;
  /** Proxy to the service, on host. */
  proxyPort: number;
  /** Proxy to the echo server, on host. */
  pingPort: number;
  /** Echo server without proxy, on host. */
  echoPort: number;
  delayMs: number;
}

export interface ProxyCommand {
  id: number;
  cmd: 'counts' | 'requests' | 'reset';
}

function echoServer(host: string, port: number): Promise<net.Server> {
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('error', () => s.destroy());
    s.pipe(s);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

process.once('message', (input: ProxyChildInput) => {
  void (async () => {
    await echoServer(input.host, input.echoPort);
    await echoServer('127.0.0.1', input.echoPort);
    const service = await startDelayProxy(
      { host: input.host, port: input.proxyPort },
      { host: '127.0.0.1', port: input.servicePort },
      { delayMs: input.delayMs, logRequests: true },
    );
    await startDelayProxy(
      { host: input.host, port: input.pingPort },
      { host: '127.0.0.1', port: input.echoPort },
      { delayMs: input.delayMs },
    );
    process.on('message', (m: ProxyCommand) => {
      const result =
        m.cmd === 'counts'
          ? service.counts()
          : m.cmd === 'requests'
            ? service.requests()
            : { reset: service.resetAll() };
      process.send!({ id: m.id, result });
    });
    process.once('SIGTERM', () => process.exit(0));
    process.once('disconnect', () => process.exit(0));
    process.send!({ ready: true });
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
