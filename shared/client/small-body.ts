// Reading the short answer of an HTTP exchange (an error body, the reply to a PUT) without
// letting a misbehaving server fill memory.
import type { IncomingMessage } from 'node:http';

/** Reads up to 64 KiB of a body as text and drains the rest. */
export async function readSmallBody(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    if (size < 65_536) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}
