"""A loopback HTTP server that answers with recorded wire responses, and the AWS event-stream encoder.

Provider adapters are tested through their real clients (botocore, http.client) against this server,
so request signing, framing and parsing are the code paths a real call takes; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import binascii
import json
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).with_name("recordings")


def recording(name: str) -> Any:
    """A JSON recording, parsed."""
    return json.loads((RECORDINGS / name).read_text())


@dataclass
class Reply:
    """One HTTP response to send."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass
class Received:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class WireServer:
    """Serves queued ``replies`` in order (HTTP/1.0: one response per connection), records ``received``."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.received: list[Received] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.received.append(Received("POST", self.path, dict(self.headers.items()), body))
                reply = server.replies.pop(0) if server.replies else Reply(500, {}, b'{"message": "no reply queued"}')
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep the test output clean

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        # A short poll interval: shutdown() waits for the serving loop's next poll.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


# -- AWS event-stream framing (application/vnd.amazon.eventstream) -------------------------------

_STRING = 7


def _header(name: str, value: str) -> bytes:
    encoded_name, encoded_value = name.encode(), value.encode()
    return (
        struct.pack("!B", len(encoded_name)) + encoded_name
        + struct.pack("!BH", _STRING, len(encoded_value)) + encoded_value
    )


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude (total length, headers length, CRC32), headers, payload, CRC32."""
    encoded_headers = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack("!II", 12 + len(encoded_headers) + len(payload) + 4, len(encoded_headers))
    message = prelude + struct.pack("!I", binascii.crc32(prelude)) + encoded_headers + payload
    return message + struct.pack("!I", binascii.crc32(message))


def event_stream(events: list[dict[str, Any]]) -> bytes:
    """Recorded Converse events (``{"<eventType>": payload}``) as the bytes Bedrock sends."""
    return b"".join(
        frame(
            {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"},
            json.dumps(payload).encode(),
        )
        for event in events
        for event_type, payload in event.items()
    )


def exception_frame(exception_type: str, message: str) -> bytes:
    """An error raised mid-stream, as Bedrock sends it (``:message-type: exception``)."""
    return frame(
        {":exception-type": exception_type, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


def bedrock_stream_reply(events: list[dict[str, Any]], tail: bytes = b"") -> Reply:
    return Reply(
        200,
        {"Content-Type": "application/vnd.amazon.eventstream", "x-amzn-RequestId": "0b4f1e0c-test"},
        event_stream(events) + tail,
    )


def json_reply(recorded: dict[str, Any]) -> Reply:
    """A recorded error response: ``{"status": .., "headers": {..}, "body": {..}}``."""
    return Reply(recorded["status"], recorded["headers"], json.dumps(recorded["body"]).encode())
