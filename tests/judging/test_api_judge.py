"""``castregin.api.judge`` against the real chat server of chat_server.py, compared with ``castregin judge``.

The command's files (written by the CLI, read back) are the reference: the API's judgments, labels, qrels
and run log must say what they say, for the same pool, from the same server; the labels themselves are
checked against the server's rule computed from the inputs (``expected_label``), never against castregin.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pandas as pd
import pytest

from castregin import api
from castregin.errors import InputError, InputWarning
from castregin.formats import read_qrels

from .chat_server import serve
from .test_judge import BANK, KEY, POOL, TOPICS, expected_label, inputs, judge_args, keyed, server  # noqa: F401

CRITERIA = ["relevance", "novelty"]
FAST = {"retry_wait": 0.01, "timeout": 2.0, "api_key_env": "CASTREGIN_TEST_KEY"}


@pytest.fixture(scope="module")
def command(inputs, tmp_path_factory):  # noqa: F811 - the fixture imported above
    """What ``castregin judge`` writes for relevance and novelty, undisturbed, read back."""
    from click.testing import CliRunner

    from castregin.cli import main

    running = serve(faults=False)
    out = tmp_path_factory.mktemp("command") / "out"
    try:
        result = CliRunner().invoke(main, judge_args(inputs, running, out, "--criteria", ",".join(CRITERIA),
                                                     "--timeout", "2"),
                                    env={"CASTREGIN_TEST_KEY": KEY}, catch_exceptions=False)
    finally:
        running.shutdown()
    assert result.exit_code == 0, result.stderr
    # The reference is castregin's own output: its labels are checked against the server's rule (which
    # answers every criterion alike) before the API is compared with it.
    expected = {(t, i): expected_label(t, i) for t, items in POOL.items() for i in items}
    for criterion in CRITERIA:
        qrels = read_qrels(out / f"llm_{criterion}.qrel").labels
        got = {(t, i): label for t, items in qrels.items() for i, label in items.items()}
        assert got == {pair: label for pair, label in expected.items() if label is not None}, criterion
    log = json.loads((out / "run_log.json").read_text())
    return {
        "judgments": pd.read_csv(out / "judgments.csv", dtype={**dict.fromkeys(["worker_id", "turn_id", "item_id"],
                                                                             "string"),
                                                               **dict.fromkeys(CRITERIA, "Int64")}),
        "labels": pd.read_csv(out / "labels.csv", dtype={"turn_id": "string", "item_id": "string",
                                                         "criterion": "string", "label": "Int64", "spread": "Int64",
                                                         "samples": "int64", "parsed": "int64", "answers": "string"},
                              keep_default_na=False, na_values={"label": [""], "spread": [""]}),
        "qrels": {c: read_qrels(out / f"llm_{c}.qrel").labels for c in CRITERIA},
        "log": log,
    }


def same_as_command(result: api.JudgeResult, command: dict) -> None:
    pd.testing.assert_frame_equal(result.judgments, command["judgments"])
    pd.testing.assert_frame_equal(result.labels, command["labels"])
    assert {c: q.labels for c, q in result.qrels.items()} == command["qrels"]
    # Through JSON, as the file holds it; this_run is what one invocation did (seconds, requests), and
    # each test has a server of its own (the endpoint's port).
    got = json.loads(json.dumps(result.log))
    assert {k: v for k, v in got.items() if k not in ("this_run", "endpoint")} == {
        k: v for k, v in command["log"].items() if k not in ("this_run", "endpoint")}


def test_the_api_gives_what_the_command_writes(inputs, command, tmp_path, keyed):  # noqa: F811
    running = serve(faults=False)
    try:
        result = api.judge(inputs["pool"], inputs["bank"], inputs["topics"], CRITERIA, model="rule-1",
                           base_url=running.base_url, cache=tmp_path / "cache" / "answers.sqlite", **FAST)
        asked = running.requests
        # Plain data in, the same cache: the same result, and nothing asked again.
        again = api.judge(POOL, BANK, TOPICS, CRITERIA, model="rule-1", base_url=running.base_url,
                          cache=tmp_path / "cache" / "answers.sqlite", **FAST)
        # Only the pairs the relevance qrels lack, of one turn: the command's rows of those pairs.
        with pytest.warns(InputWarning, match=r"^3 pooled turns not in turns left out: 1_1-1, 2_1-1, 2_1-2$"):
            rest = api.judge(POOL, BANK, TOPICS, CRITERIA, model="rule-1", base_url=running.base_url,
                             cache=tmp_path / "cache" / "answers.sqlite", only_unjudged=result.qrels["relevance"],
                             turns=["1_1-2", "9_9-9"], **FAST)
    finally:
        running.shutdown()
    same_as_command(result, command)
    same_as_command(again, command)
    assert result.log["endpoint"] == running.base_url
    assert asked == 32 and running.requests == 32 and again.log["this_run"]["from_cache"] == 32
    # Q07 rambles: answered, no label, so no judgments row; in labels.csv with "-" for its one sample.
    labels = command["labels"]
    unjudged = labels[(labels["turn_id"] == "1_1-2") & (labels["item_id"] == "Q07")].reset_index(drop=True)
    assert len(unjudged) == 2 and list(unjudged["answers"]) == ["-", "-"]
    pd.testing.assert_frame_equal(rest.labels, unjudged)
    assert rest.judgments.empty and list(rest.judgments.columns) == list(command["judgments"].columns)
    assert rest.log["pairs"] == 1 and rest.log["pairs_already_judged"] == 3 and rest.log["this_run"]["requests"] == 0
    # The oracle: the server's rule from the inputs (unparseable answers are <NA>, and in no qrels).
    expected = {(t, i): expected_label(t, i) for t, items in POOL.items() for i in items}
    assert result.qrels["relevance"].labels == {
        t: {i: label for (tt, i), label in expected.items() if tt == t and label is not None} for t in POOL}
    relevance = {(r.turn_id, r.item_id): (None if pd.isna(r.relevance) else int(r.relevance))
                 for r in result.judgments.itertuples()}
    assert relevance == {pair: label for pair, label in expected.items() if pair[1] != "Q07" and pair[1] != "Q06"}
    assert set(result.judgments["worker_id"]) == {"llm:rule-1:rubric"}


def test_a_429_with_retry_after_gives_the_same_result(inputs, command, tmp_path, keyed):  # noqa: F811
    limited = serve(faults=True, retry_after="0.05")
    limited.fault_for = lambda key, attempt: "rate_limit" if attempt == 0 else None
    try:
        result = api.judge(inputs["pool"], inputs["bank"], inputs["topics"], CRITERIA, model="rule-1",
                           base_url=limited.base_url, cache=tmp_path / "cache.sqlite", concurrency=8, **FAST)
    finally:
        limited.shutdown()
    same_as_command(result, command)
    assert result.log["this_run"]["failures"] == {"rate_limited": 32} and result.log["this_run"]["requests"] == 64
    assert max(limited.answered.values()) == 1


def test_refusals_are_the_commands(cli, inputs, tmp_path, keyed):  # noqa: F811
    running = serve(faults=False)
    try:
        umbrela = cli(*judge_args(inputs, running, tmp_path / "out", "--criteria", "novelty", "--prompt", "umbrela"))
        with pytest.raises(InputError) as refused:
            api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "novelty", prompt="umbrela", model="rule-1",
                      base_url=running.base_url, cache=tmp_path / "c.sqlite", **FAST)
        samples = cli(*judge_args(inputs, running, tmp_path / "out", "--criteria", "relevance", "--samples", "2"))
        with pytest.raises(InputError) as at_zero:
            api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "relevance", samples=2, model="rule-1",
                      base_url=running.base_url, cache=tmp_path / "c.sqlite", **FAST)
        with pytest.raises(InputError) as over_input:
            api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "relevance", model="rule-1",
                      base_url=running.base_url, cache=inputs["bank"], **FAST)
        with pytest.raises(InputError, match=r"^concurrency: expected an integer 1 to 256, got 0$"):
            api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "relevance", concurrency=0, model="rule-1",
                      base_url=running.base_url, cache=tmp_path / "c.sqlite", **FAST)
    finally:
        running.shutdown()
    assert umbrela.stderr == f"castregin: error: --prompt: {refused.value.problem}\n"
    assert str(refused.value) == f"prompt: {refused.value.problem}"
    assert samples.exit_code == 2 and at_zero.value.problem in " ".join(samples.stderr.split())
    assert at_zero.value.argument == "temperature"
    bank = inputs["bank"]
    assert str(over_input.value) == f"{bank}: refusing to overwrite the input file {bank}; choose another output"
    assert running.requests == 0 and not (tmp_path / "c.sqlite").exists()


def test_the_key_comes_from_the_environment_only_and_is_written_nowhere(inputs, tmp_path, keyed):  # noqa: F811
    assert not any("key" in name and name != "api_key_env" for name in inspect.signature(api.judge).parameters)
    echoing = serve(faults=False)
    try:
        result = api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "relevance", model="rule-1",
                           base_url=echoing.base_url, cache=tmp_path / "cache.sqlite", **FAST)
        echoing.fault_for = lambda key, attempt: "echo_key"
        with pytest.raises(InputError) as refused:
            api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "novelty", model="rule-1",
                      base_url=echoing.base_url, cache=tmp_path / "cache.sqlite", **FAST)
    finally:
        echoing.shutdown()
    assert set(echoing.authorizations) == {f"Bearer {KEY}"}
    assert "HTTP 401" in str(refused.value) and "***" in str(refused.value) and KEY not in str(refused.value)
    shown = result.judgments.to_csv() + result.labels.to_csv() + json.dumps(result.log) + repr(result)
    assert KEY not in shown and "SECRET" not in shown
    assert b"SECRET" not in (tmp_path / "cache.sqlite").read_bytes()


def test_importing_the_api_imports_no_openai():
    code = "import sys, castregin.api; print('openai' in sys.modules, 'castregin.judging.llm' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("name", ["temperature", "timeout", "price_in"])
def test_a_huge_number_is_refused_in_one_line(inputs, tmp_path, keyed, name):  # noqa: F811
    # 10**400 overflows float(): it was an OverflowError out of math.isfinite, not a refusal.
    with pytest.raises(InputError, match=rf"^{name}: expected a finite number .*, got 10+$"):
        api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "relevance", model="rule-1",
                  base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c.sqlite", **{**FAST, name: 10**400})
    assert not (tmp_path / "c.sqlite").exists()


def test_a_timeout_past_a_day_is_refused_by_the_command_too(cli, inputs, server, tmp_path, keyed):  # noqa: F811
    # socket.settimeout(1e300) overflows: the option's maximum is the API's (castregin.limits).
    refused = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance", "--timeout", "1e300"))
    assert refused.exit_code == 2 and "'--timeout'" in refused.stderr and "86400" in refused.stderr
    with pytest.raises(InputError, match=r"^timeout: expected a finite number 0.001 to 86400, got 1e\+300$"):
        api.judge(inputs["pool"], inputs["bank"], inputs["topics"], "relevance", model="rule-1",
                  base_url=server.base_url, cache=tmp_path / "c.sqlite", **{**FAST, "timeout": 1e300})
    assert server.requests == 0


def test_numpy_numbers_are_taken_as_plain_ones(inputs, command, tmp_path, keyed):  # noqa: F811
    import numpy as np

    running = serve(faults=False)
    try:
        result = api.judge(inputs["pool"], inputs["bank"], inputs["topics"], CRITERIA, model="rule-1",
                           base_url=running.base_url, cache=tmp_path / "cache.sqlite",
                           **{**FAST, "concurrency": np.int64(2), "max_retries": np.int64(5),
                              "timeout": np.float64(2.0), "price_in": np.int64(0)})
    finally:
        running.shutdown()
    same_as_command(result, command)


@pytest.mark.parametrize("bad", [{"": "x"}, {"Q 1": "y"}, {"Q01": 3}])
def test_a_dict_bank_is_checked_as_a_bank_file(inputs, server, tmp_path, keyed, bad):  # noqa: F811
    from castregin.formats.submissions import read_bank

    (tmp_path / "bank.json").write_text(json.dumps({**BANK, **bad}))
    with pytest.raises(InputError) as in_file:
        read_bank(tmp_path / "bank.json")
    with pytest.raises(InputError) as in_memory:
        api.judge(POOL, {**BANK, **bad}, TOPICS, "relevance", model="rule-1", base_url=server.base_url,
                  cache=tmp_path / "c.sqlite", **FAST)
    assert str(in_memory.value) == f"bank: {in_file.value.problem}"
    assert server.requests == 0


def test_the_apis_errors_name_its_arguments_not_the_commands_options(cli, inputs, server, tmp_path,  # noqa: F811
                                                                     monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", "sk-caf\u00e9-SECRET")
    with pytest.raises(InputError) as key:
        api.judge(POOL, BANK, TOPICS, "relevance", model="rule-1", base_url=server.base_url,
                  cache=tmp_path / "c.sqlite", **FAST)
    command = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance"))
    assert key.value.argument == "api_key_env" and str(key.value).startswith("api_key_env: the API key in ")
    assert command.stderr == f"castregin: error: --api-key-env: {key.value.problem}\n"
    with pytest.raises(InputError) as umbrela:
        api.judge(POOL, BANK, TOPICS, "novelty", prompt="umbrela", model="rule-1", base_url=server.base_url,
                  cache=tmp_path / "c.sqlite", **FAST)
    assert umbrela.value.argument == "prompt"
    assert server.requests == 0


def test_a_scored_dict_pool_can_be_cut_to_some_turns(inputs, command, tmp_path, keyed):  # noqa: F811
    # A Run made from a dict has no rank column: keeping some of its turns was a KeyError.
    scored = {turn: dict.fromkeys(items, 1.0) for turn, items in POOL.items()}
    running = serve(faults=False)
    try:
        with pytest.warns(InputWarning, match=r"^3 pooled turns not in turns left out"):
            result = api.judge(scored, BANK, TOPICS, CRITERIA, model="rule-1", base_url=running.base_url,
                               cache=tmp_path / "c.sqlite", turns=["1_1-2"], **FAST)
    finally:
        running.shutdown()
    labels = command["labels"]
    pd.testing.assert_frame_equal(result.labels, labels[labels["turn_id"] == "1_1-2"].reset_index(drop=True))


@pytest.mark.parametrize(("pool", "message"), [
    ({"1_1-1": "Q01"}, "turn '1_1-1': expected a list of item ids, got str"),
    ({"1_1-1": ["Q01", 1.5]}, "turn '1_1-1': item id 1.5 is not a string"),
    ({"1_1-1": ["Q01", "Q01"]}, "turn '1_1-1', item 'Q01': given twice"),
])
def test_a_pool_of_item_lists_is_checked_as_a_dict_run_is(tmp_path, keyed, pool, message):  # noqa: F811
    with pytest.raises(InputError, match=rf"^pool: {message}$"):
        api.judge(pool, BANK, TOPICS, "relevance", model="rule-1", base_url="http://127.0.0.1:9/v1",
                  cache=tmp_path / "c.sqlite", **FAST)
    assert not (tmp_path / "c.sqlite").exists()


def test_the_command_checks_its_settings_as_the_api_does(cli, inputs, server, tmp_path, keyed):  # noqa: F811
    empty = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance", "--model", ""))
    with pytest.raises(InputError) as refused:
        api.judge(POOL, BANK, TOPICS, "relevance", model="", base_url=server.base_url, cache=tmp_path / "c.sqlite",
                  **FAST)
    assert str(refused.value) == "model: expected a non-empty string, got ''"
    assert empty.exit_code == 1 and empty.stderr == f"castregin: error: --model: {refused.value.problem}\n"
    assert server.requests == 0


def test_a_criterion_listed_twice_is_one_rule_for_the_api_and_the_commands(
        cli, inputs, server, tmp_path, keyed):  # noqa: F811
    with pytest.raises(InputError) as refused:
        api.judge(POOL, BANK, TOPICS, ["relevance", "relevance"], model="rule-1", base_url=server.base_url,
                  cache=tmp_path / "c.sqlite", **FAST)
    command = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance,relevance"))
    assert str(refused.value) == "criteria: a criterion is listed twice"
    assert command.exit_code == 2 and refused.value.problem in command.stderr
    assert server.requests == 0


SAMPLED = {"samples": 3, "temperature": 0.7, "price_in": 2, "price_out": 10, "max_tokens": 50}


def _check_sampled(judgments: pd.DataFrame, labels: pd.DataFrame, log: dict, running) -> None:
    """Workers, labels and spreads against the server's rule per sample; tokens and cost against its sums."""
    expected = {(f"llm:rule-1:rubric:s{s}", t, i, expected_label(t, i, s))
                for t, items in POOL.items() for i in items for s in range(3) if expected_label(t, i) is not None}
    got = {(r.worker_id, r.turn_id, r.item_id, int(r.relevance)) for r in judgments.itertuples()}
    assert got == expected and len(judgments) == len(expected)
    assert len(labels) == 16
    for row in labels.itertuples():
        answers = [expected_label(row.turn_id, row.item_id, s) for s in range(3)]
        if answers[0] is None:
            assert pd.isna(row.label) and pd.isna(row.spread) and row.parsed == 0 and row.samples == 3
            continue
        # Samples 0 and 2 agree (the seed's parity): the mode is theirs; the spread is max - min.
        assert (row.label, row.spread, row.parsed) == (answers[0], max(answers) - min(answers), 3)
    assert log["complete"] and log["answered"] == log["calls"] == 48
    assert log["parameters"] == {"temperature": 0.7, "max_tokens": 50, "seed": "sample index"}
    assert log["tokens"] == {"prompt": running.prompt_tokens, "completion": running.completion_tokens}
    assert log["cost"]["usd"] == round((running.prompt_tokens * 2 + running.completion_tokens * 10) / 1e6, 6) > 0
    assert running.requests == 48 and max(running.answered.values()) == 1
    assert {(b["temperature"], b["max_tokens"]) for b in running.bodies} == {(0.7, 50)}
    assert sorted({b.get("seed") or 0 for b in running.bodies}) == [0, 1, 2]


def test_samples_prices_and_a_budget_then_resumed_api_and_command(cli, inputs, tmp_path, keyed):  # noqa: F811
    running = serve(faults=False)
    try:
        first = api.judge(POOL, BANK, TOPICS, "relevance", model="rule-1", base_url=running.base_url,
                          cache=tmp_path / "c.sqlite", max_requests=5, **SAMPLED, **FAST)
        assert not first.log["complete"] and first.log["answered"] == 5 and running.requests == 5
        assert first.log["this_run"]["budget_spent"] and first.log["this_run"]["calls_not_sent"] == 43
        resumed = api.judge(POOL, BANK, TOPICS, "relevance", model="rule-1", base_url=running.base_url,
                            cache=tmp_path / "c.sqlite", **SAMPLED, **FAST)
    finally:
        running.shutdown()
    assert resumed.log["this_run"]["from_cache"] == 5 and resumed.log["this_run"]["requests"] == 43
    _check_sampled(resumed.judgments, resumed.labels, resumed.log, running)

    other = serve(faults=False)
    out = tmp_path / "out"
    options = ["--criteria", "relevance", "--samples", "3", "--temperature", "0.7", "--price-in", "2",
               "--price-out", "10", "--max-tokens", "50"]
    try:
        budget = cli(*judge_args(inputs, other, out, *options, "--max-requests", "5"))
        assert budget.exit_code == 0 and "the budget of --max-requests is spent; 43 call(s) not made" in budget.stderr
        again = cli(*judge_args(inputs, other, out, *options))
        assert again.exit_code == 0, again.stderr
    finally:
        other.shutdown()
    command = {
        "judgments": pd.read_csv(out / "judgments.csv", dtype={"worker_id": "string", "turn_id": "string",
                                                               "item_id": "string", "relevance": "Int64"}),
        "labels": pd.read_csv(out / "labels.csv", dtype={"turn_id": "string", "item_id": "string",
                                                         "criterion": "string", "label": "Int64", "spread": "Int64",
                                                         "samples": "int64", "parsed": "int64", "answers": "string"},
                              keep_default_na=False, na_values={"label": [""], "spread": [""]}),
        "log": json.loads((out / "run_log.json").read_text()),
    }
    _check_sampled(command["judgments"], command["labels"], command["log"], other)
    pd.testing.assert_frame_equal(resumed.judgments, command["judgments"])
    pd.testing.assert_frame_equal(resumed.labels, command["labels"])
    assert f"cost ${command['log']['cost']['usd']:.4f}" in again.stderr
