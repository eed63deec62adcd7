// What one hostile API key sends for bench:attack (issue 25): each attack is a loop of requests,
// run side by side, counting answers by status. None of them may take the service from another
// tenant: the bench measures that tenant's GET /jobs/{id} meanwhile.
import { createHash } from 'node:crypto';

export interface AttackTally {
  name: string;
  requests: number;
  /** Answers by HTTP status (0: the request failed: refused connection, timeout). */
  statuses: Map<number, number>;
}

const hex = (i: number) => createHash('sha256').update(`attack-${i}`).digest('hex');
const GIB = 2 ** 30;

export interface AttackContext {
  baseUrl: string;
  /** The attacker's key (a workspace of its own). */
  key: string;
  /** A canceled job of the attacker that asked for frames: requeues of it reach the frame checks. */
  endedJobId: string;
  /** A job of the attacker that never ends: follows of it stay open. */
  openJobId: string;
  until: number;
}

async function answer(url: string, init: RequestInit, tally: AttackTally): Promise<void> {
  tally.requests++;
  let status = 0;
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    status = res.status;
    await res.arrayBuffer();
  } catch {
    // counted as 0
  }
  tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
}

function json(key: string, body: unknown): RequestInit {
  return {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

async function loop(ctx: AttackContext, tally: AttackTally, once: () => Promise<void>): Promise<void> {
  while (Date.now() < ctx.until) await once();
  void tally;
}

/** The attacks of the issue, each as `loops` concurrent loops; resolves with every tally once `until` passed. */
export async function attack(ctx: AttackContext, loops = 2): Promise<AttackTally[]> {
  const tallies: AttackTally[] = [];
  const add = (name: string): AttackTally => {
    const t = { name, requests: 0, statuses: new Map<number, number>() };
    tallies.push(t);
    return t;
  };
  const flood = add('blob query: 2,000 blobs of 64 GiB');
  const floodBody = json(ctx.key, {
    blobs: Array.from({ length: 2000 }, (_, i) => ({ sha256: hex(i), size: 64 * GIB })),
  });
  const pages = add('blob query: 3 blobs of 20 GiB (a full page of part URLs signed)');
  const pagesBody = json(ctx.key, { blobs: [0, 1, 2].map((i) => ({ sha256: hex(10_000 + i), size: 20 * GIB })) });
  const requeue = add('requeue: 100 x "0-1048574"');
  const requeueBody = json(ctx.key, { frames: Array.from({ length: 100 }, () => '0-1048574') });
  const forged = add('failed sign-ins (forged keys)');
  const streams = add('stream flood (events and follows, held open)');
  const held: AbortController[] = [];
  const openStream = async () => {
    streams.requests++;
    const ac = new AbortController();
    const path = streams.requests % 2 ? '/events' : `/jobs/${ctx.openJobId}/logs?follow=true`;
    try {
      const res = await fetch(`${ctx.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${ctx.key}`, accept: 'text/event-stream' },
        signal: ac.signal,
      });
      streams.statuses.set(res.status, (streams.statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200) held.push(ac);
      else await res.arrayBuffer();
    } catch {
      streams.statuses.set(0, (streams.statuses.get(0) ?? 0) + 1);
    }
  };
  const runs = Array.from({ length: loops }, () => [
    loop(ctx, flood, () => answer(`${ctx.baseUrl}/uploads/blobs/query`, floodBody, flood)),
    loop(ctx, pages, () => answer(`${ctx.baseUrl}/uploads/blobs/query`, pagesBody, pages)),
    loop(ctx, requeue, () => answer(`${ctx.baseUrl}/jobs/${ctx.endedJobId}/requeue`, requeueBody, requeue)),
    loop(ctx, forged, () =>
      answer(`${ctx.baseUrl}/jobs`, { headers: { authorization: `Bearer rb_live_${'A'.repeat(43)}` } }, forged),
    ),
    loop(ctx, streams, openStream),
  ]).flat();
  await Promise.all(runs);
  for (const ac of held) ac.abort();
  return tallies;
}
