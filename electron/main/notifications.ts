// Shows the native notification of a finished job (model from core/notifications.ts); a click
// opens the job's outputs folder, or the job window when it has none (a failed job).
import { Notification, shell } from 'electron';
import type { NotificationModel } from '../core/notifications.js';

export function showNotification(model: NotificationModel, openJobWindow: () => void): void {
  if (!Notification.isSupported()) return;
  const n = new Notification({ title: model.title, body: model.body, urgency: model.urgency, silent: false });
  n.on('click', () => {
    if (model.openPath) void shell.openPath(model.openPath);
    else openJobWindow();
  });
  n.show();
}
