// Issue 13, defect 6: `renderbridge admin` run from another folder silently created a new empty
// database and printed a key the running service refused. The real CLI (through tsx, so it is
// the current source) runs in child processes with a fresh HOME, from folders other than the
// service's, with none of the RENDERBRIDGE_* variables of the caller.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/e2e.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Absolute, so the CLI starts from any folder exactly as `npx renderbridge` would.
const CLI = ['--import', import.meta.resolve('tsx'), path.join(REPO_ROOT, 'cli/index.ts')];

let root: string;
let home: string;
let env: NodeJS.ProcessEnv;
/** Where the service keeps its data by default under the fresh HOME. */
let defaultDir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'rb-admin-dir-'));
  home = path.join(root, 'home');
  await mkdir(home);
  env = { ...process.env, HOME: home };
  for (const k of Object.keys(env)) if (k.startsWith('RENDERBRIDGE_') || k.startsWith('XDG_')) delete env[k];
  defaultDir = path.join(home, '.local', 'share', 'renderbridge', 'service');
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** A fresh folder to run a command in (the point: not the service's folder). */
async function folder(name: string): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Runs `renderbridge ...args` in `cwd`; never throws, returns the exit code and both streams. */
function cli(
  cwd: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { cwd, env: { ...env, ...extraEnv } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('renderbridge admin: which database', () => {
  it(
    'with no database anywhere: says which folder it looked in and what to do, exits 1, creates nothing',
    { timeout: 120_000 },
    async () => {
      const cwd = await folder('elsewhere');
      const commands = [
        ['admin', 'create-key', '--workspace', 'studio', '--label', 'x'],
        ['admin', 'list-keys'],
        ['admin', 'set-webhook', '--workspace', 'studio', '--url', 'https://example.com/hook'],
      ];
      for (const args of commands) {
        const r = await cli(cwd, args);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(`no renderbridge database in ${defaultDir}`);
        expect(r.stderr).toMatch(/Start the service first.*--data-dir.*--init/s);
      }
      // Nothing at the default, nothing in the current folder (where earlier versions looked).
      expect(existsSync(path.join(home, '.local'))).toBe(false);
      expect(await readdir(cwd)).toEqual([]);

      // A named folder that holds no database is refused the same way, and stays as it was.
      const named = await folder('typo');
      const r = await cli(cwd, ['admin', 'create-key', '--workspace', 'studio', '--label', 'x'], {
        RENDERBRIDGE_DATA_DIR: named,
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`no renderbridge database in ${named} (from RENDERBRIDGE_DATA_DIR)`);
      expect(await readdir(named)).toEqual([]);
    },
  );

  it('--init creates the database at the default and says so', { timeout: 60_000 }, async () => {
    const r = await cli(await folder('elsewhere'), [
      'admin',
      'create-key',
      '--init',
      '--workspace',
      'studio',
      '--label',
      'first',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^rb_live_\S{43}$/);
    expect(r.stderr).toContain(
      `using data folder ${defaultDir} (the default data folder); created a new database there (--init)`,
    );
    expect(existsSync(path.join(defaultDir, 'renderbridge.sqlite'))).toBe(true);
  });

  it(
    'a key made from another folder with the defaults is accepted by a service started with the defaults',
    { timeout: 120_000 },
    async () => {
      const serviceCwd = await folder('service-here');
      const child = spawn(process.execPath, [...CLI, 'service', '--port', '0', '--workers', '0'], {
        cwd: serviceCwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => void (err += d.toString()));
      child.stdout.resume();
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        // The key hint comes last in the banner, once the key store was read.
        await waitUntil(
          'the service banner',
          () => {
            if (child.exitCode !== null) throw new Error(`the service exited: ${err}`);
            return err.includes('No API key yet') || undefined;
          },
          { timeoutMs: 60_000 },
        );
        const baseUrl = /API base URL: (\S+)/.exec(err)![1]!;

        const adminCwd = await folder('admin-here');
        const r = await cli(adminCwd, ['admin', 'create-key', '--workspace', 'studio', '--label', 'from elsewhere']);
        expect(r.code).toBe(0);
        // stdout is the key alone: `| tail -n1` in the README relies on it.
        const key = r.stdout.trim().split('\n').at(-1)!;
        expect(r.stdout).toBe(`${key}\n`);
        const res = await fetch(`${baseUrl}/jobs`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        expect(r.stderr).toContain(`using data folder ${defaultDir} (the default data folder)`);
        expect(err).toContain(`data folder:  ${defaultDir}`);
        expect(await readdir(adminCwd)).toEqual([]);

        const listed = await cli(await folder('third'), ['admin', 'list-keys', '--json']);
        expect(JSON.parse(listed.stdout)).toMatchObject([{ label: 'from elsewhere', workspaceName: 'studio' }]);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    },
  );
});

const pgUp = await requirePostgres('the admin --database-url tests');

describe.skipIf(!pgUp)('renderbridge admin --database-url: an unmigrated database', () => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const d of drops) await d();
  });

  async function tables(url: string): Promise<string[]> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (
        await c.query<{ t: string }>("select tablename as t from pg_tables where schemaname = 'public' order by 1")
      ).rows.map((r) => r.t);
    } finally {
      await c.end();
    }
  }

  it('is refused without --init (nothing created), and set up with it', { timeout: 60_000 }, async () => {
    const db = await createTestDatabase({ empty: true });
    drops.push(db.drop);
    const cwd = await folder('elsewhere');
    const args = ['admin', 'create-key', '--database-url', db.url, '--workspace', 'studio', '--label', 'x'];
    const refused = await cli(cwd, args);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('has no renderbridge tables; nothing was created');
    expect(refused.stderr).toContain('--init');
    expect(await tables(db.url)).toEqual([]);

    const made = await cli(cwd, [...args, '--init']);
    expect(made.code).toBe(0);
    expect(made.stdout.trim()).toMatch(/^rb_live_\S{43}$/);
    expect(made.stderr).toContain('using the PostgreSQL database');
    expect(await tables(db.url)).toContain('api_keys');
    // Migrated now: a second command needs no --init.
    expect((await cli(cwd, ['admin', 'list-keys', '--database-url', db.url])).code).toBe(0);
  });
});
