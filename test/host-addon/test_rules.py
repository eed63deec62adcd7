# The add-on's structural rules, read from its source with Python's ast (no bpy, no Blender):
#   - __init__.py only registers: bl_info, imports, the class list, register() and unregister();
#   - what runs on the worker thread touches no bpy: the modules it calls import no bpy, and every
#     task handed to the worker (the `lambda _post: ...` of session.py) uses none of bpy, self,
#     context or the preferences (only the client made on the main thread, and plain values);
#   - every HTTP connection the add-on opens has a timeout, and only daemon_client.py opens any.
# Run with plain python3 by paths.test.ts.
import ast
import os
import sys
import unittest

ADDON = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge')
THREAD_MODULES = ('daemon_client.py', 'farm_status.py', 'background.py')
NETWORK_MODULES = ('http.client', 'urllib.request', 'socket', 'requests', 'ssl')


def parse(name):
    with open(os.path.join(ADDON, name), encoding='utf-8') as f:
        return ast.parse(f.read(), name)


def imports(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


def sources():
    return sorted(f for f in os.listdir(ADDON) if f.endswith('.py'))


class InitOnlyRegisters(unittest.TestCase):
    def test_init_holds_registration_only(self):
        tree = parse('__init__.py')
        kinds = []
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                kinds.append('import')
            elif isinstance(node, ast.Assign):
                kinds.append(node.targets[0].id)
            elif isinstance(node, ast.FunctionDef):
                kinds.append(node.name + '()')
            elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                kinds.append(type(node).__name__)
        self.assertEqual([k for k in kinds if k != 'import'], ['bl_info', '_CLASSES', 'register()', 'unregister()'])


class WorkerThread(unittest.TestCase):
    def test_modules_the_thread_runs_import_no_bpy(self):
        for name in THREAD_MODULES:
            found = {n for n in imports(parse(name)) if n == 'bpy' or n.startswith('bpy.')}
            self.assertEqual(found, set(), f'{name} imports {found}')

    def test_tasks_handed_to_the_worker_use_no_bpy(self):
        tree = parse('session.py')
        tasks = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.args.args
                 and n.args.args[0].arg in ('_post', '_p', 'post')]
        self.assertGreaterEqual(len(tasks), 8)  # health, test, jobs, submission, analysis, pack x2, submit, job actions
        for task in tasks:
            used = {n.id for n in ast.walk(task) if isinstance(n, ast.Name)}
            bad = used & {'bpy', 'self', 'context', 'preferences', 'redraw'}
            self.assertEqual(bad, set(), f'line {task.lineno}: a task on the worker thread uses {sorted(bad)}')


class Network(unittest.TestCase):
    def test_only_the_daemon_client_opens_connections(self):
        for name in sources():
            found = imports(parse(name)) & set(NETWORK_MODULES)
            if name != 'daemon_client.py':
                self.assertEqual(found, set(), f'{name} imports {found}')

    def test_every_http_connection_has_a_timeout(self):
        connects = ('HTTPConnection', 'create_connection', 'urlopen')
        calls = [n for n in ast.walk(parse('daemon_client.py')) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr in connects]
        self.assertGreater(len(calls), 0)
        for call in calls:
            self.assertIn('timeout', [k.arg for k in call.keywords], f'line {call.lineno}: no timeout')


if __name__ == '__main__':
    sys.exit(unittest.main())
