// A tiny TCP ping, run inside the artist namespace: `node --import tsx rtt-probe.ts HOST PORT COUNT`
// connects to an echo server (through the delay proxy or not), then sends one byte COUNT times,
// each after the previous echo. Prints one JSON line: the connect-to-first-echo time and the
// min / median / max echo round trip, ms.
import net from 'node:net';

export interface RttResult {
  /** From connect() to the first echo: includes the handshake round trip the proxy models. */
  firstEchoMs: number;
  minMs: number;
  medianMs: number;
  maxMs: number;
  samples: number;
}

function main(): void {
  const [host, port, count] = process.argv.slice(2);
  const n = Number(count ?? 20);
  const times: number[] = [];
  const t0 = performance.now();
  let firstEchoMs = 0;
  let sentAt = 0;
  const socket = net.connect(Number(port), host!);
  socket.setNoDelay(true);
  const ping = (): void => {
    sentAt = performance.now();
    socket.write('x');
  };
  socket.once('connect', ping);
  socket.on('data', () => {
    const now = performance.now();
    if (firstEchoMs === 0) firstEchoMs = now - t0;
    else times.push(now - sentAt);
    if (times.length < n) return ping();
    socket.end();
    const s = [...times].sort((a, b) => a - b);
    const result: RttResult = {
      firstEchoMs,
      minMs: s[0]!,
      medianMs: s[Math.floor(s.length / 2)]!,
      maxMs: s.at(-1)!,
      samples: s.length,
    };
    console.log(JSON.stringify(result));
  });
  socket.once('error', (err) => {
    console.error(err);
    process.exit(1);
  });
}

main();
