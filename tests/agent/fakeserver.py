"""A scripted OpenAI-compatible chat server on 127.0.0.1 for driving the agent through litellm's
real HTTP path: each POST to /v1/chat/completions (or /chat/completions) gets the next canned
answer of a script, and every request body is kept for the test to inspect.

    with FakeServer([reply(calls=[("write_code", {"code": "ret"})]), reply("done")]) as srv:
        ... RunSettings(model="openai/m", api_base=srv.url, ...)
        srv.requests[1]["messages"]

A script entry is an Answer (status, body, headers, delay), a dict (a 200 JSON body), or a
callable(request_body, index) -> Answer/dict. Past the script's end the server answers 500
"script exhausted", so a run that asks for more than the test planned ends (with a summary) instead
of hanging. The server stops itself after `lifetime` seconds whatever the test does.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # a dict (sent as JSON), str or bytes (sent as they are)
    headers: dict = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a hang past the client's timeout)
    content_type: str = "application/json"


def reply(content: str | None = None, calls=(), *, ids=None, finish_reason=None, reasoning=None,
          raw_arguments: bool = False, usage=(100, 20)) -> dict:
    """A chat.completion body. `calls`: (name, arguments) pairs; arguments are JSON-encoded unless
    raw_arguments (then they are sent as given: a malformed text, or an object instead of a string).
    `ids`: the tool-call ids (default call_0, call_1, … — numbered per message, as some servers do)."""
    tool_calls = []
    for i, (name, args) in enumerate(calls):
        tool_calls.append({"id": (ids[i] if ids else f"call_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args if raw_arguments else json.dumps(args)}})
    msg: dict = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": "m",
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


Entry = Union[Answer, dict, Callable[[dict, int], Union[Answer, dict]]]


class FakeServer:
    def __init__(self, script: list[Entry], lifetime: float = 60.0):
        self.script = list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(Answer(404, {"error": {"message": f"no route {self.path}"}}))
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._send(Answer(400, {"error": {"message": "the request body is not JSON"}}))
                with server._lock:
                    index = len(server.requests)
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                entry = server.script[index] if index < len(server.script) else \
                    Answer(500, {"error": {"message": "script exhausted"}})
                if callable(entry):
                    entry = entry(body, index)
                if isinstance(entry, dict):
                    entry = Answer(200, entry)
                if entry.delay:
                    server._stop.wait(entry.delay)
                self._send(entry)

            def _send(self, a: Answer):
                data = a.body if isinstance(a.body, bytes) else \
                    a.body.encode() if isinstance(a.body, str) else json.dumps(a.body).encode()
                try:
                    self.send_response(a.status)
                    self.send_header("Content-Type", a.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in a.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime, self.close)
        self._timer.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "FakeServer":
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._timer.cancel()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()
