// Child process: the baselines. A bare fastify instance with no plugins, hooks, auth or
// database. Each route is answered twice: under its own path, returning the JSON value (as any
// fastify handler does: fastify serialises it per request), and under a prefix + path, sending
// the service's bytes as a fixed string (no serialisation at all: the floor of any JSON route).
import Fastify from 'fastify';

interface Input {
  routes: { path: string; body: string }[];
  /** Path prefix of the fixed-bytes routes. */
  bytesPrefix: string;
}

process.once('message', (input: Input) => {
  void (async () => {
    const app = Fastify({ logger: false });
    for (const r of input.routes) {
      const value: unknown = JSON.parse(r.body);
      app.get(r.path, async () => value);
      app.get(`${input.bytesPrefix}${r.path}`, async (_req, reply) =>
        reply.type('application/json; charset=utf-8').send(r.body),
      );
    }
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    const stop = () => void app.close().finally(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('disconnect', stop);
    process.send!({ origin: `http://127.0.0.1:${port}` });
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
