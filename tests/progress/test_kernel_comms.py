"""The widget's Cancel button during a blocking ``heta_nb.evaluate()``, in a real ipykernel.

A client plays the frontend: it queues two more cells behind the blocking one (as "Run
All" does), clicks Cancel (a ``comm_msg`` to the button's comm), and checks that the run
stopped early with a partial report and that the queued cells still ran, after it, in order.
"""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

pytest.importorskip("ipykernel")

SLOW_RUN = """
import time
import heta_nb
from heta_nb import demo

def slow_kb(query, top_k=5):
    time.sleep(0.02)
    return []

print("started")
report = heta_nb.evaluate(demo.load_benchmark(), kb=slow_kb, evaluators=["recall@5"], store=None,
                          knowledge_base_name="slow", concurrency=1, progress="widget")
print("status:", report.metadata["heta_nb"]["status"], len(report.case_results), "of", len(demo.load_benchmark().cases))
"""


@pytest.fixture
def kernel() -> Any:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _messages(client: Any, until: float) -> Any:
    while time.monotonic() < until:
        try:
            yield client.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            continue


def _model(message: dict[str, Any], name: str) -> str | None:
    """The comm id of a widget model of this kind being opened, else None."""
    if message["msg_type"] != "comm_open":
        return None
    state = message["content"].get("data", {}).get("state", {})
    return message["content"]["comm_id"] if state.get("_model_name") == name else None


@pytest.mark.slow
def test_cancel_during_a_blocking_evaluate_and_the_queued_cell_runs_after(kernel: Any) -> None:
    blocking = kernel.execute(SLOW_RUN)
    # "Run All": two more cells wait in the kernel's queue (the kernel's reader may already hold
    # the first when the blocking call starts; the pump takes the rest and must keep their order)
    queued_first = kernel.execute("print('first queued cell ran')")
    queued = kernel.execute("print('queued cell ran')")
    button = bar = None
    printed: list[tuple[str, str]] = []
    progressed = 0
    for message in _messages(kernel, time.monotonic() + 60):
        parent = message["parent_header"].get("msg_id")
        button = button or _model(message, "ButtonModel")
        bar = bar or _model(message, "IntProgressModel")
        if message["msg_type"] == "stream":
            printed.append((parent, message["content"]["text"]))
        if message["msg_type"] == "comm_msg" and message["content"]["comm_id"] == bar:
            progressed = message["content"]["data"].get("state", {}).get("value", progressed)
        if button and progressed >= 5:  # the run is under way: some cases finished
            break
    assert button is not None and progressed >= 5
    click = kernel.session.msg(
        "comm_msg", {"comm_id": button, "data": {"method": "custom", "content": {"event": "click"}}}
    )
    # as JupyterLab 4.6 sends it: with the subshell id of its comms (the kernel routes it to the
    # main shell, where the widget was made)
    click["header"]["subshell_id"] = "c0ffee00-0000-4000-8000-000000000000"
    kernel.session.send(kernel.shell_channel.socket, click)
    clicked = time.monotonic()
    finished = None
    for message in _messages(kernel, time.monotonic() + 60):
        parent = message["parent_header"].get("msg_id")
        if message["msg_type"] == "stream":
            printed.append((parent, message["content"]["text"]))
            if "status:" in message["content"]["text"]:
                finished = time.monotonic()
        if message["msg_type"] == "status" and parent == queued and message["content"]["execution_state"] == "idle":
            break
    texts = "".join(text for _, text in printed)
    assert "status: cancelled" in texts, texts
    done = int(texts.split("status: cancelled ")[1].split()[0])
    assert 0 < done < 95  # stopped early, with the finished cases
    assert finished is not None and finished - clicked < 5.0  # at once, not after the whole run
    order = [parent for parent, _ in printed]
    last_of_blocking = max(i for i, p in enumerate(order) if p == blocking)
    assert last_of_blocking < order.index(queued_first) < order.index(queued)  # all ran, in order
    assert "first queued cell ran" in texts and "\nqueued cell ran" in texts
