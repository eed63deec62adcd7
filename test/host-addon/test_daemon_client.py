# Unit tests of host-addon/renderbridge/daemon_client.py (no bpy), run with plain python3 by
# daemon-client.test.ts, which starts the real bridge daemon (two: with and without an API key)
# against a real reference service and passes their state files, a .blend and a job id here:
#   RB_TEST_DAEMON_STATE   state file of the daemon with an API key
#   RB_TEST_KEYLESS_STATE  state file of the daemon without one
#   RB_TEST_BLEND          a .blend to pack
#   RB_TEST_JOB_ID         a job of the service's workspace, in `created`
#   RB_TEST_SERVICE_URL    the service's API root (the farm of these daemons)
#   RB_TEST_WRONGKEY_STATE state file of a daemon whose key the service refuses
#   RB_TEST_NOFARM_STATE   state file of a daemon whose farm URL nothing answers
# The failure cases use real sockets: a closed port, and a listener that never answers.
import http.client
import json
import os
import socket
import sys
import tempfile
import time
import unittest
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import daemon_client  # noqa: E402
import farm_status  # noqa: E402

ENV = ('RB_TEST_DAEMON_STATE', 'RB_TEST_KEYLESS_STATE', 'RB_TEST_BLEND', 'RB_TEST_JOB_ID', 'RB_TEST_SERVICE_URL',
       'RB_TEST_WRONGKEY_STATE', 'RB_TEST_NOFARM_STATE')


class Recorder:
    """Records each request the client sends (method, path, headers, JSON body) and sends it unchanged."""

    def __enter__(self):
        self.seen = []
        self.real = real = http.client.HTTPConnection.request
        seen = self.seen

        def request(conn, method, url, body=None, headers=None, **kw):
            headers = dict(headers or {})
            seen.append({'method': method, 'path': url, 'headers': headers, 'body': json.loads(body) if body else None})
            return real(conn, method, url, body=body, headers=headers, **kw)

        http.client.HTTPConnection.request = request
        return self

    def __exit__(self, *_exc):
        http.client.HTTPConnection.request = self.real


def write_state(folder, port, token):
    path = os.path.join(folder, 'renderbridge', 'daemon.json')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump({'version': 1, 'pid': 1, 'port': port, 'token': token, 'startedAt': '', 'daemonVersion': '0'}, f)
    return path


def closed_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class StateFile(unittest.TestCase):
    def test_xdg_state_home_then_home(self):
        self.assertEqual(daemon_client.state_file_path({'XDG_STATE_HOME': '/s'}), '/s/renderbridge/daemon.json')
        self.assertTrue(daemon_client.state_file_path({}).endswith('/.local/state/renderbridge/daemon.json'))

    def test_absent_state_file_says_how_to_start_the_daemon(self):
        client = daemon_client.DaemonClient(state_path='/nonexistent/daemon.json')
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            client.health()
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')
        self.assertIn('start it with `renderbridge daemon`', str(ctx.exception))


def require_real_daemon():
    """Skips, saying why, when the test runs outside test/host-addon/daemon-client.test.ts (which fails on any skip)."""
    missing = [name for name in ENV if not os.environ.get(name)]
    if missing:
        raise unittest.SkipTest(f'no real daemon ({", ".join(missing)} unset): '
                                'run through test/host-addon/daemon-client.test.ts')


class Calls(unittest.TestCase):
    """Against the real daemon."""

    @classmethod
    def setUpClass(cls):
        require_real_daemon()
        cls.state = os.environ['RB_TEST_DAEMON_STATE']
        with open(cls.state, encoding='utf-8') as f:
            real = json.load(f)
        cls.port, cls.token = real['port'], real['token']
        cls.keyless = os.environ['RB_TEST_KEYLESS_STATE']
        cls.blend = os.environ['RB_TEST_BLEND']
        cls.job_id = os.environ['RB_TEST_JOB_ID']
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.client = daemon_client.DaemonClient(state_path=self.state)

    def test_sends_the_token_and_no_origin(self):
        with Recorder() as rec:
            health = self.client.health()
        self.assertEqual((health['status'], health['apiKeyConfigured'], health['apiKeySource']), ('ok', True, 'env'))
        headers = rec.seen[0]['headers']
        self.assertEqual(headers['Authorization'], f'Bearer {self.token}')
        self.assertNotIn('Origin', headers)

    def test_no_api_key_error_reads_as_the_daemon_wrote_it(self):
        keyless = daemon_client.DaemonClient(state_path=self.keyless)
        self.assertFalse(keyless.health()['apiKeyConfigured'])
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            keyless.job(self.job_id)
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('NO_API_KEY', 409))
        self.assertEqual(str(ctx.exception), 'NO_API_KEY: No API key is configured: store one with the tray app '
                                             '(OS keychain) or set RENDERBRIDGE_API_KEY, then retry.')
        # Packing is local: it needs no key. With the dependencies given, Blender is not run. The
        # pack runs in the daemon's background: POST /packs answers at once, GET /packs/:id follows it.
        with Recorder() as rec:
            started = keyless.start_pack(self.blend, [], [])
        self.assertEqual(rec.seen[0]['body'], {'path': self.blend, 'dependencies': [], 'addons': []})
        self.assertEqual(started['state'], 'packing')
        deadline = time.monotonic() + 60
        while (state := keyless.get_pack(started['packId']))['state'] == 'packing' and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(state['state'], 'ready', state.get('error'))
        pack = state['result']
        self.assertEqual((pack['sourcePath'], pack['fileCount'], pack['sceneFile']),
                         (self.blend, 1, os.path.basename(self.blend)))
        self.assertEqual([f['path'] for f in pack['files']],
                         [os.path.basename(self.blend), 'renderbridge-manifest.json'])
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            keyless.get_pack('no-such-pack')
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('DAEMON_NOT_FOUND', 404))

    def test_error_details_are_listed(self):
        with Recorder() as rec:
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                self.client.submit('pk', {'frames': ['x']}, 'check')
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('DAEMON_BAD_REQUEST', 400))
        self.assertTrue(str(ctx.exception).startswith(
            'DAEMON_BAD_REQUEST: The request is invalid: fix the fields listed in details and send it again. '
            '(body.settings.frames.0: use "N", "A-B" or "A-BxSTEP"'), str(ctx.exception))
        self.assertEqual(rec.seen[0]['body'], {'packId': 'pk', 'settings': {'frames': ['x']}, 'mode': 'check'})
        # A valid body is taken; the submission then fails on the unknown pack, as the daemon says.
        started = self.client.submit('pk', {'frames': ['1']}, 'check')
        self.assertEqual(started['path'], 'pk')
        deadline = time.monotonic() + 30
        while (state := self.client.submission(started['id']))['step'] != 'failed' and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(state['error']['name'], 'DAEMON_NOT_FOUND')
        self.assertIn('No pack pk', state['error']['message'])

    def test_wrong_token_is_unauthorized(self):
        client = daemon_client.DaemonClient(state_path=write_state(self.tmp.name, self.port, 'y' * 43))
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            client.jobs()
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('DAEMON_UNAUTHORIZED', 401))

    def test_ids_are_escaped_in_paths(self):
        # Escaped, 'a/b' reaches the daemon as one id, which it refuses as not a UUID (400);
        # unescaped it would be another path (404).
        with Recorder() as rec:
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                self.client.cancel('a/b')
        self.assertEqual(rec.seen[0]['path'], '/jobs/a%2Fb/cancel')
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('DAEMON_BAD_REQUEST', 400))
        self.assertEqual(ctx.exception.details[0]['path'], ['params', 'id'])
        # An unknown id reads as the service wrote it.
        unknown = str(uuid.uuid4())
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            self.client.job(unknown)
        self.assertEqual((ctx.exception.name, ctx.exception.status), ('JOB_NOT_FOUND', 404))

    def test_address_preference_overrides_the_port(self):
        client = daemon_client.DaemonClient(address='127.0.0.1:1', state_path=self.state)
        with self.assertRaises(daemon_client.DaemonError) as ctx:
            client.jobs()
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')
        self.assertIn('127.0.0.1:1', str(ctx.exception))
        # A state file naming a dead port, with the daemon's token: the address finds the daemon.
        stale = write_state(self.tmp.name, closed_port(), self.token)
        jobs = daemon_client.DaemonClient(address=f'http://127.0.0.1:{self.port}', state_path=stale).jobs()
        self.assertIn(self.job_id, [j['job']['id'] for j in jobs])

    def test_cancel_and_read_a_job(self):
        self.assertEqual(self.client.job(self.job_id)['job']['id'], self.job_id)
        self.assertEqual(self.client.cancel(self.job_id)['job']['status'], 'canceled')


class Failures(unittest.TestCase):
    def test_a_port_nobody_listens_on_means_not_running(self):
        with tempfile.TemporaryDirectory() as tmp:
            client = daemon_client.DaemonClient(state_path=write_state(tmp, closed_port(), 'x' * 43))
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                client.health()
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')
        self.assertIn('renderbridge daemon', str(ctx.exception))

    def test_a_daemon_that_never_answers_times_out(self):
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen(5)  # accepts connections (backlog) but never reads or answers
        with tempfile.TemporaryDirectory() as tmp:
            state_path = write_state(tmp, listener.getsockname()[1], 'x' * 43)
            client = daemon_client.DaemonClient(state_path=state_path, read_timeout=0.5)
            started = time.monotonic()
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                client.jobs()
            took = time.monotonic() - started
        listener.close()
        self.assertEqual(ctx.exception.name, 'DAEMON_TIMEOUT')
        self.assertIn('within 0.5 s', str(ctx.exception))
        # Well under the default 5 s read timeout: the given one applied.
        self.assertLess(took, 4.5)

    def test_a_body_that_is_not_an_error_body(self):
        self.assertEqual(daemon_client.error_message(502, None)[1],
                         'The daemon answered HTTP 502 without an error message.')


class FarmConnection(unittest.TestCase):
    """farm_status (preferences' farm line and Test connection) against real daemons and a real farm."""

    @classmethod
    def setUpClass(cls):
        require_real_daemon()
        cls.farm = os.environ['RB_TEST_SERVICE_URL']

    def client(self, var):
        return daemon_client.DaemonClient(state_path=os.environ[var])

    def test_the_farm_and_profile_the_daemon_uses(self):
        health = self.client('RB_TEST_DAEMON_STATE').health()
        self.assertEqual(farm_status.farm_of(health), f'{self.farm} (profile "default")')
        self.assertEqual(farm_status.current_farm(self.client('RB_TEST_DAEMON_STATE')),
                         f'{self.farm} (profile "default")')
        self.assertEqual(farm_status.farm_of(None), '')

    def test_connection_answered_by_the_farm(self):
        got = farm_status.test_connection(self.client('RB_TEST_DAEMON_STATE'))
        self.assertEqual((got['ok'], got['farm'], got['profile']), (True, self.farm, 'default'))
        self.assertEqual(got['message'], f'{self.farm} answered: the farm accepts the API key of profile "default".')

    def test_connection_with_a_refused_key(self):
        got = farm_status.test_connection(self.client('RB_TEST_WRONGKEY_STATE'))
        self.assertFalse(got['ok'])
        self.assertIn(f'{self.farm} refused the API key of profile "default"', got['message'])
        self.assertIn('renderbridge login --profile default', got['message'])

    def test_connection_without_a_key(self):
        got = farm_status.test_connection(self.client('RB_TEST_KEYLESS_STATE'))
        self.assertFalse(got['ok'])
        self.assertIn('has no API key for it', got['message'])

    def test_connection_to_a_farm_that_does_not_answer(self):
        got = farm_status.test_connection(self.client('RB_TEST_NOFARM_STATE'))
        self.assertFalse(got['ok'])
        self.assertEqual(got['farm'], 'http://127.0.0.1:9/api/external/v1')
        self.assertIn('did not answer the daemon: check the service URL', got['message'])

    def test_connection_without_a_daemon_raises_its_message(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(daemon_client.DaemonError) as ctx:
                farm_status.test_connection(daemon_client.DaemonClient(state_path=os.path.join(d, 'daemon.json')))
        self.assertEqual(ctx.exception.name, 'DAEMON_NOT_RUNNING')


if __name__ == '__main__':
    unittest.main()
