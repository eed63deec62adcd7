// `renderbridge admin set-webhook` and `admin remove-webhook`: one onRenderComplete endpoint per
// workspace, stored in the service's database (a running service picks changes up at its
// next delivery attempt).
import { InvalidArgumentError, type Command } from 'commander';
import type { WebhookStore } from '../service/webhooks/ports.js';
import { generateWebhookSecret, SIGNATURE_HEADER } from '../shared/webhooks/signing.js';
import { addStateOptions, openAdminState, type AdminStateOptions } from './admin-state.js';

/** Accepts absolute http(s) URLs only; returns the normalised URL. Bad ones are usage errors (exit 2). */
export function parseWebhookUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${v}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new InvalidArgumentError(`webhook URL must be http or https, got ${u.protocol}`);
  if (u.username || u.password)
    throw new InvalidArgumentError(
      'webhook URL must not carry a user name or password: the signature authenticates deliveries',
    );
  return u.toString();
}

/** Opens the webhook store of the service's existing database (see openAdminState). */
async function withWebhooks<T>(
  o: AdminStateOptions,
  workspace: string,
  fn: (store: WebhookStore, workspaceId: string) => Promise<T>,
): Promise<T> {
  const state = await openAdminState(o);
  try {
    const store = state.webhooks;
    const workspaceId = await store.workspaceId(workspace);
    if (!workspaceId)
      throw new Error(
        `no workspace named "${workspace}": create it with renderbridge admin create-key --workspace ${workspace}`,
      );
    return await fn(store, workspaceId);
  } finally {
    await state.close();
  }
}

export function registerWebhookCommands(admin: Command): void {
  const setWebhook = admin
    .command('set-webhook')
    .description(
      'Send onRenderComplete events of a workspace to a URL; prints the signing secret once, on the last line',
    )
    .requiredOption('--workspace <name>', 'workspace whose events are sent')
    .requiredOption('--url <url>', 'http(s) endpoint receiving signed JSON POSTs', parseWebhookUrl)
    .option('--keep-secret', 'when replacing a webhook, keep its signing secret (default: a new secret)');
  addStateOptions(setWebhook).action(
    async (o: AdminStateOptions & { workspace: string; url: string; keepSecret?: boolean }) => {
      const { secret, kept } = await withWebhooks(o, o.workspace, async (store, workspaceId) => {
        const old = o.keepSecret ? await store.getWebhook(workspaceId) : undefined;
        const secret = old?.secret ?? generateWebhookSecret();
        await store.setWebhook(workspaceId, { url: o.url, secret });
        return { secret, kept: old !== undefined };
      });
      console.error(
        `Webhook of workspace "${o.workspace}" set to ${new URL(o.url).origin}/… (event onRenderComplete).`,
      );
      if (kept) {
        console.error('The signing secret was kept.');
        return;
      }
      console.error(`Deliveries carry ${SIGNATURE_HEADER}: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>.`);
      console.error('Store the signing secret in a secrets manager now: it is shown only this once.');
      process.stdout.write(`${secret}\n`);
    },
  );

  const removeWebhook = admin
    .command('remove-webhook')
    .description('Stop sending events of a workspace; deliveries not yet made are dropped')
    .requiredOption('--workspace <name>', 'workspace whose webhook is removed');
  addStateOptions(removeWebhook).action(async (o: AdminStateOptions & { workspace: string }) => {
    const removed = await withWebhooks(o, o.workspace, (store, workspaceId) => store.removeWebhook(workspaceId));
    if (!removed) throw new Error(`workspace "${o.workspace}" has no webhook`);
    console.log(`Removed the webhook of workspace "${o.workspace}".`);
  });
}
