// `renderbridge admin set-webhook` / `remove-webhook`, run through commander with the real actions.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerAdminCommands } from '../../../cli/admin.js';
import { openSqlite } from '../../../service/adapters/sqlite/db.js';
import { openWebhookStore } from '../../../service/adapters/sqlite/webhook-store.js';
import { createApiKey } from '../../../service/domain/api-keys.js';
import { openKeyStore } from '../../../service/stack.js';
import { signWebhook, verifyWebhookSignature } from '../../../shared/webhooks/signing.js';

let dataDir: string;
let workspaceId: string;

/** Runs `renderbridge admin ...args`; returns what it wrote to stdout and stderr. */
async function admin(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const program = new Command('renderbridge').exitOverride().configureOutput({ writeErr: () => undefined });
  registerAdminCommands(program);
  let stdout = '';
  let stderr = '';
  const out = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((s: string | Uint8Array) => ((stdout += String(s)), true));
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void (stdout += `${a.join(' ')}\n`));
  const err = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void (stderr += `${a.join(' ')}\n`));
  try {
    await program.parseAsync(['node', 'renderbridge', 'admin', ...args, '--data-dir', dataDir]);
  } finally {
    out.mockRestore();
    log.mockRestore();
    err.mockRestore();
  }
  return { stdout, stderr };
}

async function storedWebhook() {
  const sqlite = await openSqlite(path.join(dataDir, 'renderbridge.sqlite'));
  try {
    return await openWebhookStore(sqlite).getWebhook(workspaceId);
  } finally {
    await sqlite.close();
  }
}

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'rb-admin-webhook-'));
  const keys = await openKeyStore(dataDir);
  workspaceId = (await createApiKey(keys.keys, { workspace: 'studio', label: 'test' })).record.workspaceId;
  await keys.close();
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

describe('renderbridge admin set-webhook', () => {
  it('stores the URL and prints the new signing secret once, on stdout', async () => {
    const { stdout, stderr } = await admin(
      'set-webhook',
      '--workspace',
      'studio',
      '--url',
      'https://hooks.example.com/render?token=t',
    );
    const secret = stdout.trim();
    expect(secret).toMatch(/^whsec_\S{43}$/);
    expect(stderr).toContain('Renderbridge-Signature');
    expect(stderr).not.toContain(secret);
    const hook = await storedWebhook();
    expect(hook).toMatchObject({ url: 'https://hooks.example.com/render?token=t', secret });
    // The printed secret is the one deliveries are signed with.
    const body = '{"id":"evt"}';
    expect(verifyWebhookSignature(secret, signWebhook(hook!.secret, body), body).ok).toBe(true);
  });

  it('replacing rotates the secret, unless --keep-secret', async () => {
    const first = (
      await admin('set-webhook', '--workspace', 'studio', '--url', 'http://127.0.0.1:9000/a')
    ).stdout.trim();
    const kept = await admin(
      'set-webhook',
      '--workspace',
      'studio',
      '--url',
      'http://127.0.0.1:9000/b',
      '--keep-secret',
    );
    expect(kept.stdout).toBe('');
    expect(await storedWebhook()).toMatchObject({ url: 'http://127.0.0.1:9000/b', secret: first });
    const second = (
      await admin('set-webhook', '--workspace', 'studio', '--url', 'http://127.0.0.1:9000/c')
    ).stdout.trim();
    expect(second).not.toBe(first);
    expect((await storedWebhook())?.secret).toBe(second);
  });

  it('accepts only absolute http(s) URLs, and only known workspaces', async () => {
    for (const bad of ['ftp://example.com/x', 'not a url', '/relative', 'https://user:pw@example.com/']) {
      await expect(admin('set-webhook', '--workspace', 'studio', '--url', bad)).rejects.toThrow(
        /must be http or https|not a URL|must not carry/,
      );
    }
    await expect(admin('set-webhook', '--workspace', 'nope', '--url', 'https://example.com/')).rejects.toThrow(
      /no workspace named "nope"/,
    );
    expect(await storedWebhook()).toBeUndefined();
  });

  it('remove-webhook removes it, and says so when there is none', async () => {
    await admin('set-webhook', '--workspace', 'studio', '--url', 'https://example.com/hook');
    const { stdout } = await admin('remove-webhook', '--workspace', 'studio');
    expect(stdout).toContain('Removed the webhook of workspace "studio"');
    expect(await storedWebhook()).toBeUndefined();
    await expect(admin('remove-webhook', '--workspace', 'studio')).rejects.toThrow(/has no webhook/);
  });
});
