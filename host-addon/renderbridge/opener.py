# "Open folder" of a recent job, without bpy: the OS's own opener shows the folder (xdg-open on
# Linux and the BSDs, `open` on macOS, os.startfile on Windows). `run` (subprocess.Popen by
# default) is injectable so tests can check the command without a desktop session.
import os
import subprocess
import sys


class OpenFolderError(Exception):
    """A readable reason the folder could not be opened."""


def opener_command(platform=None):
    """The command that opens a folder on `platform` (sys.platform), None where os.startfile does."""
    platform = platform or sys.platform
    if platform.startswith('win') or platform == 'cygwin':
        return None
    if platform == 'darwin':
        return ['open']
    return ['xdg-open']


def open_folder(path, run=subprocess.Popen, platform=None, startfile=None):
    """Opens the folder `path` with the OS opener and returns what was run (a list: the command and
    the folder). Raises OpenFolderError when there is no such folder or no opener to run; it never
    waits for the opener (a file manager may stay open)."""
    if not path:
        raise OpenFolderError('No folder to open: download the job first.')
    folder = os.path.abspath(path)
    if not os.path.isdir(folder):
        what = 'is not a folder' if os.path.exists(folder) else 'does not exist (yet)'
        raise OpenFolderError(f'The folder {folder} {what}: download the job first.')
    command = opener_command(platform)
    if command is None:
        opener = startfile or getattr(os, 'startfile', None)
        if opener is None:
            raise OpenFolderError('os.startfile is not available on this system.')
        opener(folder)
        return ['os.startfile', folder]
    argv = command + [folder]
    try:
        run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=True, start_new_session=True)
    except FileNotFoundError:
        raise OpenFolderError(f'Could not open {folder}: "{argv[0]}" was not found; '
                              'install it or open the folder by hand.') from None
    except OSError as err:
        raise OpenFolderError(f'Could not open {folder} with {argv[0]}: {err}') from None
    return argv
