// Child process: the baseline of `npm run bench:upload`. A bare node:http server with nothing
// but the work every upload must do: it streams a PUT body into a new file in `dir` (the plain
// way, pipeline into fs.createWriteStream) and fsyncs it before answering { size }. No auth, no
// signature check, no hashing, no database.
import { createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

interface Input {
  /** Folder the bodies go to (the same disk as the service's data dir). */
  dir: string;
}

process.once('message', (input: Input) => {
  let n = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'PUT') {
      res.writeHead(405).end();
      return;
    }
    const file = path.join(input.dir, `put-${++n}.bin`);
    void (async () => {
      const out = createWriteStream(file, { flags: 'wx' });
      await pipeline(req, out);
      // fsync through a second descriptor: it flushes the file's pages whichever descriptor wrote them.
      const fh = await open(file, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ size: out.bytesWritten, file }));
    })().catch(async (err: unknown) => {
      await rm(file, { force: true });
      res.writeHead(500).end(String(err));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    const stop = () => server.close(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('disconnect', stop);
    process.send!({ origin: `http://127.0.0.1:${port}` });
  });
});
