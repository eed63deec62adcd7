// The "Examples:" block at the end of every command's --help. Kept in one table rather than in
// each command's file so a new command without examples fails the test that reads every help.
import type { Command } from 'commander';

const EXAMPLES: Record<string, readonly string[]> = {
  renderbridge: [
    'renderbridge submit shot.blend --frames 1-250',
    'renderbridge jobs list --json --fields jobs',
    'renderbridge completion bash > ~/.local/share/bash-completion/completions/renderbridge',
  ],
  service: ['renderbridge service', 'renderbridge service --port 8420 --workers 2'],
  worker: ['renderbridge worker', 'renderbridge worker --data-dir /srv/renderbridge'],
  admin: ['renderbridge admin create-key --workspace studio', 'renderbridge admin list-keys'],
  'admin create-key': [
    'renderbridge admin create-key --workspace studio',
    'export RENDERBRIDGE_API_KEY=$(renderbridge admin create-key --workspace studio | tail -n1)',
  ],
  'admin list-keys': ['renderbridge admin list-keys', 'renderbridge admin list-keys --json'],
  'admin revoke-key': ['renderbridge admin revoke-key 3f2a…'],
  'admin set-webhook': ['renderbridge admin set-webhook --workspace studio --url https://ci.example/hooks/render'],
  'admin remove-webhook': ['renderbridge admin remove-webhook --workspace studio'],
  'admin create-worker-token': [
    'renderbridge admin create-worker-token --name gpu-1',
    'renderbridge admin create-worker-token --name gpu-1 | tail -n1 | sed "s/^/RENDERBRIDGE_WORKER_TOKEN=/" ' +
      '> worker.env',
  ],
  'admin list-worker-tokens': ['renderbridge admin list-worker-tokens', 'renderbridge admin list-worker-tokens --json'],
  'admin revoke-worker-token': ['renderbridge admin revoke-worker-token gpu-1'],
  'admin share-weight': [
    'renderbridge admin share-weight 0b6c3f2e-5d1a-4c1e-9a63-2f0e4e8b7a10 2',
    'renderbridge admin share-weight --redis-url redis://queue:6379 0b6c3f2e-5d1a-4c1e-9a63-2f0e4e8b7a10 0.5',
  ],
  'admin share-weights': ['renderbridge admin share-weights', 'renderbridge admin share-weights --json'],
  submit: [
    'renderbridge submit shot.blend --frames 1-250 --samples 128 --resolution 1920x1080',
    'renderbridge submit project/ --scene Main --device OPTIX --gpus 2 --no-denoise',
    'renderbridge submit shot.blend --frames 1-250 --estimate        # show time, cost and memory, then ask',
    'id=$(renderbridge submit shot.blend --no-wait --json --fields submission.jobId)',
    'renderbridge submit shot.zip --service http://farm:8420 --quiet',
  ],
  jobs: ['renderbridge jobs list', 'renderbridge jobs wait <id> --timeout 3600 && renderbridge jobs download <id>'],
  'jobs list': [
    'renderbridge jobs list --status rendering',
    'renderbridge jobs list --json --fields jobs.id,jobs.status',
  ],
  'jobs show': [
    'renderbridge jobs show <id>',
    'renderbridge jobs show <id> --json --fields job.status,progress.percent',
  ],
  'jobs cancel': ['renderbridge jobs cancel <id>'],
  estimate: [
    'renderbridge estimate <id> --frames 1-250 --samples 128',
    'renderbridge estimate <id> --json --fields estimate.figures.wallSeconds',
    'renderbridge estimate <id> --cancel',
  ],
  'jobs requeue': [
    'renderbridge jobs requeue <id>',
    'renderbridge jobs requeue <id> --frames 1-10,15 --json --fields job.id',
  ],
  'jobs download': ['renderbridge jobs download <id> --out ./frames', 'renderbridge jobs download <id> --zips --quiet'],
  'jobs wait': [
    'renderbridge jobs wait <id>            # 0 completed, 3/4 failed, 5 canceled',
    'renderbridge jobs wait <id> --timeout 600 || echo "exit $? (9 = still running)"',
  ],
  'jobs watch': ['renderbridge jobs watch <id>', 'renderbridge jobs watch <id> >> render.log 2>&1'],
  'jobs logs': [
    'renderbridge jobs logs <id>',
    'renderbridge jobs logs <id> --follow',
    'renderbridge jobs logs <id> --task chunk:<id>:0 --attempt 2',
    'renderbridge jobs logs <id> --json',
  ],
  daemon: [
    'renderbridge daemon',
    'renderbridge daemon --hot-folder ~/render-inbox',
    'renderbridge daemon --print-state --json',
  ],
  config: ['renderbridge config list', 'renderbridge config set serviceUrl http://farm:8420'],
  'config path': ['renderbridge config path'],
  'config list': ['renderbridge config list', 'renderbridge --profile farm config list'],
  'config get': ['renderbridge config get serviceUrl'],
  'config set': [
    'renderbridge config set serviceUrl http://farm:8420',
    'renderbridge --profile farm config set serviceUrl https://farm.example',
  ],
  login: [
    'renderbridge login --service http://farm:8420',
    'printf %s "$KEY" | renderbridge --profile farm login --service http://farm:8420',
  ],
  logout: ['renderbridge logout', 'renderbridge --profile farm logout'],
  status: ['renderbridge status', 'renderbridge status --json'],
  completion: [
    'renderbridge completion bash > ~/.local/share/bash-completion/completions/renderbridge',
    'renderbridge completion zsh > "${fpath[1]}/_renderbridge"',
    'renderbridge completion fish > ~/.config/fish/completions/renderbridge.fish',
  ],
};

/** The command's path without the program name: `jobs wait`; `renderbridge` for the program. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.length > 0 ? names.join(' ') : cmd.name();
}

/** Appends the examples to the help of `program` and of every command under it. */
export function addExamples(program: Command): void {
  const visit = (cmd: Command): void => {
    const examples = EXAMPLES[commandPath(cmd)];
    if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
    cmd.commands.forEach(visit);
  };
  visit(program);
}
