# Blender 4.2+ installs the add-on as an extension from host-addon/renderbridge/blender_manifest.toml.
# addon-install.test.ts installs it in real 4.3 and 5.2 builds; this checks without Blender what a
# message from Blender would not pin down: the manifest is parsed with Python's tomllib and held to
# the rules Blender 4.2's extension validator applies to the required fields (schema 1.0.0), and its
# version must match bl_info's.
import ast
import os
import re
import sys
import tomllib
import unittest

ADDON = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge')
SEMVER = re.compile(r'^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$')
TERSE_MAX = 64  # Blender's limit for the tagline and each permission's reason
PERMISSIONS = {'files', 'network', 'clipboard', 'camera', 'microphone'}


def terse_problem(text):
    if not isinstance(text, str) or not text.strip():
        return 'must be a non-empty string'
    if len(text) > TERSE_MAX:
        return f'is {len(text)} characters, more than {TERSE_MAX}'
    if re.search(r'[\x00-\x1f\x7f-\x9f]', text):
        return 'holds control characters'
    if not (text[-1].isalnum() or text[-1] == ')'):
        return f'must not end with "{text[-1]}"'
    return None


class ManifestTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ADDON, 'blender_manifest.toml'), 'rb') as f:
            cls.m = tomllib.load(f)

    def test_required_fields(self):
        m = self.m
        self.assertEqual(m['schema_version'], '1.0.0')
        self.assertRegex(m['id'], r'^[A-Za-z][A-Za-z0-9_]*$')
        self.assertEqual(m['id'], 'renderbridge')  # the package name the add-on's imports use
        self.assertRegex(m['version'], SEMVER)
        self.assertTrue(isinstance(m['name'], str) and m['name'].strip())
        self.assertIsNone(terse_problem(m['tagline']), f"tagline {terse_problem(m['tagline'])}")
        self.assertTrue(isinstance(m['maintainer'], str) and m['maintainer'].strip())
        self.assertEqual(m['type'], 'add-on')
        self.assertRegex(m['blender_version_min'], r'^\d+\.\d+\.\d+$')
        self.assertGreaterEqual(tuple(int(p) for p in m['blender_version_min'].split('.')), (4, 2, 0))
        self.assertIsInstance(m['license'], list)
        self.assertTrue(m['license'])
        for lic in m['license']:
            self.assertRegex(lic, r'^SPDX:[A-Za-z0-9.+-]+$')

    def test_permissions_have_reasons(self):
        perms = self.m['permissions']
        self.assertIsInstance(perms, dict)  # 4.2 wants a table: permission = "reason"
        self.assertEqual(set(perms), {'files', 'network'})
        self.assertLessEqual(set(perms), PERMISSIONS)
        for key, reason in perms.items():
            self.assertIsNone(terse_problem(reason), f'permissions.{key} {terse_problem(reason)}')

    def test_version_matches_bl_info(self):
        with open(os.path.join(ADDON, '__init__.py'), encoding='utf-8') as f:
            tree = ast.parse(f.read())
        bl_info = next(ast.literal_eval(n.value) for n in tree.body
                       if isinstance(n, ast.Assign) and getattr(n.targets[0], 'id', '') == 'bl_info')
        self.assertEqual(self.m['version'], '.'.join(str(p) for p in bl_info['version']))

    def test_the_checks_catch_bad_values(self):
        self.assertIn('more than 64', terse_problem('x' * 65))
        self.assertIn('must not end with "."', terse_problem('Reads files.'))
        self.assertIsNone(terse_problem('Reads files (read only)'))


if __name__ == '__main__':
    sys.exit(unittest.main())
