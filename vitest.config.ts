import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { unitTestFiles } from './test/unit-selection.js';

/** Whether host:port of a URL accepts a TCP connection within a second. */
function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || defaultPort), timeout: 1000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/** Suites that only make sense on the shared engines (several instances on one state). */
const SCALE_ONLY = ['test/service/scale/shared-state.test.ts'];

const pgUrl = process.env.RENDERBRIDGE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.RENDERBRIDGE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export default defineConfig(async () => {
  // `npm run test:unit`: the fast loop alone (no Blender, no servers, no browser), servers not even probed.
  if (process.env.RENDERBRIDGE_TEST_LOOP === 'unit') {
    return {
      test: {
        testTimeout: 30_000,
        maxWorkers: 2,
        projects: [
          {
            extends: true as const,
            test: {
              name: 'unit',
              include: unitTestFiles(fileURLToPath(new URL('.', import.meta.url))),
              // A third of these files start the service in-process: with a fresh module graph per file each
              // evaluated its ~300 modules again, and imports took 51 s of the loop's 95 s. These files keep
              // no state in modules between files (env and fake timers go back in their hooks), so each
              // worker evaluates the graph once: 28 s in all.
              isolate: false,
            },
          },
        ],
      },
    };
  }
  const missing = [
    ...((await reachable(pgUrl, 5432)) ? [] : [`PostgreSQL at ${new URL(pgUrl).host}`]),
    ...((await reachable(redisUrl, 6379)) ? [] : [`Redis at ${new URL(redisUrl).host}`]),
  ];
  // On CI the scale stack must run: its tests then fail loudly on the missing server.
  const scale = missing.length === 0 || process.env.CI === 'true';
  if (!scale) {
    console.warn(
      `Skipping the API suite on PostgreSQL + Redis + S3: ${missing.join(' and ')} unreachable (set ` +
        'RENDERBRIDGE_TEST_PG_URL / RENDERBRIDGE_TEST_REDIS_URL).',
    );
  }
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // Two cores on CI: spreading servers and Blender over more forks only adds contention.
      maxWorkers: 2,
      projects: [
        { extends: true as const, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: SCALE_ONLY } },
        ...(scale
          ? [
              {
                extends: true as const,
                test: {
                  // The same API suite, on the engines a studio scales out to (s3rver's account for S3).
                  name: 'api-on-scale-stack',
                  include: ['test/service/api/**/*.test.ts', ...SCALE_ONLY],
                  env: {
                    RENDERBRIDGE_TEST_STACK: 'scale',
                    AWS_ACCESS_KEY_ID: 'S3RVER',
                    AWS_SECRET_ACCESS_KEY: 'S3RVER',
                  },
                },
              },
            ]
          : []),
      ],
    },
  };
});
