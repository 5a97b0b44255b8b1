"""A repair task whose API process is killed outright, mid-task, with two
``nova-scoped-policies-api`` processes on one PostgreSQL policy store, the
real Placement and nova's functional cloud (the repair tests').

Both API processes are started as test_processes.py starts them
(``python -m tests.functional.api.serve``); nova's API and Placement,
which run in the test's process, are served to them on loopback. The
process that carries the task out (B) reaches Nova through a fault proxy
that holds back the task's second live migration before Nova sees it: B
has made one move, has one more to make, and waits on Nova. Then B is
killed (SIGKILL). The surviving process (A) finds B's task interrupted
(B is gone, not yet reaped), with its one move done; a new plan of A
finishes the work, and Nova's migrations show each server moved once.
"""

import collections
import os
import signal
import subprocess
import sys
import time

import eventlet
from eventlet import wsgi as eventlet_wsgi
import requests

from nova import utils
from placement import deploy as placement_deploy
from tests import db_backends
from tests import fault_proxy
from tests.functional import test_repairs
from tests.functional import test_stack_boots as stack_boots
from tests.functional import wsgi_server

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ADMIN = dict(stack_boots.ADMIN,
             **{'OpenStack-API-Version': 'scoped-policies 1.4'})
TIMEOUT = 120


class KilledAPIProcessTest(stack_boots.StackCloud):
    """Three servers of a group on h1: ``anti-affinity:rack`` over three
    racks of one host each takes two moves."""

    RACKS = collections.OrderedDict(
        (f'rack-{n}', [f'h{n}']) for n in range(1, 4))
    FLAVOR = 'm1.tiny'

    def store_url(self, directory):
        url, drop = db_backends.create('postgresql', directory)
        self.addCleanup(drop)
        self.store_db = url
        return url

    def setUp(self):
        super().setUp()
        self.http = requests.Session()
        self.http.trust_env = False
        group = self.api.post_server_groups(
            {'name': 'g', 'policy': 'soft-anti-affinity'})
        self.group = group['id']
        self.call('POST', '/os-server-groups', {'server_group': {
            'id': self.group, 'policies': ['soft-anti-affinity:rack']}},
            expect=200)
        self.servers = {}
        for name in ('s1', 's2', 's3'):
            server = self._build_server(
                name=name, image_uuid=stack_boots.base.IMAGE,
                flavor_id=self.flavor, networks='none', host='h1')
            created = self.admin_api.post_server(
                {'server': server,
                 'os:scheduler_hints': {'group': self.group}})
            self.servers[name] = self._wait_for_state_change(
                created, 'ACTIVE', max_retries=stack_boots.base.WAIT_RETRIES)
        self.call('POST', f'/os-server-groups/{self.group}',
                  {'server_group': {'policies': ['anti-affinity:rack']}})
        # nova's API and Placement, served on loopback to the processes
        from nova.api import wsgi as nova_wsgi
        nova_url = self.serve(nova_wsgi.Loader().load_app('osapi_compute'))
        placement_url = self.serve(placement_deploy.loadapp(
            self.placement_fixture.conf_fixture.conf))
        self.proxy = fault_proxy.FaultProxy(
            ('127.0.0.1', int(nova_url.rsplit(':', 1)[1]))).start()
        self.addCleanup(self.proxy.stop)
        self.a = self.start(placement_url, nova_url)
        self.b = self.start(placement_url, f'http://{self.proxy.url_host}')

    def serve(self, app):
        """Serve ``app`` on loopback from this process; its URL. nova's
        tests patch it with eventlet, whose green threads wsgiref's
        server (its poll selector, taken before the patch) would block:
        there eventlet's own WSGI server serves, as nova-api's did."""
        if utils.concurrency_mode_threading():
            return wsgi_server.serve(app)
        sock = eventlet.listen(('127.0.0.1', 0))
        server = eventlet.spawn(eventlet_wsgi.server, sock, app,
                                log_output=False)
        self.addCleanup(sock.close)
        self.addCleanup(server.kill)
        return f'http://127.0.0.1:{sock.getsockname()[1]}'

    def start(self, placement_url, nova_url):
        """A policy API process on the store, reaching Placement and Nova
        at these URLs."""
        proc = subprocess.Popen(
            [sys.executable, '-m', 'tests.functional.api.serve', 'repairs',
             self.store_db, placement_url, nova_url + '/v2.1',
             self.project],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            cwd=ROOT)
        self.addCleanup(self.stop, proc)
        url = proc.stdout.readline().strip()
        self.assertTrue(url.startswith('http://'), 'serve.py did not start')
        proc.url = url
        return proc

    @staticmethod
    def stop(proc):
        if proc.poll() is None:
            proc.stdin.close()
            proc.wait(timeout=30)
        proc.stdout.close()

    def request(self, proc, method, path, body=None, expect=200):
        resp = self.http.request(method, proc.url + path, json=body,
                                 headers=ADMIN, timeout=60)
        self.assertEqual(expect, resp.status_code, resp.text)
        return resp.json()

    def plan(self, proc):
        return self.request(proc, 'POST', '/repairs', {'repair': {
            'server_group': self.group}})['repair']

    def apply(self, proc, plan):
        return self.request(proc, 'POST', '/repairs/apply', {'repair': {
            'server_group': self.group, 'fingerprint': plan['fingerprint'],
            'moves': plan['moves']}}, expect=202)['task']

    def task(self, proc, id):
        return self.request(proc, 'GET', f'/repairs/tasks/{id}')['task']

    def until(self, proc, id, done):
        """The task as ``proc`` shows it once ``done(task)``."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            task = self.task(proc, id)
            if done(task):
                return task
            self.assertLess(time.monotonic(), deadline, task)
            time.sleep(0.2)

    @staticmethod
    def state(pid):
        """Process ``pid``'s state letter (``Z``: a zombie)."""
        with open(f'/proc/{pid}/stat') as stat:
            return stat.read().rsplit(')', 1)[1].split()[0]

    def host(self, name):
        return self.host_of(self.admin_api.get_server(
            self.servers[name]['id']))

    def test_a_task_of_a_killed_process_is_interrupted_and_finished(self):
        plan = self.plan(self.a)
        self.assertEqual('repaired', plan['status'], plan)
        first, second = plan['moves']
        # B's second live migration never reaches Nova
        self.proxy.blackhole(
            f'POST /v2.1/servers/{second["server"]}/action'.encode())
        task = self.apply(self.b, plan)
        self.until(self.a, task['id'], lambda t: (t['done'], t['current'])
                   == ([first], [second]))
        self.assertTrue(self.proxy.struck.wait(TIMEOUT))
        # B has made one move and waits on Nova for the next: killed
        self.b.send_signal(signal.SIGKILL)
        # B is a zombie until this process reaps it: gone all the same
        deadline = time.monotonic() + TIMEOUT
        while self.state(self.b.pid) != 'Z':
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        ended = self.task(self.a, task['id'])
        self.assertEqual('interrupted', ended['status'], ended)
        # the move it was making is said: Nova never saw it here
        self.assertEqual(([first], [second], None),
                         (ended['done'], ended['current'], ended['failed']))
        self.b.wait(timeout=30)
        ids = {s['id']: name for name, s in self.servers.items()}
        self.assertEqual(first['to'], self.host(ids[first['server']]))
        self.assertEqual(second['from'], self.host(ids[second['server']]))
        # A plans what is left and carries it out: the interrupted task's
        # claims are gone, its move done is not made again
        again = self.plan(self.a)
        self.assertEqual('repaired', again['status'], again)
        self.assertEqual(1, len(again['moves']), again)
        self.assertNotEqual(first['server'], again['moves'][0]['server'])
        task = self.apply(self.a, again)
        done = self.until(self.a, task['id'],
                          lambda t: t['status'] != 'running')
        self.assertEqual('applied', done['status'], done)
        self.assertEqual('nothing to do', self.plan(self.a)['status'])
        self.assertEqual(
            {'rack-1', 'rack-2', 'rack-3'},
            {self.rack_of[self.host(name)] for name in self.servers})
        # Nova's migrations: two servers moved, each once
        self.assertEqual(
            {first['server']: 1, again['moves'][0]['server']: 1},
            dict(test_repairs.live_migrations(self.admin_api)))
