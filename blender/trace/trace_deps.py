# Headless dependency trace, run by blender/trace/trace-dependencies.ts through blender/run.ts:
#   blender -b -Y --factory-startup -noaudio FILE --python trace_deps.py -- OUT.json [--addon-dir DIR]
# Runs the add-on's collector (host-addon/renderbridge/dependencies.py) on FILE and writes its
# CollectedDependencies document to OUT.json atomically (a temp file renamed into place).
# The add-on folder defaults to ../../host-addon from this script: the same in the source tree
# and in dist/ (scripts/copy-python.mjs copies both folders side by side).
import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the add-on folder


def parse_args(argv):
    args = argv[argv.index('--') + 1:] if '--' in argv else []
    here = os.path.dirname(os.path.abspath(__file__))
    addon_dir = os.path.normpath(os.path.join(here, '..', '..', 'host-addon'))
    out = None
    i = 0
    while i < len(args):
        if args[i] == '--addon-dir' and i + 1 < len(args):
            addon_dir = args[i + 1]
            i += 1
        elif out is None:
            out = args[i]
        i += 1
    if not out:
        raise SystemExit('usage: blender -b -Y FILE --python trace_deps.py -- OUT.json [--addon-dir DIR]')
    return out, addon_dir


def main():
    out, addon_dir = parse_args(sys.argv)
    sys.path.insert(0, addon_dir)
    from renderbridge import dependencies
    doc = dependencies.collect()
    tmp = '%s.%d.tmp' % (out, os.getpid())
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump(doc, f)
    os.replace(tmp, out)
    print('RB_TRACE_OK %d dependencies' % len(doc['dependencies']), flush=True)


main()
