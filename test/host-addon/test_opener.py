# Unit tests of host-addon/renderbridge/opener.py (no bpy), run with plain python3 by paths.test.ts:
# which opener each platform uses, and the refusals. `run` records the command instead of starting
# a file manager (no desktop session here); one test runs a real executable through Popen.
import os
import stat
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import opener  # noqa: E402


class Recorder:
    def __init__(self, error=None):
        self.calls = []
        self.error = error

    def __call__(self, argv, **kwargs):
        self.calls.append((argv, kwargs))
        if self.error:
            raise self.error


class OpenFolderTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.folder = os.path.join(self.tmp.name, 'shot-1234abcd')
        os.mkdir(self.folder)

    def test_platform_choice(self):
        self.assertEqual(opener.opener_command('linux'), ['xdg-open'])
        self.assertEqual(opener.opener_command('freebsd13'), ['xdg-open'])
        self.assertEqual(opener.opener_command('darwin'), ['open'])
        self.assertIsNone(opener.opener_command('win32'))

    def test_linux_runs_xdg_open_with_the_folder_without_waiting(self):
        run = Recorder()
        self.assertEqual(opener.open_folder(self.folder, run=run, platform='linux'), ['xdg-open', self.folder])
        argv, kwargs = run.calls[0]
        self.assertEqual(argv, ['xdg-open', self.folder])
        self.assertTrue(kwargs['start_new_session'])

    def test_macos_runs_open(self):
        run = Recorder()
        opener.open_folder(self.folder, run=run, platform='darwin')
        self.assertEqual(run.calls[0][0], ['open', self.folder])

    def test_windows_uses_startfile(self):
        run, started = Recorder(), []
        got = opener.open_folder(self.folder, run=run, platform='win32', startfile=started.append)
        self.assertEqual((got, started, run.calls), (['os.startfile', self.folder], [self.folder], []))

    def test_relative_path_is_made_absolute(self):
        run = Recorder()
        cwd = os.getcwd()
        os.chdir(self.tmp.name)
        try:
            opener.open_folder('shot-1234abcd', run=run, platform='linux')
        finally:
            os.chdir(cwd)
        self.assertEqual(run.calls[0][0][1], os.path.realpath(self.folder))

    def test_refuses_a_folder_that_does_not_exist(self):
        run = Recorder()
        gone = os.path.join(self.tmp.name, 'not-downloaded')
        with self.assertRaises(opener.OpenFolderError) as ctx:
            opener.open_folder(gone, run=run, platform='linux')
        self.assertEqual(str(ctx.exception), f'The folder {gone} does not exist (yet): download the job first.')
        self.assertEqual(run.calls, [])

    def test_refuses_a_file_and_an_empty_path(self):
        path = os.path.join(self.tmp.name, 'f.png')
        open(path, 'w').close()
        with self.assertRaisesRegex(opener.OpenFolderError, 'is not a folder'):
            opener.open_folder(path, run=Recorder(), platform='linux')
        with self.assertRaisesRegex(opener.OpenFolderError, 'No folder to open'):
            opener.open_folder('', run=Recorder(), platform='linux')

    def test_missing_opener_is_a_clear_error(self):
        run = Recorder(FileNotFoundError(2, 'No such file', 'xdg-open'))
        with self.assertRaisesRegex(opener.OpenFolderError, '"xdg-open" was not found'):
            opener.open_folder(self.folder, run=run, platform='linux')

    def test_default_run_starts_the_opener_found_on_path(self):
        # A stand-in xdg-open (no desktop session exists here) that records its argument.
        bin_dir = os.path.join(self.tmp.name, 'bin')
        os.mkdir(bin_dir)
        record = os.path.join(self.tmp.name, 'opened.txt')
        script = os.path.join(bin_dir, 'xdg-open')
        with open(script, 'w') as f:
            f.write(f'#!/bin/sh\nprintf "%s" "$1" > "{record}.tmp" && mv "{record}.tmp" "{record}"\n')
        os.chmod(script, os.stat(script).st_mode | stat.S_IXUSR)
        old = os.environ['PATH']
        os.environ['PATH'] = bin_dir + os.pathsep + old
        try:
            opener.open_folder(self.folder, platform='linux')
        finally:
            os.environ['PATH'] = old
        deadline = time.monotonic() + 10
        while not os.path.exists(record) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(record) as f:
            self.assertEqual(f.read(), self.folder)


if __name__ == '__main__':
    unittest.main()
