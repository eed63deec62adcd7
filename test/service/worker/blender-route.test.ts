// Where validation and planning run for a file (service/worker/runtime/blender-route.ts): here when
// this worker has the farm's best build for it, handed on with a requirement when another worker
// has it, refused in words when the farm has none; without a view of the farm (a remote worker),
// this worker's best build, else any worker whose builds open the file.
import { describe, expect, it } from 'vitest';
import type { BlenderBuild } from '../../../blender/builds.js';
import type { BlenderVersion } from '../../../blender/version.js';
import { newTasks } from '../../../service/domain/tasks.js';
import { taskLogSegment, TASK_ID_PATTERN } from '../../../service/domain/task-log-keys.js';
import { routeBlender } from '../../../service/worker/runtime/blender-route.js';

const v = (text: string): BlenderVersion => {
  const [major = 0, minor = 0, patch = 0] = text.split('.').map(Number);
  return { major, minor, patch, text };
};
const build = (text: string): BlenderBuild => ({
  binary: `/srv/blender/${text}`,
  kind: 'root',
  version: v(text),
  isDefault: false,
});
const file = (text: string) => ({ major: Number(text.split('.')[0]), minor: Number(text.split('.')[1]) });

describe('routeBlender', () => {
  const farm = async () => [v('3.4.1'), v('4.3.2'), v('5.2.2')];

  it("runs here when this worker has the farm's best build for the file", async () => {
    const r = await routeBlender({ builds: [build('3.4.1'), build('5.2.2')], farmBuilds: farm }, file('5.2'));
    expect(r).toMatchObject({ where: 'here', exact: true, build: { version: { text: '5.2.2' } } });
  });

  it(
    'hands on to the version the farm has when this worker lacks it, even if one of its own builds could open ' +
      'the file',
    async () => {
      // A 4.1 file: the farm's nearest newer build is 4.3; this worker's 5.2 would open it, but 4.3 changes less.
      expect(await routeBlender({ builds: [build('5.2.2')], farmBuilds: farm }, file('4.1'))).toEqual({
        where: 'elsewhere',
        requires: { blender: '4.3' },
      });
    },
  );

  it('refuses in words when no build of the farm opens the file', async () => {
    const r = await routeBlender(
      { builds: [build('3.4.1')], farmBuilds: async () => [v('3.4.1'), v('4.3.2')] },
      file('5.2'),
    );
    expect(r.where).toBe('nowhere');
    expect(r.where === 'nowhere' && r.message).toMatch(
      /saved with Blender 5\.2, and no Blender on the farm can open it \(the farm has Blender 3\.4\.1, Blender 4\.3\.2\)/,
    );
  });

  it('without a view of the farm: its own best build, else any worker whose builds open the file', async () => {
    expect(await routeBlender({ builds: [build('3.4.1'), build('4.3.2')] }, file('4.1'))).toMatchObject({
      where: 'here',
      build: { version: { text: '4.3.2' } },
    });
    expect(await routeBlender({ builds: [build('3.4.1')] }, file('5.2'))).toEqual({
      where: 'elsewhere',
      requires: { opens: '5.2' },
    });
  });

  it('a farm view that cannot be read counts as none', async () => {
    const r = await routeBlender(
      { builds: [build('3.4.1')], farmBuilds: () => Promise.reject(new Error('database down')) },
      file('3.4'),
    );
    expect(r).toMatchObject({ where: 'here' });
  });
});

describe('handed-on tasks', () => {
  it('get ids of their own, valid task and log names, once per requirement', () => {
    const a = newTasks.routed('validate', 'job-1', { blender: '5.2' });
    const b = newTasks.routed('render', 'job-1', { opens: '4.3' });
    expect(a).toMatchObject({
      id: 'validate:job-1:blender-5_2',
      kind: 'validate',
      payload: { requires: { blender: '5.2' } },
    });
    expect(b.id).toBe('render:job-1:opens-4_3');
    for (const t of [a, b]) {
      expect(t.id).toMatch(TASK_ID_PATTERN);
      expect(taskLogSegment(t.id, 'job-1')).toBeDefined();
    }
  });
});
