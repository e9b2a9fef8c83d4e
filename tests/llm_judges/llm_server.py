"""A small OpenAI-compatible chat-completions server for tests (stdlib only, no network).

``LLMServer(responder)`` listens on ``127.0.0.1`` on a free port and answers ``POST /v1/chat/completions``
with the text ``responder(messages)`` returns, in OpenAI's ``chat.completion`` shape, with deterministic token
counts (whitespace-separated words of all messages' contents, and of the answer). Heta's own client talks to it::

    with LLMServer(lambda messages: "yes") as server:
        model = LanguageModel(model_name="openai/judge", api_base=server.api_base, api_key="test", max_retries=0)
        result = asyncio.run(model.invoke(ModelRequest(prompt="Is the sky blue?")))

It can also misbehave, settable at any time from any thread: ``fail_next`` (429 with ``Retry-After``, 500,
503...), ``delay_s`` (slow answers), ``malformed_next`` (200 OK with unparseable content), and a responder
that raises answers 500 with its message. Only ``POST /v1/chat/completions`` is served (404 JSON otherwise);
no streaming (``"stream": true`` is answered like any request, as one JSON body).

How errors reach the client
---------------------------
Checked here with heta-framework 0.1.2, LiteLLM 1.87.1 and this server (``model_name="openai/..."``, which LiteLLM
serves with the official ``openai`` SDK over httpx), ``max_retries=0``.

``LanguageModel.invoke`` wraps every failure of ``litellm.acompletion`` in heta's
``heta_framework.common.models.language.errors.ModelRequestError`` (message ``"model request failed"``) raised
``from`` the exception LiteLLM raised, so ``cause = exc.__cause__`` is LiteLLM's exception. Heta copies nothing
else onto its own error (no status, no headers): read everything from ``cause``.

- HTTP error status: ``cause.status_code`` (an int: 429, 500, 503, 400...). ``cause`` is a
  ``litellm.exceptions`` class: 429 -> ``litellm.RateLimitError`` (subclass of ``openai.RateLimitError``), 500 ->
  ``litellm.InternalServerError`` (of ``openai.InternalServerError``), 503 -> ``litellm.ServiceUnavailableError``
  (of ``openai.APIStatusError`` only), 400 -> ``litellm.BadRequestError``. All of them are
  ``openai.APIStatusError``. ``cause.response.status_code`` agrees, but ``cause.response`` is a *synthetic*
  ``httpx.Response`` LiteLLM builds: ``cause.response.headers`` is EMPTY. The server's error message is inside
  ``str(cause)`` / ``cause.message``, prefixed (``"litellm.RateLimitError: RateLimitError: OpenAIException -
  <message>"``).
- Retry-After: ``cause.litellm_response_headers`` is the server's real response headers (an ``httpx.Headers``,
  case-insensitive), so ``cause.litellm_response_headers.get("retry-after")`` is the raw header string
  (``"0.1"`` for ``retry_after=0.1``; ``None`` when the server sent none). Parse it yourself (seconds, possibly
  fractional, or an HTTP date); do not reuse ``litellm.utils._get_retry_after_from_exception_header`` (the
  Router's helper), which does ``int(value)`` and so returns -1 for ``"0.1"``. Further down the chain
  (``__cause__``/``__context__``: LiteLLM's ``OpenAIError``, then ``openai.RateLimitError``, then
  ``httpx.HTTPStatusError``) the ``openai`` error's ``.response`` is the real ``httpx.Response`` with
  ``.headers["retry-after"]`` too, but ``cause.litellm_response_headers`` is the direct path.
- Timeout (``request_timeout`` shorter than the answer): ``cause`` is ``litellm.Timeout``
  (``litellm.exceptions.Timeout``, a subclass of ``openai.APITimeoutError`` and so of
  ``openai.APIConnectionError``), raised after about ``request_timeout`` seconds, with ``cause.status_code == 408``
  set by LiteLLM (nothing came from the server), ``cause.litellm_response_headers is None`` and no ``.response``
  attribute. Detect it with ``isinstance(cause, litellm.Timeout)`` (or ``openai.APITimeoutError``), not by the
  408, which a server could send as well. Deeper in the chain: ``openai.APITimeoutError``, ``httpx.ReadTimeout``.
- Retries heta already gets: with ``max_retries >= 1`` LiteLLM hands ``num_retries`` to the ``openai`` SDK as its
  ``max_retries``, and the SDK retries 429 and 5xx itself, honouring ``Retry-After`` (measured: ``retry_after=1.5``
  -> the call took 1.51 s, ``3`` -> 3.03 s, none -> about 0.4 s of backoff; 2 requests reached the server each
  time). So with ``max_retries=0`` the first 429 reaches the caller as above; with ``N`` it does only
  after ``N + 1`` failed requests.
- A 200 OK with unparseable content is not an error to the client: ``invoke`` returns it as ``result.text``
  (heta raises ``ModelResponseError`` only when a ``response_schema`` was asked for and the text is not JSON).
- LiteLLM prints "Give Feedback / Get Help..." to stdout for each failed call unless
  ``litellm.suppress_debug_info = True``; and each new event loop (each ``asyncio.run``) after a successful call
  makes LiteLLM drop the previous loop's pending success-logging coroutines, which Python reports as
  ``RuntimeWarning: coroutine 'Logging.async_success_handler' was never awaited`` (harmless here).

The exact checks live in ``test_llm_server.py`` next to this module, so a LiteLLM upgrade that moves any of
these breaks a test instead of the judges.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

CHAT_PATH = "/v1/chat/completions"

_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", None),
    408: ("timeout", None),
    429: ("requests", "rate_limit_exceeded"),
}


def count_words(content: Any) -> int:
    """Whitespace-separated words in a message's content (a string, or OpenAI content parts)."""
    if isinstance(content, str):
        return len(content.split())
    if isinstance(content, list):
        return sum(count_words(part.get("text", "")) for part in content if isinstance(part, dict))
    return 0


def error_body(status: int, message: str) -> str:
    """An OpenAI-style JSON error body for ``status``."""
    kind, code = _ERROR_KINDS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


class LLMServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, answering with ``responder(messages)``."""

    def __init__(self, responder: Callable[[list[dict]], str], *, model: str = "judge-test") -> None:
        """``responder`` gets each request's ``messages`` and returns the assistant text; ``model`` is the
        answer's model name when a request names none."""
        self.responder = responder
        self.model = model
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._calls = 0
        self._delay_s = 0.0
        self._fail_n = 0
        self._fail: tuple[int, float | None, str | None] = (429, None, None)
        self._malformed_n = 0
        self._malformed_text = ""
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------

    def start(self) -> LLMServer:
        """Bind a free port on 127.0.0.1 and serve from a daemon thread; returns ``self``."""
        if self._httpd is not None:
            raise RuntimeError("LLMServer already started")
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="llm-test-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (a slow answer in progress is cut short)."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on (after ``start``)."""
        if self._httpd is None:
            raise RuntimeError("LLMServer not started")
        return int(self._httpd.server_address[1])

    @property
    def api_base(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for a client's ``api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- failure modes --------------------------------------------------------------------------------------

    @property
    def calls(self) -> int:
        """Chat-completion requests received so far, failed ones included."""
        with self._lock:
            return self._calls

    @property
    def delay_s(self) -> float:
        """Seconds every answer (failures included) waits before it is sent."""
        with self._lock:
            return self._delay_s

    @delay_s.setter
    def delay_s(self, value: float) -> None:
        with self._lock:
            self._delay_s = float(value)

    def fail_next(
        self, n: int, *, status: int = 429, retry_after: float | None = None, body: str | None = None
    ) -> None:
        """Answer the next ``n`` chat requests with ``status`` and an OpenAI-style JSON error (or ``body``),
        with a ``Retry-After: <retry_after>`` header when ``retry_after`` is given."""
        with self._lock:
            self._fail_n = n
            self._fail = (status, retry_after, body)

    def malformed_next(self, n: int, text: str = "this is not JSON {") -> None:
        """Answer the next ``n`` successful chat requests with 200 OK whose content is ``text``."""
        with self._lock:
            self._malformed_n = n
            self._malformed_text = text

    # -- answering ------------------------------------------------------------------------------------------

    def _record(self, body: dict) -> tuple[int, float, tuple[int, float | None, str | None] | None, str | None]:
        """Count and store one request; decide its failure mode (consuming the counters)."""
        with self._lock:
            self._calls += 1
            self.requests.append(body)
            fail = malformed = None
            if self._fail_n > 0:
                self._fail_n -= 1
                fail = self._fail
            elif self._malformed_n > 0:
                self._malformed_n -= 1
                malformed = self._malformed_text
            return self._calls, self._delay_s, fail, malformed

    def _answer(self, body: dict) -> tuple[int, dict[str, str], str]:
        """(status, extra headers, body) for one parsed chat-completion request."""
        number, delay, fail, malformed = self._record(body)
        if delay > 0:
            self._stopping.wait(delay)
        if fail is not None:
            status, retry_after, raw = fail
            headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
            return status, headers, raw if raw is not None else error_body(status, f"test server: HTTP {status}")
        messages = body.get("messages") or []
        if malformed is not None:
            text = malformed
        else:
            try:
                text = self.responder(messages)
            except Exception as exc:  # noqa: BLE001 - any responder failure becomes a 500
                return 500, {}, error_body(500, f"responder failed: {type(exc).__name__}: {exc}")
        prompt_tokens = sum(count_words(m.get("content")) for m in messages if isinstance(m, dict))
        completion_tokens = count_words(text)
        answer = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return 200, {}, json.dumps(answer)


def _make_handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive; every answer carries Content-Length
        timeout = 30  # an idle keep-alive connection's thread ends after this

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            """Silence the default per-request logging to stderr."""

        def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                self.close_connection = True

        def _read_body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _not_found(self) -> None:
            self._read_body()
            self._send(404, error_body(404, f"Invalid URL ({self.command} {self.path})"))

        def do_POST(self) -> None:
            if self.path.split("?", 1)[0].rstrip("/") != CHAT_PATH:
                self._not_found()
                return
            raw = self._read_body()
            try:
                body = json.loads(raw or b"null")
            except ValueError as exc:
                self._send(400, error_body(400, f"request body is not JSON: {exc}"))
                return
            if not isinstance(body, dict):
                self._send(400, error_body(400, "request body must be a JSON object"))
                return
            status, headers, answer = server._answer(body)
            self._send(status, answer, headers)

        do_GET = do_PUT = do_DELETE = do_PATCH = _not_found

    return Handler
