// The native notification for a renderComplete event, as data: main/notifications.ts shows it and
// opens `openPath` on click. A completed job points at its outputs folder; a failed one says why.
// A canceled job gets none (someone chose to stop it).
import type { RenderComplete } from '../../shared/daemon/api.js';
import { failureText, jobName } from './tray-model.js';

export interface NotificationModel {
  title: string;
  body: string;
  /** Folder opened when the notification is clicked; null: clicking opens the job window. */
  openPath: string | null;
  urgency: 'normal' | 'critical';
}

export function notificationFor(e: RenderComplete): NotificationModel | null {
  const name = jobName(e.job);
  if (e.status === 'completed') {
    return {
      title: 'Render complete',
      body: e.outDir ? `${name} is done. Click to open ${e.outDir}.` : `${name} is done. Its outputs are on the service (not downloaded).`,
      openPath: e.outDir,
      urgency: 'normal',
    };
  }
  if (e.status === 'failed') return { title: 'Render failed', body: `${name} failed — ${failureText(e.job)}`, openPath: null, urgency: 'critical' };
  return null;
}
