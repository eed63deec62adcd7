# The warm render loop, run inside Blender by the worker (blender/render/warm-process.ts):
#   blender -b -Y --factory-startup -noaudio FILE -S SCENE [-t N] --python render_loop.py \
#       -- --settings SETTINGS.json --output OUT/f_####
# Blender loads FILE once; this script applies the settings once (render_setup.apply_settings:
# remaps, scene, camera, device, outputs), prints `RB_READY {json}`, then reads one JSON command
# per line on stdin:
#   {"cmd": "render", "start": A, "end": B, "step": S}
#                                   renders frames A, A+S, ..., B exactly as `-s A -e B -j S -a`
#                                   would: the same render pipeline call (RE_RenderAnim), so the
#                                   same file names, views, File Output node files and progress lines
#   {"cmd": "quit"}                 ends the loop (end of stdin does too)
# Around each frame it prints `RB_FRAME_BEGIN {"frame": N}` (render_pre) and `RB_FRAME_DONE
# {"frame": N, "seconds": S}` (render_write: its files are saved), and after each command
# `RB_RUN_END {"start": A}`, with `"error": message` when the render failed (no camera, an engine
# error): the frame begun last, or the first one, did not render.
# Everything goes to stdout, whose order the worker relies on: Blender's own lines of a frame
# (Fra:, Saved:, Time:) always come between its BEGIN and its DONE. Persistent data
# (r.use_persistent_data, set by the settings when the job asks for it) keeps Cycles' scene
# between frames and between commands, as within one `-a` run.
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


class Frames:
    """Frame events from Blender's own render handlers, valid for every frame of a command."""

    def __init__(self):
        self.current = None
        self.t0 = 0.0
        bpy.app.handlers.render_pre.append(self.pre)
        bpy.app.handlers.render_write.append(self.written)

    def pre(self, scene, *_):
        self.current = scene.frame_current
        self.t0 = time.perf_counter()
        say('RB_FRAME_BEGIN', {'frame': self.current})

    def written(self, scene, *_):
        say('RB_FRAME_DONE', {'frame': scene.frame_current, 'seconds': round(time.perf_counter() - self.t0, 4)})
        self.current = None


def render(scene, frames, start, end, step):
    # What `-s A -e B -j S` does: the scene's range becomes the command's (start first: it pushes the end up).
    scene.frame_start = start
    scene.frame_end = end
    scene.frame_step = step
    end_note = {'start': start}
    try:
        bpy.ops.render.render(animation=True, scene=scene.name)
    except RuntimeError as e:  # the operator reports a failed render (no camera, engine error) this way
        end_note['error'] = str(e).strip() or 'the render failed'
    frames.current = None
    say('RB_RUN_END', end_note)


def main():
    t0 = time.perf_counter()
    settings = render_setup.read_settings(sys.argv)
    output = script_arg('--output')
    scene = render_setup.apply_settings(settings)
    scene.render.filepath = output  # what `-o OUT/f_####` sets
    frames = Frames()
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
        if cmd.get('cmd') == 'render' and all(isinstance(cmd.get(k), int) for k in ('start', 'end', 'step')):
            render(scene, frames, cmd['start'], cmd['end'], max(1, cmd['step']))
        else:
            print('RB_LOOP: unknown command %r ignored' % line[:200], flush=True)


main()
