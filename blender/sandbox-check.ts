// Whether the sandbox works on this machine: a sandboxed Blender must start (bubblewrap present,
// namespaces allowed), and from inside it the host must be out of reach (no network to the host's
// loopback, no environment of the worker). The worker asks once at start and refuses to run
// untrusted files without a working sandbox; doctor shows the answer.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBlender } from './run.js';

export type SandboxCheck = { ok: true } | { ok: false; reason: string };

/** Python run inside: tries the host's loopback (where a service, database or Redis listens) and the environment. */
const PROBE = [
  'import json, os, socket, sys',
  'out = {"env": sorted(os.environ)}',
  's = socket.socket(); s.settimeout(1)',
  'try:',
  '    s.connect(("127.0.0.1", int(sys.argv[-1]))); out["connected"] = True',
  'except OSError as e:',
  '    out["connected"] = False',
  'open(os.path.join(os.getcwd(), "sandbox.json"), "w").write(json.dumps(out))',
].join('\n');

/**
 * Runs `binary` in the sandbox once, with a listener of its own on the host's 127.0.0.1 that must
 * stay out of reach. Never throws.
 */
export async function checkSandbox(binary: string): Promise<SandboxCheck> {
  const dir = await mkdtemp(join(tmpdir(), 'rb-sandbox-check-'));
  const server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const hostPort = (server.address() as AddressInfo).port;
  try {
    const res = await runBlender({
      binary,
      cwd: dir,
      sandbox: true,
      args: ['--python-expr', PROBE],
      scriptArgs: [String(hostPort)],
      timeoutMs: 60_000,
    });
    const text = await readFile(join(dir, 'sandbox.json'), 'utf8').catch(() => undefined);
    if (res.exitCode !== 0 || text === undefined) {
      return {
        ok: false,
        reason:
          `a sandboxed Blender did not run (exit ${res.exitCode}): ` +
          `${res.lastLines.slice(-3).join(' | ') || 'no output'}`,
      };
    }
    const seen = JSON.parse(text) as { env: string[]; connected: boolean };
    if (seen.connected)
      return {
        ok: false,
        reason: `a sandboxed Blender reached 127.0.0.1:${hostPort} of the host: its network is not its own`,
      };
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
