"""A threaded WSGI server on 127.0.0.1 for the test suite's own processes
(the policy API and Placement of the API concurrency suite, Placement and
nova-api of the separate-process cloud)."""

import threading
from wsgiref import simple_server


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _Threaded(simple_server.WSGIServer):
    """One thread per request, as a real WSGI server runs several."""

    def process_request(self, request, client_address):
        threading.Thread(target=self._handle, daemon=True,
                         args=(request, client_address)).start()

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


def serve(app, threaded=True, port=0) -> str:
    """Serve ``app`` on ``port`` (a free one by default) in a background
    thread; return its URL."""
    server = simple_server.make_server(
        '127.0.0.1', port, app, handler_class=_Quiet,
        server_class=_Threaded if threaded else simple_server.WSGIServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f'http://127.0.0.1:{server.server_port}'
