"""Live migrations through Nova, for repair plans (keystoneauth1).

Each move is a live migration to the planned host *without* ``force``
(compute API 2.30 and later): nova-scheduler checks the host with every
filter, ours included, so a move the cloud no longer allows fails rather
than breaking a policy. A move is done when the server is back to no task
on its planned host; it failed when it is back to no task elsewhere, or
when it takes longer than ``timeout``.

A plan names hosts as Placement names their providers: the hypervisor
hostname. Nova's live migration and a server's host name the compute
service, which differs where a driver reports a fully qualified name: the
moves translate one into the other with ``GET /os-hypervisors/detail``,
read once.
"""

import dataclasses
import time
import typing

from keystoneauth1 import exceptions as ks_exc

COMPUTE_VERSION = '2.80'
"""Live migration without ``force`` (2.68 dropped it) and the servers'
host and task fields for admins."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How one move ended.

    :param ok: the server runs on its planned host.
    :param host: where it runs now.
    :param reason: why not, when not.
    """

    ok: bool
    host: typing.Optional[str]
    reason: str = ''


class NovaMoves:
    """Starts live migrations and watches them.

    :param adapter: a keystoneauth1 Adapter for the compute API, with
        credentials allowed to live-migrate (admin by Nova's defaults).
    :param clock: monotonic clock (tests).
    :param sleep: sleeps between two polls (tests).
    """

    def __init__(self, adapter, clock=time.monotonic,
                 sleep=time.sleep, poll: float = 1.0) -> None:
        self.adapter = adapter
        self._clock = clock
        self._sleep = sleep
        self._poll = poll
        self._services: typing.Optional[typing.Dict[str, str]] = None

    def _call(self, method: str, path: str, body=None):
        try:
            return self.adapter.request(
                path, method, json=body, raise_exc=False, headers={
                    'OpenStack-API-Version':
                    f'compute {COMPUTE_VERSION}'})
        except ks_exc.ClientException as exc:
            raise MoveError(f'Nova did not answer: {exc}')

    def service_host(self, node: str) -> str:
        """The compute service host of hypervisor ``node`` (itself when
        Nova lists no such hypervisor).

        :raises MoveError: Nova did not list its hypervisors.
        """
        if self._services is None:
            services: typing.Dict[str, str] = {}
            path = '/os-hypervisors/detail'
            while path:
                resp = self._call('GET', path)
                if resp.status_code != 200:
                    raise MoveError(f'Nova does not list its hypervisors: '
                                    f'{resp.status_code}')
                body = resp.json()
                for found in body.get('hypervisors', ()):
                    service = found.get('service') or {}
                    if service.get('host'):
                        services[found['hypervisor_hostname']] = \
                            service['host']
                path = next((link['href'] for link in
                             body.get('hypervisors_links', ())
                             if link.get('rel') == 'next'), None)
            self._services = services
        return self._services.get(node, node)

    def start(self, server: str, host: str) -> None:
        """Ask Nova to live-migrate ``server`` to ``host`` (a hypervisor
        hostname, as Placement names it).

        :raises MoveError: Nova refused (the server is busy, gone...).
        """
        resp = self._call('POST', f'/servers/{server}/action', {
            'os-migrateLive': {'host': self.service_host(host),
                               'block_migration': 'auto'}})
        if resp.status_code != 202:
            raise MoveError(f'Nova refused the live migration: '
                            f'{resp.status_code} {resp.text[:200]}')

    def state(self, server: str) -> typing.Tuple[
            typing.Optional[str], typing.Optional[str], str]:
        """(host, task state, status) of a server."""
        resp = self._call('GET', f'/servers/{server}')
        if resp.status_code != 200:
            raise MoveError(f'Nova does not show the server: '
                            f'{resp.status_code}')
        found = resp.json()['server']
        return (found.get('OS-EXT-SRV-ATTR:host'),
                found.get('OS-EXT-STS:task_state'), found.get('status', ''))

    def wait(self, server: str, host: str, timeout: float) -> Outcome:
        """Until the server has no task: on ``host`` (a hypervisor
        hostname) it is done."""
        deadline = self._clock() + timeout
        wanted = self.service_host(host)
        while True:
            where, task, status = self.state(server)
            if task is None and status != 'MIGRATING':
                if where == wanted:
                    return Outcome(True, where)
                return Outcome(False, where, (
                    f'the server stayed on {where}: the scheduler or the '
                    'hypervisor refused the move (see its instance '
                    'actions)'))
            if self._clock() >= deadline:
                return Outcome(False, where, f'still moving after '
                               f'{timeout:g} s')
            self._sleep(self._poll)


class MoveError(Exception):
    """Nova refused or did not answer."""
