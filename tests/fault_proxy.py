"""A loopback TCP proxy that injects faults, for the fault tests (#37).

One proxy stands in front of one real service (Placement, Redis,
RabbitMQ) on 127.0.0.1; the processes under test are configured with the
proxy's port instead of the service's. The test switches its mode while
they run::

    proxy = FaultProxy(('127.0.0.1', 6379))
    proxy.start()                # passes traffic
    proxy.refuse()               # nothing listens on the port
    proxy.blackhole()            # accepts, reads, never answers
    proxy.blackhole(keep_open=True)  # and the connections open go
                                 # silent too, without being cut
    proxy.delay(3)               # every chunk waits 3 s each way
    proxy.delay(3, keep_open=True)   # on the connections open too
    proxy.lose_answer()          # forwards requests, then drops the
                                 # connection before the answer
    proxy.passing()              # back to normal
    proxy.stop()

``blackhole``, ``delay`` and ``lose_answer`` take ``match``: the fault
then strikes a connection only from its first chunk sent by the client
that starts with those bytes (``b'POST /allocations'``: one HTTP request;
the connection's earlier requests pass); ``proxy.struck`` (an event) is
set when it does.

A mode change cuts the connections open at the time (a client learns of a
fault as it would of a restart), but with ``keep_open=True``: the
connections open then take the new mode too (``blackhole``: a service
frozen or cut off by the network, whose clients learn nothing;
``delay``: a service slowing down). Nothing beyond loopback: the proxy
refuses a non-loopback upstream.
"""

import ipaddress
import select
import socket
import threading
import time
import typing

PASS = 'pass'
REFUSE = 'refuse'
BLACKHOLE = 'blackhole'
DELAY = 'delay'
LOSE = 'lose'


class FaultProxy:
    """A TCP proxy on 127.0.0.1 in front of ``upstream``.

    :param upstream: (host, port) of the real service, on loopback.
    """

    def __init__(self, upstream: typing.Tuple[str, int]) -> None:
        if not ipaddress.ip_address(upstream[0]).is_loopback:
            raise ValueError(f'upstream {upstream[0]}: loopback only')
        self.upstream = upstream
        self.port = 0
        self.mode = PASS
        self.seconds = 0.0
        self.match = b''
        self.lost = 0
        self.struck = threading.Event()
        """Set when a chunk matched a fault's ``match``: the fault struck
        (a test waits on it rather than sleeping)."""
        self._listener: typing.Optional[socket.socket] = None
        self._sockets: typing.Set[socket.socket] = set()
        self._lock = threading.Lock()
        self._epoch = 0
        self._kept: typing.Optional[int] = None
        """The epoch whose mode the connections open before it take
        (``keep_open=True``)."""

    # -- life ------------------------------------------------------------

    @property
    def url_host(self) -> str:
        return f'127.0.0.1:{self.port}'

    def start(self) -> 'FaultProxy':
        self._listen()
        return self

    def stop(self) -> None:
        self._close_listener()
        self._cut()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- modes -----------------------------------------------------------

    def passing(self) -> None:
        self._set(PASS)

    def refuse(self) -> None:
        """Close the listening socket: connections are refused."""
        self._set(REFUSE)

    def blackhole(self, match: bytes = b'', keep_open: bool = False
                  ) -> None:
        """Accept connections and read them; answer nothing, ever (from
        the ``match`` on: it and what follows never reach the service).

        :param keep_open: the connections open are not cut: from now on
            nothing passes on them either way (no reset, no close).
        """
        self._set(BLACKHOLE, match=match, cut=not keep_open)

    def delay(self, seconds: float, match: bytes = b'',
              keep_open: bool = False) -> None:
        """Forward every chunk, each way, ``seconds`` late (with
        ``match``: that chunk only).

        :param keep_open: the connections open are not cut: from now on
            their every chunk is late too.
        """
        self._set(DELAY, seconds=seconds, match=match, cut=not keep_open)

    def lose_answer(self, match: bytes = b'') -> None:
        """Forward requests; from the ``match`` on, wait for the service's
        first bytes of answer, then drop the connection without passing
        them on (the service did the work; the client never learns it)."""
        self._set(LOSE, match=match)

    def _set(self, mode: str, seconds: float = 0.0, match: bytes = b'',
             cut: bool = True) -> None:
        with self._lock:
            self.mode, self.seconds, self.match = mode, seconds, match
            self._epoch += 1
            self._kept = None if cut else self._epoch
        if cut:
            self._cut()
        if mode == REFUSE:
            self._close_listener()
        elif self._listener is None:
            self._listen()

    # -- plumbing --------------------------------------------------------

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(('127.0.0.1', self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,),
                         daemon=True).start()

    def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()

    def _cut(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _close(sock)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._sockets.add(client)
                mode, epoch = self.mode, self._epoch
            if mode == BLACKHOLE and not self.match:
                threading.Thread(target=self._swallow, args=(client,),
                                 daemon=True).start()
                continue
            threading.Thread(target=self._relay, args=(client, epoch),
                             daemon=True).start()

    def _swallow(self, client: socket.socket) -> None:
        try:
            while client.recv(65536):
                pass
        except OSError:
            pass

    def _relay(self, client: socket.socket, epoch: int) -> None:
        try:
            server = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            _close(client)
            return
        server.settimeout(None)
        with self._lock:
            if epoch != self._epoch:
                _close(client)
                _close(server)
                return
            self._sockets.add(server)
            mode, seconds, match = self.mode, self.seconds, self.match
        struck = not match
        reading, silenced = [client, server], False
        try:
            while True:
                readable, _, _ = select.select(reading, [], [], 1)
                if self._epoch != epoch:
                    with self._lock:
                        if self._kept != self._epoch:
                            return
                        epoch, mode, seconds = (self._epoch, self.mode,
                                                self.seconds)
                    match, struck = b'', True
                    silenced = mode == BLACKHOLE
                for sock in readable:
                    data = sock.recv(65536)
                    if not data and sock is server and silenced:
                        reading.remove(server)   # the client never knows
                        continue
                    if not data:
                        return
                    first = False
                    if sock is client and not struck:
                        struck = first = data.startswith(match)
                        if first:
                            self.struck.set()
                    if not struck or mode == PASS:
                        (server if sock is client else client).sendall(data)
                    elif mode == DELAY:
                        if first or not match:
                            time.sleep(seconds)
                        (server if sock is client else client).sendall(data)
                    elif mode == BLACKHOLE:
                        pass   # swallowed, both ways
                    elif sock is client:   # LOSE
                        server.sendall(data)
                    else:
                        self.lost += 1
                        return
        except OSError:
            return
        finally:
            _close(client)
            _close(server)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
