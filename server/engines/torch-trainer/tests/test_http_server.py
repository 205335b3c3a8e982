import json
import threading
import unittest
import urllib.error
import urllib.request

from agentjet_trainer import PROTOCOL_HEADER
from agentjet_trainer.http_server import make_server
from tests.backend_double import FakeBackendDouble

SAMPLE = {"token_ids": [1, 2, 3], "loss_mask": [0, 1, 1], "logprobs": [0, -1, -1], "advantage": 2, "weight": 0.5}


class HttpServerTest(unittest.TestCase):
    def setUp(self):
        self.backend = FakeBackendDouble()
        self.server = make_server(self.backend, "127.0.0.1", 0, api_key=None)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def tearDown(self):
        self.backend.gate.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"content-type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=10) as res:
                return res.status, json.loads(res.read()), res.headers.get(PROTOCOL_HEADER)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()), e.headers.get(PROTOCOL_HEADER)

    def test_status_and_a_step(self):
        status, body, header = self.call("GET", "/v1/status")
        self.assertEqual((status, header), (200, "1"))
        self.assertEqual(body, {"protocol": 1, "version": 0, "mode": "lora", "model": "double", "busy": False, "steps": 0, "tokens_trained": 0})
        status, body, _ = self.call("POST", "/v1/train_step", {"expected_version": 0, "samples": [SAMPLE]})
        self.assertEqual(status, 200)
        self.assertEqual(body["version"], 1)
        self.assertEqual(body["metrics"]["tokens"], 2)

    def test_errors_have_the_protocol_shape(self):
        status, body, _ = self.call("POST", "/v1/train_step", {"expected_version": 0, "samples": [{**SAMPLE, "loss_mask": [0, 1]}]})
        self.assertEqual(status, 400)
        self.assertEqual(body["error"]["param"], "samples.0.loss_mask")
        status, body, _ = self.call("POST", "/v1/train_step", {"expected_version": 5, "samples": [SAMPLE]})
        self.assertEqual((status, body["error"]["code"]), (409, "version_conflict"))
        status, body, _ = self.call("POST", "/v1/publish", {"version": 1})
        self.assertEqual(status, 409)
        status, body, _ = self.call("POST", "/v1/load", {"dir": "/nope"})
        self.assertEqual((status, body["error"]["code"]), (404, "not_found"))
        status, body, _ = self.call("GET", "/v1/status", headers={PROTOCOL_HEADER: "2"})
        self.assertEqual(status, 400)

    def test_a_second_step_while_one_runs_is_busy(self):
        self.backend.gate.clear()
        results = []
        t = threading.Thread(target=lambda: results.append(self.call("POST", "/v1/train_step", {"expected_version": 0, "samples": [SAMPLE]})))
        t.start()
        while not self.call("GET", "/v1/status")[1]["busy"]:
            pass
        status, body, _ = self.call("POST", "/v1/train_step", {"expected_version": 0, "samples": [SAMPLE]})
        self.assertEqual((status, body["error"]["code"]), (409, "busy"))
        self.backend.gate.set()
        t.join()
        self.assertEqual(results[0][0], 200)
        self.assertEqual(self.backend.version, 1)

    def test_a_step_sent_again_gets_its_first_answer(self):
        step = {"expected_version": 0, "samples": [SAMPLE], "step_id": "batch-a"}
        first = self.call("POST", "/v1/train_step", step)
        self.assertEqual(first[0], 200)
        # The client lost that answer (a timeout) and sends the step again: answered, not applied twice.
        self.assertEqual(self.call("POST", "/v1/train_step", step)[:2], first[:2])
        self.assertEqual((self.backend.version, self.backend.steps), (1, 1))
        status, body, _ = self.call("POST", "/v1/train_step", {**step, "step_id": "batch-b"})
        self.assertEqual((status, body["error"]["code"]), (409, "version_conflict"))
        status, body, _ = self.call("POST", "/v1/train_step", {**step, "step_id": "bad id"})
        self.assertEqual((status, body["error"]["param"]), (400, "step_id"))
        # Loaded weights: the remembered answer no longer holds.
        self.call("POST", "/v1/save", {"dir": "/c"})
        self.call("POST", "/v1/load", {"dir": "/c"})
        self.assertEqual(self.call("POST", "/v1/train_step", step)[1]["error"]["code"], "version_conflict")

    def test_save_then_load(self):
        self.call("POST", "/v1/train_step", {"expected_version": 0, "samples": [SAMPLE]})
        self.assertEqual(self.call("POST", "/v1/save", {"dir": "/c"})[1], {"dir": "/c", "version": 1})
        self.call("POST", "/v1/train_step", {"expected_version": 1, "samples": [SAMPLE]})
        self.assertEqual(self.call("POST", "/v1/load", {"dir": "/c"})[1], {"dir": "/c", "version": 1})


if __name__ == "__main__":
    unittest.main()
