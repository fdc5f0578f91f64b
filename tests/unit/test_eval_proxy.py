"""The eval's recording proxy passes a harness's closed connection on to the model server at once,
as a direct connection would, even while the server is still silent (processing a prompt)."""

from __future__ import annotations

import socket
import threading
import time

from eval.proxy import RecordingProxy


class SilentUpstream:
    """Accepts one request and never answers; ``closed`` is set when the caller hangs up."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"
        self.received = threading.Event()
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self._listener.accept()
        with conn:
            conn.recv(65536)
            self.received.set()
            while conn.recv(65536):
                pass
            self.closed.set()


def test_a_harness_that_hangs_up_before_the_first_byte_frees_the_server_at_once() -> None:
    upstream = SilentUpstream()
    with RecordingProxy(upstream.url) as proxy:
        harness = socket.create_connection(("127.0.0.1", proxy.port))
        body = b'{"model": "m", "stream": true}'
        harness.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        assert upstream.received.wait(10)
        time.sleep(0.3)
        assert not upstream.closed.is_set()  # held open while the harness waits
        harness.close()
        assert upstream.closed.wait(5), "the server was left processing a request nobody waits for"
