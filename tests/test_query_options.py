"""query_options are part of a run's settings: recorded (secrets redacted), checked on resume and merge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, cancel_after, exact_kb, run_toy, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.runner import RunError
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
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert is_secret_key(name)


@pytest.mark.parametrize("name", ["max_tokens", "top_k", "sort_key", "author", "keywords", "filters", "alpha", ""])
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


def test_resume_with_other_options_is_refused_other_secrets_are_not(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    _, partial = cancel_after(
        2,
        store=store,
        kb=SlowKB(0.05),
        report_id="r",
        cases=30,
        concurrency=1,
        query_options={"alpha": 0.5, "api_key": "old key"},
    )
    settings = dict(benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="r", resume=True)
    with pytest.raises(RunError, match=r"cannot resume report 'r': its checkpoint has query_options=\{'alpha': 0.5"):
        run_toy(**settings, query_options={"alpha": 0.75, "api_key": "old key"})
    with pytest.raises(RunError, match="its checkpoint has query_options"):
        run_toy(**settings)  # no options at all is other options too
    with pytest.raises(RunError, match="its checkpoint has trace=False, this run has True"):  # traced and not
        run_toy(**settings, query_options={"alpha": 0.5, "api_key": "k"}, trace=True)
    done = run_toy(**settings, query_options={"alpha": 0.5, "api_key": "a rotated key"})
    assert len(done.case_results) == 60 > len(partial.case_results)
    # the checkpoint is gone with the complete report; the stored report's settings are checked instead
    with pytest.raises(RunError, match="its stored report has query_options"):
        run_toy(**settings, query_options={"alpha": 0.75})


def test_merge_refuses_shards_queried_with_other_options() -> None:
    shards = [run_toy(shard=(i, 3), query_options={"alpha": 0.5, "api_key": f"key {i}"}) for i in range(3)]
    merged = heta_nb.merge_reports(shards)  # another API key per shard is the same setting
    assert merged.metadata["heta_nb"]["query_options"] == {"alpha": 0.5, "api_key": REDACTED}
    odd = run_toy(shard=(1, 3), query_options={"alpha": 0.9})
    with pytest.raises(ValueError, match="different query_options"):
        heta_nb.merge_reports([shards[0], odd, shards[2]])
