# Unit tests of host-addon/renderbridge/paths.py (no bpy), run with plain python3 by paths.test.ts.
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import paths  # noqa: E402


def touch(folder, *names):
    for n in names:
        with open(os.path.join(folder, n), 'w'):
            pass


class SequenceParts(unittest.TestCase):
    def test_last_digit_run_before_the_extension(self):
        self.assertEqual(paths.sequence_parts('//seq/shot2_frame_0001.png'), ('//seq/shot2_frame_', '0001', '.png'))
        self.assertEqual(paths.sequence_parts('/a/b12/render.0042.exr'), ('/a/b12/render.', '0042', '.exr'))
        self.assertEqual(paths.sequence_parts('C:\\seq\\f12x.png'), ('C:\\seq\\f', '12', 'x.png'))

    def test_no_digits_in_the_name(self):
        self.assertIsNone(paths.sequence_parts('/a/b12/render.png'))


class Expand(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_udim_tiles_on_disk(self):
        touch(self.dir, 'wood.1001.png', 'wood.1002.png', 'wood.1011.png', 'wood.100.png', 'wood.1001.jpg',
              'other.1001.png')
        got = paths.expand_udim(os.path.join(self.dir, 'wood.<UDIM>.png'))
        self.assertEqual([os.path.basename(p) for p in got], ['wood.1001.png', 'wood.1002.png', 'wood.1011.png'])

    def test_uvtile_tiles_on_disk(self):
        touch(self.dir, 'skin_u1_v1.png', 'skin_u2_v1.png', 'skin_1001.png')
        got = paths.expand_udim(os.path.join(self.dir, 'skin_<UVTILE>.png'))
        self.assertEqual([os.path.basename(p) for p in got], ['skin_u1_v1.png', 'skin_u2_v1.png'])

    def test_sequence_frames_on_disk(self):
        touch(self.dir, 'f_0001.png', 'f_0002.png', 'f_0010.png', 'f_0001.exr', 'g_0001.png')
        os.mkdir(os.path.join(self.dir, 'f_0003.png'))  # a folder is not a frame
        got = paths.expand_sequence(os.path.join(self.dir, 'f_0002.png'))
        self.assertEqual([os.path.basename(p) for p in got], ['f_0001.png', 'f_0002.png', 'f_0010.png'])

    def test_missing_folder_gives_no_files(self):
        self.assertEqual(paths.expand_udim(os.path.join(self.dir, 'nope', 'a.<UDIM>.png')), [])
        self.assertEqual(paths.expand_sequence(os.path.join(self.dir, 'nope', 'a_0001.png')), [])

    def test_windows_path_twin(self):
        os.mkdir(os.path.join(self.dir, 'maps'))
        touch(os.path.join(self.dir, 'maps'), 'a.png')
        windows = self.dir + '\\maps\\a.png'
        self.assertEqual(paths.existing_variant(windows), os.path.join(self.dir, 'maps', 'a.png'))
        self.assertEqual(paths.existing_variant(self.dir + '\\maps\\b.png'), self.dir + '\\maps\\b.png')


class Misc(unittest.TestCase):
    def test_is_under(self):
        self.assertTrue(paths.is_under('/usr/share/blender/3.4/datafiles/matcap.exr', ['/usr/share/blender/3.4']))
        self.assertFalse(paths.is_under('/usr/share/blender-assets/x.png', ['/usr/share/blender']))
        self.assertFalse(paths.is_under('/x.png', ['', None]))

    def test_dependency_list_merges_users_per_blend_and_path(self):
        deps = paths.DependencyList()
        deps.add('//a.png', '/p/a.png', 'image', '/p/main.blend', 'IMa')
        deps.add('//a.png', '/p/a.png', 'image', '/p/main.blend', 'IMa.001')
        deps.add('//a.png', '/p/lib/a.png', 'image', '/p/lib/lib.blend', 'IMa')
        items = deps.items()
        self.assertEqual(len(items), 2)
        self.assertEqual(items[0]['usedBy'], ['IMa', 'IMa.001'])
        self.assertNotIn('files', items[0])
        self.assertEqual(items[1]['blendFile'], '/p/lib/lib.blend')


if __name__ == '__main__':
    unittest.main()
