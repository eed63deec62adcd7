// The add-on's half of a "Render on farm" for `npm run bench:resubmit`, run inside the artist
// namespace (the daemon listens on that namespace's 127.0.0.1 only): `node --import tsx
// daemon-driver.ts INPUT_JSON`. The same calls as host-addon/renderbridge/session.py: POST /packs
// with the dependencies the add-on collected in Blender, GET /packs/:id on the add-on's pack poll
// until ready, POST /submissions {packId, settings, mode}, then GET /submissions/:id until the
// daemon asked for the render. Prints one JSON line (DriverOutput); epoch ms throughout.
import type { PackState, Submission } from '../../shared/daemon/submission-schemas.js';

export interface DriverInput {
  port: number;
  token: string;
  blend: string;
  /** The add-on's CollectedDependencies `dependencies`. */
  dependencies: unknown[];
  /** Pause between two GET /packs/:id: the add-on's PACK_S (0.5 s). */
  packPollMs: number;
}

export interface DriverOutput {
  /** Just before POST /packs: the artist pressed the button (the collection in Blender takes milliseconds). */
  startedAt: number;
  /** The daemon's own time the pack turned ready (its updatedAt). */
  packReadyAt: number | null;
  /** Just before POST /submissions. */
  submittedAt: number | null;
  endedAt: number;
  submission: Submission | null;
  error: string | null;
}

const nowMs = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]!) as DriverInput;
  const origin = `http://127.0.0.1:${input.port}`;
  const call = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
    const res = await fetch(origin + p, {
      method,
      headers: {
        authorization: `Bearer ${input.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  const out: DriverOutput = {
    startedAt: nowMs(),
    packReadyAt: null,
    submittedAt: null,
    endedAt: 0,
    submission: null,
    error: null,
  };
  try {
    let pack = await call<PackState>('POST', '/packs', { path: input.blend, dependencies: input.dependencies });
    while (pack.state === 'packing') {
      await sleep(input.packPollMs);
      pack = await call<PackState>('GET', `/packs/${encodeURIComponent(pack.packId)}`);
    }
    if (pack.state !== 'ready') throw new Error(`pack failed: ${JSON.stringify(pack.error)}`);
    out.packReadyAt = Date.parse(pack.updatedAt);
    out.submittedAt = nowMs();
    let s = await call<Submission>('POST', '/submissions', {
      packId: pack.packId,
      settings: { frames: ['1'] },
      mode: 'render',
    });
    // The daemon runs the submission by itself; this only learns when it got to the render.
    while (!['rendering', 'done', 'failed'].includes(s.step)) {
      await sleep(100);
      s = await call<Submission>('GET', `/submissions/${encodeURIComponent(s.id)}`);
    }
    out.submission = s;
  } catch (err) {
    out.error = String(err);
  }
  out.endedAt = nowMs();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
