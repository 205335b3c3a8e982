import threading

from agentjet_trainer.protocol import ProtocolError


class FakeBackendDouble:
    """TEST DOUBLE of TorchBackend: bumps the version and counts tokens, so the HTTP layer runs without torch."""

    mode = "lora"
    model_name = "double"

    def __init__(self):
        self.version = 0
        self.steps = 0
        self.tokens_trained = 0
        self.gate = threading.Event()
        self.gate.set()
        self.saved = {}

    def train_step(self, step):
        self.gate.wait()
        tokens = sum(sum(s.loss_mask) for s in step.samples)
        self.version += 1
        self.steps += 1
        self.tokens_trained += tokens
        return {"loss": 0.0, "tokens": tokens, "grad_norm": 0.0, "clip_fraction": 0.0, "duration_ms": 0.0}

    def publish(self, request):
        return {"mode": "lora", "version": self.version, "adapter_name": request.adapter_name or "double-v", "adapter_path": "/p"}

    def save(self, directory):
        self.saved[directory] = self.version

    def load(self, directory):
        if directory not in self.saved:
            raise ProtocolError(404, "not_found", "no checkpoint", "dir")
        self.version = self.saved[directory]
