# Makes every call the add-on's daemon client (host-addon/renderbridge/daemon_client.py) can make,
# with the bodies the add-on builds (submit_body.py, paths.DependencyList as the collector fills
# it, addons.to_bundle's shape), against the address in the state file given as argv[1]. Run with
# plain python3 (no bpy) by daemon-client-contract.test.ts, whose recording server checks each
# request against shared/daemon/openapi.json. Prints the names of the calls made, as JSON.
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import daemon_client  # noqa: E402
import paths  # noqa: E402
import submit_body  # noqa: E402

state_path, work, job_id = sys.argv[1], sys.argv[2], sys.argv[3]
client = daemon_client.DaemonClient(state_path=state_path)
blend = os.path.join(work, 'shot.blend')
done = []


def call(name, fn):
    fn()
    done.append(name)


# What dependencies.Collector.add() puts in the list: every pattern, a linked library's user.
deps = paths.DependencyList()
deps.add('//textures/wood.png', os.path.join(work, 'textures', 'wood.png'), 'image', blend, 'IMwood.png')
deps.add('//textures/wood.png', os.path.join(work, 'textures', 'wood.png'), 'image', blend, 'MAfloor')
deps.add('//tiles/a.<UDIM>.png', os.path.join(work, 'tiles', 'a.<UDIM>.png'), 'image', blend, 'IMtiles', 'udim',
         paths.expand_udim(os.path.join(work, 'tiles', 'a.<UDIM>.png')))
deps.add('//seq/f_0001.png', os.path.join(work, 'seq', 'f_0001.png'), 'image', blend, 'IMseq', 'sequence',
         paths.expand_sequence(os.path.join(work, 'seq', 'f_0001.png')))
deps.add('//cache', os.path.join(work, 'cache'), 'cache', os.path.join(work, 'lib.blend'), 'OBsmoke', 'directory')
deps.add('//lib.blend', os.path.join(work, 'lib.blend'), 'library', blend, 'LIlib.blend')
# addons.to_bundle() of the panel's add-on list.
addons = [{'module': 'my_addon', 'name': 'My add-on', 'path': os.path.join(work, 'addons', 'my_addon'),
           'addonType': 'user', 'selected': True},
          {'module': 'other', 'name': 'Other', 'path': os.path.join(work, 'addons', 'other.py'), 'addonType': 'user',
           'selected': False}]

call('health', client.health)
call('start pack', lambda: client.start_pack(blend, deps.items(), addons))
call('start pack (path only)', lambda: client.start_pack(blend))
call('start pack (no dependencies found)', lambda: client.start_pack(blend, [], []))
call('pack state', lambda: client.get_pack('9b3c1d2e-5f60-4a71-8b92-a3b4c5d6e7f8'))
full = submit_body.build_settings(frames=submit_body.parse_frame_ranges('1-10, 20 30-40x2'), camera='Camera',
                                  view_layer='ViewLayer', output_format='OPEN_EXR', video=True, notes='  first pass  ',
                                  priority=80, preview_frames=False)
out_dir = submit_body.output_folder(os.path.join(work, 'renders'), blend, now=0)
call('submit render', lambda: client.submit('pack-1', full, 'render', out_dir))
call('submit check', lambda: client.submit('pack-1', submit_body.build_settings(frames=['1']), 'check'))
call('submit (defaults)', lambda: client.submit('pack-1', submit_body.build_settings(video=False), 'render'))
call('submit estimate', lambda: client.submit('pack-1', full, 'estimate'))
call('render an estimated job', lambda: client.submit_job(job_id, full, 'render', out_dir))
call('cancel estimate', lambda: client.cancel_estimate(job_id))
call('submission', lambda: client.submission('sub-1'))
call('jobs', client.jobs)
call('job', lambda: client.job(job_id))
call('cancel', lambda: client.cancel(job_id))
call('approve previews', lambda: client.approve_previews(job_id))
call('download', lambda: client.download(job_id, out_dir))
call('download (default folder)', lambda: client.download(job_id))
print(json.dumps(done))
