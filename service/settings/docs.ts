// The tables of docs/reference/configuration.md and the settings block of deploy/systemd/renderbridge.env.example,
// written from the settings table (scripts/write-config-docs.ts) and compared with the files by
// test/deploy/config-docs.test.ts, so the documentation cannot drift from the code.
import { allowed } from './kinds.js';
import { envName, SETTING_GROUPS } from './setting.js';
import { SETTINGS } from './table.js';

export const README_BEGIN =
  '<!-- settings:begin (generated from service/settings/table.ts by `npm run config-docs`; do not edit) -->';
export const README_END = '<!-- settings:end -->';
export const ENV_BEGIN =
  '# --- every setting (generated from service/settings/table.ts by `npm run config-docs`; do not edit) ---';
export const ENV_END = '# --- end of every setting ---';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function settingsMarkdown(): string {
  const out: string[] = [];
  for (const group of SETTING_GROUPS) {
    const rows = SETTINGS.filter((s) => s.group === group);
    out.push(
      `**${group}**`,
      '',
      '| Key (config file) | Option | Environment | Default | Commands | Meaning |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const s of rows) {
      const flag = s.flag ? `\`${s.flag.split(' ')[0]}\`` : '(none: a secret)';
      const meaning =
        `${s.help[0]!.toUpperCase()}${s.help.slice(1)}. ` +
        `Takes ${allowed(s.kind)}${s.secret ? '; never printed' : ''}.`;
      out.push(
        `| \`${s.key}\` | ${flag} | \`${envName(s)}\` | ${cell(s.defaultText)} | ${s.commands.join(', ')} | ` +
          `${cell(meaning)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

export function settingsEnvExample(): string {
  const out: string[] = [];
  for (const s of SETTINGS) {
    out.push(`# ${s.key} (${s.commands.join(', ')}): ${s.help}. Default: ${s.defaultText}.`, `#${envName(s)}=`);
  }
  return out.join('\n');
}

/** `text` with the part between the markers replaced by `body`; throws when a marker is missing. */
export function replaceBetween(text: string, begin: string, end: string, body: string): string {
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`markers ${begin} ... ${end} not found`);
  return `${text.slice(0, a + begin.length)}\n${body}\n${text.slice(b)}`;
}
