// Per-worker tokens through the CLI, against the real service: `renderbridge admin` creates, lists
// and revokes them (a revoked token is refused at its next call), and `renderbridge worker` runs
// under its token's name.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli-run.js';
import { createJob } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { WorkerTokenHarness } from './worker-token-harness.js';

const h = new WorkerTokenHarness();

describe('renderbridge admin worker tokens', () => {
  it('creates, lists and revokes a token; the revoked token is refused at its next call', async () => {
    const state = h.svc.config.databaseUrl
      ? ['--database-url', h.svc.config.databaseUrl]
      : ['--data-dir', h.svc.dataDir];
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const created = await runCli(['admin', 'create-worker-token', '--name', name, ...state], {});
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^rbw_/);
    expect(created.stderr).toContain(`for worker "${name}"`);

    const again = await runCli(['admin', 'create-worker-token', '--name', name, ...state], {});
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`an active worker token named "${name}" exists`);

    const id = (await createJob(h.call)).id;
    await h.lease(name, id);
    expect((await h.internal(token, 'GET', `/jobs/${id}`)).status).toBe(200);

    const listed = await runCli(['admin', 'list-worker-tokens', ...state], {});
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${token.slice(0, 8)}….*${name}.*last used 20.*active`));
    expect(listed.stdout).not.toContain(token.slice(8));

    const revoked = await runCli(['admin', 'revoke-worker-token', name, ...state], {});
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`of worker "${name}"`);
    const refused = await h.internal(token, 'GET', `/jobs/${id}`);
    expect(refused.status).toBe(401);
    expect(errorBody(refused)).toMatchObject({
      name: 'UNAUTHORIZED',
      message: expect.stringMatching(/revoked worker token/),
    });
    expect((await runCli(['admin', 'revoke-worker-token', name, ...state], {})).stderr).toContain(
      `no active worker token with id or name "${name}"`,
    );
    // Five CLI processes, each a few seconds to start on a loaded 2-core machine.
  }, 180_000);
});

describe('renderbridge worker with a per-worker token', () => {
  it("runs under its token's name, and refuses a --name that says otherwise", async () => {
    const { name, token } = await h.newWorker();
    const env = { RENDERBRIDGE_WORKER_TOKEN: token, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };
    const args = [
      'worker',
      '--service-url',
      h.svc.origin,
      '--s3-bucket',
      'b',
      '--s3-endpoint',
      'http://127.0.0.1:9',
      '--workers',
      '1',
    ];
    const r = await runCli([...args, '--name', 'someone-else'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `this worker's token belongs to worker "${name}", but --name (or RENDERBRIDGE_WORKER_NAME) says "someone-else"`,
    );
    expect(r.stderr).not.toContain(token);
  });
});
