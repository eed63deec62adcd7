// `renderbridge` as a script drives it without a service: submit's render overrides refused as usage
// errors naming the flag, the completion script in a real bash, and the examples that end every
// command's help. The `jobs` commands against a real service are in script-jobs.test.ts.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { doc, ScriptCli } from './script-cli-harness.js';

const h = new ScriptCli({ service: false });

describe('renderbridge submit overrides, completion and help (no service needed)', () => {
  it('refuses a bad override as a usage error naming the flag', async () => {
    for (const [flag, value] of [
      ['--samples', '0'],
      ['--resolution', '1920by1080'],
      ['--device', 'TPU'],
      ['--color-management', 'filmic'],
      ['--blender-version', 'latest'],
      ['--gpus', '99'],
    ] as const) {
      const r = await h.cli(['submit', 'nothing.blend', flag, value, '--json']);
      expect(r.code, `${flag} ${value}`).toBe(EXIT.USAGE);
      expect(doc(r.stdout).error?.message).toContain(flag);
    }
  }, 60_000);

  it(
    'prints bash, zsh and fish completion scripts that each shell accepts and that complete "renderbridge jo" ' +
      'to jobs',
    async () => {
      const r = await h.cli(['completion', 'bash']);
      expect(r.code).toBe(0);
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'rb-compl-')), 'renderbridge.bash');
      await writeFile(file, r.stdout);
      expect(spawnSync('bash', ['-n', file]).status).toBe(0);
      const script =
        `source ${JSON.stringify(file)}; complete -p renderbridge; COMP_WORDS=(renderbridge jo); COMP_CWORD=1; ` +
        `$(complete -p renderbridge | sed -E 's/.*-F ([^ ]+).*/\\1/'); echo "got:\${COMPREPLY[*]}"; ` +
        `COMP_WORDS=(renderbridge jobs wait x --ti); COMP_CWORD=4; _renderbridge_complete; echo ` +
        `"opt:\${COMPREPLY[*]}"`;
      const out = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      expect(out.stdout).toMatch(/complete -F \S+ renderbridge/);
      expect(out.stdout).toContain('got:jobs\n');
      expect(out.stdout).toContain('opt:--timeout\n');
      // zsh runs the same function through bashcompinit; its completion system filters by the
      // typed prefix itself, so the check is that the right list comes back at each position.
      const zsh = await h.cli(['completion', 'zsh']);
      expect(zsh.code).toBe(0);
      const zshFile = path.join(path.dirname(file), 'renderbridge.zsh');
      await writeFile(zshFile, zsh.stdout);
      expect(spawnSync('zsh', ['-n', zshFile]).status).toBe(0);
      const zshOut = spawnSync(
        'zsh',
        [
          '-fc',
          `autoload -U compinit && compinit -u -D; source ${JSON.stringify(zshFile)}; COMP_WORDS=(renderbridge ` +
            `jo); COMP_CWORD=1; _renderbridge_complete; print -r -- "top:\${COMPREPLY[*]}"; ` +
            `COMP_WORDS=(renderbridge jobs wait x --ti); COMP_CWORD=4; _renderbridge_complete; print -r -- ` +
            `"opt:\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      );
      expect(zshOut.stderr).toBe('');
      expect(zshOut.stdout).toMatch(/^top:.*\bjobs\b/m);
      expect(zshOut.stdout).toMatch(/^opt:.*--timeout/m);
      expect(zshOut.stdout).not.toMatch(/^opt:(.* )?service( |$)/m);
      const fish = await h.cli(['completion', 'fish']);
      expect(fish.code).toBe(0);
      const fishFile = path.join(path.dirname(file), 'renderbridge.fish');
      await writeFile(fishFile, fish.stdout);
      expect(spawnSync('fish', ['--no-execute', fishFile]).status).toBe(0);
      const fishOut = spawnSync(
        'fish',
        [
          '-c',
          `source ${JSON.stringify(fishFile)}; complete -C "renderbridge jo"; complete -C "renderbridge jobs ` +
            `wait x --ti"`,
        ],
        { encoding: 'utf8' },
      );
      expect(fishOut.stdout.split('\n').map((l) => l.split('\t')[0])).toEqual(
        expect.arrayContaining(['jobs', '--timeout']),
      );
      expect((await h.cli(['completion', 'tcsh'])).code).toBe(EXIT.USAGE);
    },
    60_000,
  );

  it("ends every command's help with examples", async () => {
    const paths = [
      [],
      ['submit'],
      ['jobs'],
      ['jobs', 'wait'],
      ['jobs', 'watch'],
      ['jobs', 'logs'],
      ['jobs', 'list'],
      ['admin', 'create-key'],
      ['daemon'],
      ['completion'],
    ];
    for (const p of paths) {
      const r = await h.cli([...p, '--help']);
      expect(r.stdout.trimEnd(), p.join(' ')).toMatch(/Examples:\n(\s+\$ .*renderbridge.*\n?)+$/);
    }
  }, 120_000);
});
