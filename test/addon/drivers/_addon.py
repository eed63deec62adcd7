# Shared steps of the add-on drivers (run inside `blender -b` by test/addon/*.test.ts): install the
# built zip into the user scripts folder the test points BLENDER_USER_SCRIPTS at, enable it, and
# pump the add-on's timer tick by hand (background Blender runs no timers by itself).
import json
import sys
import time

import bpy


def args():
    return sys.argv[sys.argv.index('--') + 1:]


def install_and_enable(zip_path):
    bpy.ops.preferences.addon_install(filepath=zip_path)
    bpy.ops.preferences.addon_enable(module='renderbridge')


def session():
    from renderbridge import session as rb_session
    return rb_session.current()


def pump(what, probe, timeout):
    """Calls the add-on's tick (which drains the worker's results) until probe() is truthy."""
    s = session()
    deadline = time.monotonic() + timeout
    while True:
        s.tick()
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f'timed out after {timeout} s waiting for {what}')
        time.sleep(0.1)


def write(path, result):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(result, f, indent=1, default=str)
