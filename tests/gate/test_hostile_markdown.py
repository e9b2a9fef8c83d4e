"""URLs, ``www.`` names and e-mail addresses in report text never become links in GitHub markdown.

A CI job summary is rendered by GitHub's cmark-gfm with its autolink extension, which links
``http(s)://`` and ``ftp://`` URLs and ``www.`` names as it reads them, and e-mail addresses
(``a@b.c``, ``mailto:``, ``xmpp:``) in each text node afterwards. The check's markdown and
the notebook sections' markdown cells are rendered here by ``cmarkgfm`` (bindings to
GitHub's own cmark-gfm, the [test] extra): for hostile text in every untrusted field the
HTML holds no ``<a``, and the text still reads the same.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import gate_pairs as gp
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.gate.markdown import md
from heta_nb.notebook import md_escape

cmarkgfm = pytest.importorskip("cmarkgfm", reason="needs cmarkgfm (the [test] extra)")
from cmarkgfm.cmark import Options  # noqa: E402

LINKS = [
    "http://evil.example/x",
    "https://evil.example/a?b=c#d",
    "HTTPS://EVIL.EXAMPLE",
    "ftp://files.example/f",
    "www.evil.example",
    "WWW.Evil.Example/path",
    "(www.paren.example)",
    "*www.star.example*",
    "_http://under.example_",
    "~https://tilde.example~",
    "<http://angle.example>",
    "[x](http://md.example)",
    "user@mail.example",
    "first.last+tag@sub.mail.example",
    "mailto:someone@mail.example",
    "xmpp:chat@jabber.example/res",
    "a@b.c@d.example",
    "@octocat",
    "http://a.example:8080/p:q",
    "www.a@b.example",
    "x-y_z@dash-ed.sub_domain.example",
    "v@1.5",
]
HOSTILE = " ".join(LINKS)
"""One string, 22 would-be links (GitHub linked 63 from one such string in the audit)."""


def gfm(markdown: str) -> str:
    """The HTML GitHub renders (raw HTML kept, as a job summary keeps ``<details>``)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def links(rendered: str) -> list[str]:
    return re.findall(r"<a\b[^>]*>", rendered)


def visible(rendered: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


@pytest.mark.hostile
def test_the_hostile_string_is_linked_when_not_escaped() -> None:
    """The oracle works: cmark-gfm links the raw string (so zero links below means something)."""
    assert len(links(gfm(HOSTILE))) >= 15


@pytest.mark.hostile
@pytest.mark.parametrize("escape", [md, md_escape], ids=["gate-md", "notebook-md_escape"])
@pytest.mark.parametrize("text", LINKS)
def test_each_autolink_form_stays_text(escape: Any, text: str) -> None:
    rendered = gfm(escape(text))
    assert links(rendered) == [], rendered
    assert visible(rendered).strip() == text  # the same text, not a link


def _pair(names: bool) -> tuple[heta_nb.EvaluationReport, heta_nb.EvaluationReport]:
    """A regression with the hostile string in every case's id, query and error, the report
    ids, KB and benchmark names; with ``names`` in the modes and metric names too."""
    base = gp.base_dict(40)
    for result in base["case_results"]:
        result["case_id"] = f"{HOSTILE} {result['case_id']}"
        result["query"] = f"{HOSTILE} {result['query']}"
        if names:
            result["query_mode"] = f"{HOSTILE} {result['query_mode']}"
            for score in result["scores"]:
                score["name"] = f"{HOSTILE} {score['name']}"
    base["knowledge_base_name"] = HOSTILE
    base["benchmark"]["name"] = HOSTILE
    new = gp.degraded(base, by=0.3, report_id="new " + HOSTILE)
    failed = new["case_results"][0]
    failed.update(scores=[], response=None)
    failed["error"] = {"message": HOSTILE, "error_type": "E" + HOSTILE, "retryable": False, "metadata": {}}
    return gp.as_report(new), gp.as_report(base)


@pytest.mark.hostile
@pytest.mark.parametrize("names", [False, True], ids=["ids-queries-errors", "modes-and-metrics-too"])
def test_a_check_summary_holds_no_link_from_any_untrusted_field(names: bool) -> None:
    new, base = _pair(names)
    markdown = heta_nb.check(new, base).to_markdown()
    rendered = gfm(markdown)
    assert links(rendered) == [], links(rendered)[:5]
    shown = visible(rendered)
    assert shown.count(HOSTILE[:40]) >= 6  # shown as text (cut where the summary cuts): ids, queries, names
    assert "<table>" in rendered and "<details>" in rendered  # the summary's own structure still renders
    if not names:
        assert "Flipped cases" in shown and "Errors:" in shown  # case ids, queries and errors are in it


@pytest.mark.hostile
def test_notebook_markdown_cells_hold_no_link() -> None:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["report_id"] = HOSTILE
    data["knowledge_base_name"] = HOSTILE
    for key in ("name", "version", "split", "task_type"):
        data["benchmark"][key] = HOSTILE
    report = heta_nb.load_report(json.dumps(data))
    cells = [cell for cell in heta_nb.sections(report) if cell.cell_type == "markdown"]
    rendered = gfm("\n\n".join(cell.source for cell in cells))
    assert links(rendered) == [], links(rendered)[:5]
    assert visible(rendered).count(HOSTILE[:40]) >= 3
