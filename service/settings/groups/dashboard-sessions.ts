// Settings table entries: how long a dashboard sign-in lasts.
// service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { SERVICE, type Setting } from '../setting.js';

export const DASHBOARD_SESSION_SETTINGS: readonly Setting[] = [
  {
    key: 'sessionIdleMinutes',
    flag: '--session-idle-minutes <minutes>',
    kind: { type: 'number', above: 0 },
    group: 'Dashboard sessions',
    commands: SERVICE,
    defaultText: '30',
    help: 'a dashboard session without a request for this long ends',
  },
  {
    key: 'sessionMaxHours',
    flag: '--session-max-hours <hours>',
    kind: { type: 'number', above: 0 },
    group: 'Dashboard sessions',
    commands: SERVICE,
    defaultText: '12',
    help: 'a dashboard session ends this long after sign-in, however active',
  },
];
