"""A byte pump between two sockets, used to reach the accounting proxy from a sandbox that has no
network: the runner exposes the proxy on a Unix socket bind-mounted into the sandbox, and
``python -m d2k_agent.forward PORT SOCKET`` inside the sandbox listens on the sandbox's own
127.0.0.1:PORT and pumps each connection to that socket."""

from __future__ import annotations

import socket
import sys
import threading


def _pump(a: socket.socket, b: socket.socket) -> None:
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listener: socket.socket, connect) -> None:
    """Accept forever; each connection is joined to a fresh ``connect()`` socket."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = connect()
        except OSError:
            client.close()
            continue
        for x, y in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(x, y), daemon=True).start()


def unix_to_tcp(sock_path: str, port: int) -> socket.socket:
    """Runner side: a Unix socket whose connections go to the proxy on 127.0.0.1:port."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, lambda: socket.create_connection(("127.0.0.1", port))), daemon=True).start()
    return listener


def main(argv: list[str]) -> None:
    port, sock_path = int(argv[0]), argv[1]
    listener = socket.create_server(("127.0.0.1", port))

    def connect() -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        return s

    serve(listener, connect)


if __name__ == "__main__":
    main(sys.argv[1:])
