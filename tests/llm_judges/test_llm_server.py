"""The test LLM server, driven through heta-framework's own ``LanguageModel`` (LiteLLM), and the error paths
``llm_server``'s docstring documents ("How errors reach the client")."""

from __future__ import annotations

import asyncio
import http.client
import ipaddress
import json
import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from llm_judges.llm_server import LLMServer

# Each asyncio.run is a new event loop: LiteLLM then drops the last loop's success-logging coroutines (harmless).
pytestmark = pytest.mark.filterwarnings(
    "ignore:coroutine 'Logging.async_success_handler' was never awaited:RuntimeWarning"
)

SYSTEM = "You judge answers strictly."
PROMPT = "Is the sky blue on a clear day?"


def echo_words(messages: list[dict]) -> str:
    """Answers 'verdict: yes' plus the number of messages."""
    return f"verdict: yes ({len(messages)} messages)"


@pytest.fixture
def heta() -> SimpleNamespace:
    """heta-framework's client, request and error types (skips without the [heta] extra)."""
    pytest.importorskip("heta_framework")
    from heta_framework.common.models.language.errors import ModelRequestError
    from heta_framework.common.models.language.model import LanguageModel
    from heta_framework.common.models.language.types import ModelRequest

    return SimpleNamespace(LanguageModel=LanguageModel, ModelRequest=ModelRequest, ModelRequestError=ModelRequestError)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer(echo_words) as s:
        yield s


def model(heta: SimpleNamespace, server: LLMServer, **kwargs: Any) -> Any:
    """A heta LanguageModel on ``server``, no retries unless asked."""
    kwargs.setdefault("max_retries", 0)
    return heta.LanguageModel(model_name="openai/judge-under-test", api_base=server.api_base, api_key="test", **kwargs)


def invoke(heta: SimpleNamespace, lm: Any, prompt: str = PROMPT, system: str | None = SYSTEM) -> Any:
    return asyncio.run(lm.invoke(heta.ModelRequest(prompt=prompt, system_prompt=system)))


def failure(heta: SimpleNamespace, lm: Any) -> BaseException:
    """The ``__cause__`` of the ModelRequestError ``invoke`` raises."""
    with pytest.raises(heta.ModelRequestError) as info:
        invoke(heta, lm)
    assert info.value.__cause__ is not None
    return info.value.__cause__


def post(server: LLMServer, path: str, body: object, conn: http.client.HTTPConnection | None = None) -> tuple:
    """(status, headers, parsed JSON) of one raw POST."""
    conn = conn or http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.headers, json.loads(response.read())


@pytest.mark.heta
def test_a_call_returns_the_responders_text_with_deterministic_usage(heta: SimpleNamespace, server: LLMServer) -> None:
    result = invoke(heta, model(heta, server))

    assert result.text == "verdict: yes (2 messages)"
    assert result.finish_reason == "stop"
    prompt_words = len(SYSTEM.split()) + len(PROMPT.split())  # 4 + 7
    assert (result.token_usage.prompt_tokens, result.token_usage.completion_tokens) == (prompt_words, 4)
    assert result.token_usage.total_tokens == prompt_words + 4
    assert server.calls == 1
    body = server.requests[0]
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
    assert body["model"] == "judge-under-test"
    assert result.raw_response["model"] == "judge-under-test"
    assert result.raw_response["id"] == "chatcmpl-1"


@pytest.mark.heta
def test_429_with_retry_after_reaches_the_caller_with_status_and_header(
    heta: SimpleNamespace, server: LLMServer
) -> None:
    import litellm
    import openai

    server.fail_next(1, status=429, retry_after=0.1)
    cause = failure(heta, model(heta, server))

    assert isinstance(cause, litellm.RateLimitError)
    assert isinstance(cause, openai.RateLimitError)
    assert cause.status_code == 429
    assert cause.litellm_response_headers.get("retry-after") == "0.1"
    assert cause.litellm_response_headers.get("Retry-After") == "0.1"  # httpx.Headers: case-insensitive
    assert "retry-after" not in cause.response.headers  # LiteLLM's synthetic response: not the server's headers
    assert "test server: HTTP 429" in str(cause)
    assert server.calls == 1  # max_retries=0: no retry

    assert invoke(heta, model(heta, server)).text == "verdict: yes (2 messages)"  # only the next one failed
    assert server.calls == 2


@pytest.mark.heta
def test_500_and_503_reach_the_caller_with_their_status(heta: SimpleNamespace, server: LLMServer) -> None:
    import litellm
    import openai

    lm = model(heta, server)
    server.fail_next(1, status=500)
    cause = failure(heta, lm)
    assert isinstance(cause, litellm.InternalServerError)
    assert cause.status_code == 500
    assert cause.litellm_response_headers.get("retry-after") is None

    server.fail_next(1, status=503, retry_after=2)
    cause = failure(heta, lm)
    assert isinstance(cause, litellm.ServiceUnavailableError)
    assert isinstance(cause, openai.APIStatusError)
    assert cause.status_code == 503
    assert cause.litellm_response_headers.get("retry-after") == "2"


@pytest.mark.heta
def test_a_responder_that_raises_answers_500_with_its_message(heta: SimpleNamespace) -> None:
    def broken(messages: list[dict]) -> str:
        raise ValueError("judge exploded")

    with LLMServer(broken) as server:
        cause = failure(heta, model(heta, server))
    assert cause.status_code == 500
    assert "judge exploded" in str(cause)


@pytest.mark.heta
def test_malformed_next_answers_200_with_the_malformed_text(heta: SimpleNamespace, server: LLMServer) -> None:
    lm = model(heta, server)
    server.malformed_next(2)

    first, second, third = (invoke(heta, lm) for _ in range(3))

    assert first.text == second.text == "this is not JSON {"
    assert first.token_usage.completion_tokens == 5
    assert third.text == "verdict: yes (2 messages)"


@pytest.mark.heta
def test_a_slow_answer_takes_delay_s_and_a_short_timeout_raises_litellm_timeout(
    heta: SimpleNamespace, server: LLMServer
) -> None:
    import litellm
    import openai

    server.delay_s = 0.3
    started = time.perf_counter()
    assert invoke(heta, model(heta, server)).text == "verdict: yes (2 messages)"
    assert time.perf_counter() - started >= 0.3

    started = time.perf_counter()
    cause = failure(heta, model(heta, server, request_timeout=0.1))
    elapsed = time.perf_counter() - started
    assert isinstance(cause, litellm.Timeout)
    assert isinstance(cause, openai.APITimeoutError)
    assert cause.status_code == 408  # LiteLLM's, not the server's
    assert cause.litellm_response_headers is None
    assert 0.1 <= elapsed < 0.3
    assert server.calls == 2


@pytest.mark.heta
def test_it_answers_with_no_network(heta: SimpleNamespace, server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection and name lookup but loopback's is refused, and the call still succeeds."""
    assert server.api_base.startswith("http://127.0.0.1:")

    def loopback_only(address: object) -> None:
        host = address[0] if isinstance(address, tuple) else None
        if host is None or not ipaddress.ip_address(host).is_loopback:
            raise OSError(f"network access blocked in this test: {address!r}")

    real_connect, real_connect_ex, real_getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def connect(self: socket.socket, address: object) -> None:
        loopback_only(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        loopback_only(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise socket.gaierror(f"name lookup blocked in this test: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    with pytest.raises(OSError, match="blocked"):  # the guard is live
        socket.create_connection(("203.0.113.1", 443), timeout=1)
    with pytest.raises(OSError, match="blocked"), socket.socket() as raw:
        raw.connect(("203.0.113.1", 443))

    assert invoke(heta, model(heta, server)).text == "verdict: yes (2 messages)"


def test_raw_http_keep_alive_counts_and_404(server: LLMServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    body = {"model": "m", "messages": [{"role": "user", "content": "one two three"}]}

    status, headers, answer = post(server, "/v1/chat/completions", body, conn)
    assert status == 200
    assert answer["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    assert int(headers["Content-Length"]) > 0
    first_socket = conn.sock

    server.fail_next(1, status=429, retry_after=1.5, body='{"error": {"message": "custom"}}')
    status, headers, answer = post(server, "/v1/chat/completions", body, conn)
    assert (status, headers["Retry-After"], answer) == (429, "1.5", {"error": {"message": "custom"}})

    status, _, answer = post(server, "/v1/embeddings", body, conn)
    assert status == 404
    assert set(answer["error"]) >= {"message", "type", "code"}
    assert conn.sock is first_socket  # one kept-alive connection for all three
    conn.close()

    assert server.calls == 2  # the 404 is not a chat completion
    assert server.requests == [body, body]


def test_stop_closes_the_port() -> None:
    server = LLMServer(echo_words).start()
    port = server.port
    server.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
