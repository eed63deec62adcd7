# The add-on talks to the daemon on this computer only (host-addon/renderbridge/daemon_client.py,
# no bpy): an address preference whose host is not 127.0.0.1, ::1 or localhost is refused with a
# message the artist can act on, before the state file (which holds the daemon's token) is read and
# before any socket is opened. Run with plain python3 by paths.test.ts. Real sockets: a listener on
# this machine's own non-loopback address must never see a connection, and a stand-in daemon on
# loopback must get the token when the address says localhost or [::1].
import http.server
import json
import os
import socket
import sys
import tempfile
import threading
import unittest
from unittest import mock

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host-addon', 'renderbridge'))
import daemon_client  # noqa: E402

TOKEN = 'secret-token-' + 'x' * 30
REFUSED = 'only talks to the renderbridge daemon on this computer'


def write_state(folder, port):
    path = os.path.join(folder, 'daemon.json')
    with open(path, 'w') as f:
        json.dump({'version': 1, 'pid': 1, 'port': port, 'token': TOKEN}, f)
    return path


def own_address():
    """This machine's address on its default route (no packet is sent), None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(('192.0.2.1', 9))
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith('127.') else ip


class Connects:
    """Records every connection attempt made through the socket module while active."""

    def __enter__(self):
        self.seen = []
        real = socket.socket.connect
        seen = self.seen

        def connect(sock, address):
            seen.append(address)
            return real(sock, address)
        self.patch = mock.patch.object(socket.socket, 'connect', connect)
        self.patch.start()
        return self

    def __exit__(self, *_exc):
        self.patch.stop()


class Stand_in(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Stand_in.seen.append({'auth': self.headers.get('Authorization'), 'client': self.client_address[0]})
        body = json.dumps({'status': 'ok'}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args):
        pass


class Refused(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.state = write_state(self.tmp.name, 47615)

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, address):
        with Connects() as c, mock.patch.object(daemon_client, 'read_state', wraps=daemon_client.read_state) as read:
            with self.assertRaises(daemon_client.DaemonError, msg=address) as ctx:
                daemon_client.DaemonClient(address=address, state_path=self.state).health()
        self.assertEqual(ctx.exception.name, 'DAEMON_ADDRESS_REFUSED', address)
        self.assertIn(REFUSED, str(ctx.exception))
        self.assertEqual(c.seen, [], f'{address}: no connection may be attempted')
        self.assertEqual(read.call_count, 0, f'{address}: the token must not even be read')
        return str(ctx.exception)

    def test_hosts_other_than_this_computer_are_refused(self):
        for address in ('http://192.168.1.5:47615', 'farm.example.com:47615', 'http://127.0.0.1.nip.io:1',
                        'http://127.0.0.1:80@evil.example/', 'http://0.0.0.0:47615', 'http://127.0.0.2:47615',
                        'http://[::ffff:127.0.0.1]:47615', 'http://localhost.example:47615', 'http://[fd00::2]:1'):
            self.refused(address)

    def test_the_message_names_the_host_and_says_what_to_do(self):
        message = self.refused('http://farm.example.com:47615')
        self.assertIn('"farm.example.com" is not this computer', message)
        self.assertIn('clear "Daemon address" in the add-on preferences', message)
        self.assertEqual(daemon_client.check_address('http://farm.example.com:47615'), message)

    def test_other_schemes_and_bad_ports_are_refused(self):
        self.assertIn('is not an http:// address', self.refused('https://127.0.0.1:47615'))
        self.assertIn('has no valid port', self.refused('http://127.0.0.1:99999'))

    def test_localhost_that_resolves_elsewhere_is_refused(self):
        fake = [(socket.AF_INET, socket.SOCK_STREAM, 6, '', ('10.1.2.3', 0))]
        with mock.patch.object(socket, 'getaddrinfo', return_value=fake):
            message = self.refused('http://localhost:47615')
        self.assertIn('"localhost" does not resolve to a loopback address here', message)

    def test_a_listener_on_this_machines_own_address_never_sees_a_connection(self):
        ip = own_address()
        if ip is None:
            self.skipTest('this machine has no non-loopback address')
        listener = socket.socket()
        listener.bind((ip, 0))
        listener.listen(5)
        listener.settimeout(0.2)
        try:
            self.refused(f'http://{ip}:{listener.getsockname()[1]}')
            with self.assertRaises(socket.timeout):
                listener.accept()
        finally:
            listener.close()


class Allowed(unittest.TestCase):
    def test_loopback_addresses_are_allowed(self):
        for address in ('', '   ', '127.0.0.1:1', 'http://127.0.0.1:47615', 'http://[::1]:47615', 'localhost:5',
                        'HTTP://LocalHost:5/', '127.0.0.1'):
            self.assertIsNone(daemon_client.check_address(address), address)
        self.assertEqual(daemon_client.parse_address('http://[::1]:5'), ('::1', 5))
        self.assertEqual(daemon_client.parse_address('localhost'), ('localhost', None))

    def serve(self, family, host):
        class Server(http.server.HTTPServer):
            address_family = family
        try:
            server = Server((host, 0), Stand_in)
        except OSError as err:
            self.skipTest(f'cannot listen on {host}: {err}')
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return server.server_address[1]

    def test_localhost_reaches_the_daemon_on_loopback_with_the_token(self):
        port = self.serve(socket.AF_INET, '127.0.0.1')
        Stand_in.seen.clear()
        with tempfile.TemporaryDirectory() as tmp, Connects() as c:
            client = daemon_client.DaemonClient(address=f'http://localhost:{port}', state_path=write_state(tmp, 1))
            got = client.health()
        self.assertEqual(got, {'status': 'ok'})
        self.assertEqual(c.seen, [('127.0.0.1', port)])
        self.assertEqual(Stand_in.seen, [{'auth': f'Bearer {TOKEN}', 'client': '127.0.0.1'}])

    def test_ipv6_loopback_reaches_the_daemon(self):
        port = self.serve(socket.AF_INET6, '::1')
        Stand_in.seen.clear()
        with tempfile.TemporaryDirectory() as tmp:
            got = daemon_client.DaemonClient(address=f'http://[::1]:{port}', state_path=write_state(tmp, 1)).health()
        self.assertEqual(got, {'status': 'ok'})
        self.assertEqual(Stand_in.seen, [{'auth': f'Bearer {TOKEN}', 'client': '::1'}])

    def test_without_an_address_the_state_files_port_on_127_0_0_1(self):
        port = self.serve(socket.AF_INET, '127.0.0.1')
        with tempfile.TemporaryDirectory() as tmp, Connects() as c:
            daemon_client.DaemonClient(state_path=write_state(tmp, port)).health()
        self.assertEqual(c.seen, [('127.0.0.1', port)])

    def test_every_call_has_a_short_timeout(self):
        client = daemon_client.DaemonClient()
        self.assertLessEqual(client.connect_timeout, 5)
        self.assertLessEqual(client.read_timeout, 10)


if __name__ == '__main__':
    sys.exit(unittest.main())
