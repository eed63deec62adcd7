// The tray icon: turns the tray model (core/tray-model.ts) into an Electron menu, icon and
// tooltip. No decisions are made here.
import { Menu, nativeImage, Tray, type MenuItemConstructorOptions } from 'electron';
import type { TrayAction, TrayIcon, TrayMenuItem } from '../core/tray-model.js';

export function menuTemplate(
  items: readonly TrayMenuItem[],
  onAction: (a: TrayAction) => void,
): MenuItemConstructorOptions[] {
  return items.map((item): MenuItemConstructorOptions => {
    if (item.kind === 'separator') return { type: 'separator' };
    if (item.kind === 'label') return { label: item.label, enabled: false };
    return { label: item.label, enabled: item.enabled, click: () => onAction(item.action) };
  });
}

export interface TrayView {
  update(items: readonly TrayMenuItem[], icon: { icon: TrayIcon; tooltip: string }): void;
  destroy(): void;
}

/** `icons`: a PNG path per icon state (electron/build-resources/tray-*.png). */
export function createTray(icons: Record<TrayIcon, string>, onAction: (a: TrayAction) => void): TrayView {
  const tray = new Tray(nativeImage.createFromPath(icons.stopped));
  let shown: TrayIcon = 'stopped';
  return {
    update(items, { icon, tooltip }) {
      if (icon !== shown) tray.setImage(nativeImage.createFromPath(icons[icon]));
      shown = icon;
      tray.setToolTip(tooltip);
      tray.setContextMenu(Menu.buildFromTemplate(menuTemplate(items, onAction)));
    },
    destroy: () => tray.destroy(),
  };
}
