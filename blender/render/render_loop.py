# The warm render loop, run inside Blender by the worker (blender/render/warm-process.ts):
#   blender -b -Y --factory-startup -noaudio FILE -S SCENE [-t N] --python render_loop.py \
#       -- --settings SETTINGS.json --output OUT/f_####
# Blender loads FILE once; this script applies the settings once (render_setup.apply_settings:
# remaps, scene, camera, device, outputs), prints `RB_READY {json}`, then reads one JSON command
# per line on stdin:
#   {"cmd": "render", "frame": N}   renders frame N exactly as `-s N -e N -a` would: the same
#                                   render pipeline call (RE_RenderAnim), so the same file names,
#                                   views, File Output node files and progress lines
#   {"cmd": "quit"}                 ends the loop (end of stdin does too)
# and answers each render with `RB_FRAME_BEGIN {"frame": N}` before it and `RB_FRAME_DONE
# {"frame": N, "seconds": S}` or `RB_FRAME_ERROR {"frame": N, "message": ...}` after it. Everything
# goes to stdout, whose order the worker relies on: Blender's own lines of a frame (Fra:, Saved:,
# Time:) always come between its BEGIN and its DONE. Persistent data (r.use_persistent_data, set by
# the settings when the job asks for it) keeps Cycles' scene between frames, as within one `-a` run.
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import render_setup  # noqa: E402  (sibling module: importing it applies nothing)
from render_setup_outputs import fail  # noqa: E402

import bpy  # noqa: E402


def script_arg(name):
    args = sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else []
    if name not in args or args.index(name) + 1 >= len(args):
        fail('usage: ... --python render_loop.py -- --settings SETTINGS.json --output OUT/f_####')
    return args[args.index(name) + 1]


def say(kind, payload):
    print(kind + ' ' + json.dumps(payload), flush=True)


def render(scene, frame):
    # What `-s N -e N` does: the scene's range becomes the one frame (start first: it pushes the end up).
    scene.frame_start = frame
    scene.frame_end = frame
    say('RB_FRAME_BEGIN', {'frame': frame})
    t0 = time.perf_counter()
    try:
        bpy.ops.render.render(animation=True, scene=scene.name)
    except RuntimeError as e:  # the operator reports a failed render (no camera, engine error) this way
        say('RB_FRAME_ERROR', {'frame': frame, 'message': str(e).strip()})
        return
    say('RB_FRAME_DONE', {'frame': frame, 'seconds': round(time.perf_counter() - t0, 4)})


def main():
    t0 = time.perf_counter()
    settings = render_setup.read_settings(sys.argv)
    output = script_arg('--output')
    scene = render_setup.apply_settings(settings)
    scene.render.filepath = output  # what `-o OUT/f_####` sets
    say('RB_READY', {'seconds': round(time.perf_counter() - t0, 4)})
    while True:
        line = sys.stdin.readline()
        if not line:
            break  # the worker went away: stdin closed
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except ValueError:
            print('RB_LOOP: unreadable command %r ignored' % line[:200], flush=True)
            continue
        if cmd.get('cmd') == 'quit':
            break
        if cmd.get('cmd') == 'render' and isinstance(cmd.get('frame'), int):
            render(scene, cmd['frame'])
        else:
            print('RB_LOOP: unknown command %r ignored' % line[:200], flush=True)


main()
