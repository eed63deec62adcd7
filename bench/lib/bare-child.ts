// Child process: the baseline. A bare fastify instance with no plugins, hooks, auth or
// database, answering the given routes with fixed JSON strings (the service's own bytes).
import Fastify from 'fastify';

interface Input {
  routes: { path: string; body: string }[];
}

process.once('message', (input: Input) => {
  void (async () => {
    const app = Fastify({ logger: false });
    for (const r of input.routes) {
      // A string is written as is: no serialisation cost, the floor for any JSON route.
      app.get(r.path, async (_req, reply) => reply.type('application/json; charset=utf-8').send(r.body));
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
