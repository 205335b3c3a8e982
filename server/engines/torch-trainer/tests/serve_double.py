"""Serves the protocol layer over FakeBackendDouble (no torch), for the TypeScript client's cross-language test.

Prints `listening <port>` once ready; stops when stdin closes.
"""

import sys
import threading

from agentjet_trainer.http_server import make_server
from tests.backend_double import FakeBackendDouble

server = make_server(FakeBackendDouble(), "127.0.0.1", 0)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(f"listening {server.server_address[1]}", flush=True)
sys.stdin.read()
server.shutdown()
