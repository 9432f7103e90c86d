"""The client tells its progress callback of each settled call one at a time, and the cost is one formula."""

from __future__ import annotations

import threading
import time

from castregin.judging.llm import JudgeSettings
from castregin.llm import Client, EndpointSettings, Reply


def test_progress_is_never_told_from_two_threads_at_once(tmp_path):
    """The callback keeps running totals (``tokens += ...``) and a progress bar: called from several worker
    threads at once it would lose counts. Each call holds the callback a moment, so that overlapping calls
    would show."""
    inside = threading.Lock()
    overlaps = []
    told = []

    def progress(reply):
        if not inside.acquire(blocking=False):
            overlaps.append(reply)
            return
        try:
            time.sleep(0.005)
            told.append(reply.prompt_tokens)
        finally:
            inside.release()

    def caller(call):
        return Reply(content="2", refusal=None, finish_reason="stop",
                     prompt_tokens=int(call.messages[0]["content"]), completion_tokens=1)

    settings = EndpointSettings(model="m", base_url="http://127.0.0.1:9/v1", concurrency=4)
    with Client(settings, tmp_path / "cache.sqlite", caller=caller) as client:
        calls = [client.call([{"role": "user", "content": str(i)}]) for i in range(12)]
        answers = client.run(calls, progress=lambda total: progress)
    assert overlaps == []
    assert sorted(told) == list(range(12)) and client.stats.answers == 12 and len(answers) == 12


def test_cost_is_the_price_per_million_tokens():
    settings = JudgeSettings(model="m", base_url="http://x", price_in=0.15, price_out=0.60).check()
    assert settings.cost(2_000_000, 500_000) == 0.15 * 2 + 0.60 * 0.5
    assert JudgeSettings(model="m", base_url="http://x").cost(10**6, 10**6) == 0.0
