"""agentjet reference trainer service: trainer protocol v1 (../../trainer/PROTOCOL.md) over torch."""

PROTOCOL_VERSION = 1
PROTOCOL_HEADER = "x-agentjet-trainer-protocol"
