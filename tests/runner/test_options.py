"""query_options: passed to the KB, recorded with secrets redacted."""

from __future__ import annotations

from typing import Any

import pytest
from runner_support import exact_kb, run_toy

from heta_nb.runner.redaction import REDACTED, is_secret_key, recorded_options


class OptionsKB:
    """Answers like ``exact_kb`` and keeps the options each query got."""

    name = "toy kb"

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> Any:
        self.seen.append(options)
        return exact_kb(query, mode=mode, top_k=top_k)


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "OPENAI_API_KEY",
        "apikey",
        "password",
        "db_passwd",
        "hf_token",
        "accessToken",
        "client_secret",
        "credentials",
        "Authorization",
        "private-key",
        "token",
        "refresh_token",
        "token_secret",
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert is_secret_key(name)


@pytest.mark.parametrize(
    "name",
    [
        "max_tokens",
        "top_k",
        "sort_key",
        "author",
        "keywords",
        "filters",
        "alpha",
        "",
        "token_count",
        "document_token_counts_artifact",
    ],
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_key(name)


def test_the_report_records_the_options_with_secrets_redacted_while_the_kb_gets_them_all() -> None:
    options = {"alpha": 0.5, "llm": {"model": "m", "api_key": "sk-live-123"}, "filters": [{"token": "t"}]}
    kb = OptionsKB()
    report = run_toy(kb=kb, query_options=options)
    recorded = report.to_dict()["metadata"]["heta_nb"]["query_options"]
    assert recorded == {"alpha": 0.5, "llm": {"model": "m", "api_key": REDACTED}, "filters": [{"token": REDACTED}]}
    assert "sk-live-123" not in report.to_json()
    assert kb.seen and all(seen == options for seen in kb.seen)  # the KB still gets the real values
    assert recorded_options({}) == {} and run_toy().metadata["heta_nb"]["query_options"] == {}


def test_the_report_view_shows_the_options() -> None:
    from heta_nb.render import render_report_html

    report = run_toy(query_options={"alpha": 0.25, "api_key": "sk-live-123"})
    html = render_report_html(report)
    assert "query_options" in html and "alpha: 0.25" in html and "&lt;redacted&gt;" in html
    assert "sk-live-123" not in html
