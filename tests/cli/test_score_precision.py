"""One ranking rule in every command: scores compared as doubles (trec_eval-9.0.8), or as 32-bit floats.

The oracles are the two trec_eval 9.0.8 binaries (see trec_eval_precision_oracle.py): the tag
trec_eval-9.0.8 (doubles: castregin's default) and the tag v9.0.8 (floats: ``--score-precision
float``), whose outputs on runs with scores tied as floats only are kept in
tests/cli/data/trec_eval_precision; pytrec_eval, which ranks on floats, is checked to agree with
the second. Every path that evaluates must print their numbers: ``castregin trec_eval`` (every -R
format), and ``evaluate``'s engine in memory, streamed from files, in plain Python for small
files, and trec_eval's rules for the measures the engine lacks; the Python API; and each command
that evaluates must pass the option on.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trec_eval_precision_oracle import (
    BINARIES,
    DATA,
    PREFERENCE_CASES,
    QRELS_OPTIONS,
    QRELS_SEEDS,
    cases,
    kept_output,
    preference_case,
    qrels_case,
    run_binary,
)

import castregin
from castregin import formats
from castregin.evaluation import evaluate as evaluate_module
from castregin.evaluation import plain
from castregin.evaluation import small as small_module
from castregin.evaluation.evaluate import evaluate_file_rows, evaluate_rows
from castregin.evaluation.measures import parse_measures
from castregin.render.trec import trec_eval_value

PRECISIONS = ["double", "float"]
#: The engine's measures, named as trec_eval prints them.
ENGINE_MEASURES = ["P_5", "P_10", "recall_10", "map", "recip_rank", "Rprec", "ndcg", "ndcg_cut_5", "ndcg_cut_10",
                   "success_1"]

def _option(precision: str) -> list[str]:
    # The default is given nowhere: what it is, is what is tested.
    return [] if precision == "double" else ["--score-precision", precision]


def _keyword(precision: str) -> dict:
    return {} if precision == "double" else {"score_precision": precision}


def parse_output(text: bytes) -> dict[tuple[str, str], str]:
    """``{(measure, query): value as printed}`` of a trec_eval output."""
    out = {}
    for line in text.decode().splitlines():
        name, query, value = line.split("\t")
        out[name.strip(), query] = value
    return out


@pytest.fixture(scope="module")
def kept_cases(tmp_path_factory):
    return cases(tmp_path_factory.mktemp("precision"))


def _qrels_cases(kept_cases, options: str):
    return [(name, qrels, run) for name, rel_format, opts, qrels, run in kept_cases
            if rel_format == "qrels" and opts == options]


def test_the_cases_are_listed_and_tell_the_two_binaries_apart(kept_cases):
    listed = [line.split("\t")[0] for line in (DATA / "cases.tsv").read_text().splitlines()]
    assert listed == [name for name, *_ in kept_cases]
    assert len(listed) == len(QRELS_SEEDS) * len(QRELS_OPTIONS) + sum(len(s) for _, s, _ in PREFERENCE_CASES) + 1
    differ = [name for name in listed if kept_output("double", name) != kept_output("float", name)]
    # Nearly every case ranks differently as floats: a test passing on them tells the rules apart.
    assert len(differ) >= 24, differ


# --- castregin trec_eval -------------------------------------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
def test_trec_eval_prints_the_binarys_output(kept_cases, cli, precision):
    for name, rel_format, options, judgments, run in kept_cases:
        result = cli("trec_eval", "-R", rel_format, *options.split(), *_option(precision), judgments, run)
        assert result.exit_code == 0, result.stderr
        assert result.stdout_bytes == kept_output(precision, name), (precision, name)


def test_trec_eval_refuses_an_unknown_precision(kept_cases, cli):
    _, _, _, qrels, run = kept_cases[0]
    result = cli("trec_eval", "--score-precision", "half", qrels, run)
    assert result.exit_code == 2 and "'half' is not one of 'double', 'float'" in result.stderr


# --- evaluate: every path -------------------------------------------------------------------------------------


def _values(rows) -> dict[tuple[str, str], str]:
    return {(measure, turn): trec_eval_value(value) for _, _, measure, turn, value in rows if turn != "all"}


def _expected(kept: dict, measures, turns) -> dict[tuple[str, str], str]:
    return {(m, t): kept[m, t] for m in measures for t in turns}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("options, level", [("-q -m all_trec", 1), ("-q -c -l2 -m all_trec", 2)])
def test_evaluate_engine_paths_print_the_binarys_numbers(kept_cases, monkeypatch, precision, options, level):
    """In memory, in plain Python (read whole and for small files) and streamed: each turn's value is the binary's."""
    for name, qrels_path, run_path in _qrels_cases(kept_cases, options):
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
        kept = parse_output(kept_output(precision, name))
        turns = sorted(t for t in run.scores if t in qrels.labels)
        expected = _expected(kept, ENGINE_MEASURES, turns)
        in_memory = evaluate_rows(run, qrels, ENGINE_MEASURES, level, per_turn=True, **_keyword(precision))
        assert _values(in_memory) == expected, (name, "in memory")
        specs = parse_measures(ENGINE_MEASURES, level)
        by_plain = plain.evaluate_run(run.scores, qrels.labels, specs, 64 if precision == "double" else 32)
        assert {(m, t): trec_eval_value(v[t]) for m, v in zip(ENGINE_MEASURES, by_plain, strict=True)
                for t in v} == expected
        small = evaluate_file_rows([run_path], [(None, qrels_path)], measures=ENGINE_MEASURES, rel_level=level,
                                   per_turn=True, **_keyword(precision))
        assert _values(small) == expected, (name, "small files")
        with monkeypatch.context() as patch:
            patch.setattr(small_module, "SMALL_RUN_BYTES", 0)  # the streaming reader and the engine
            streamed = evaluate_file_rows([run_path], [(None, qrels_path)], measures=ENGINE_MEASURES,
                                          rel_level=level, per_turn=True, **_keyword(precision))
        assert _values(streamed) == expected, (name, "streamed")


@pytest.mark.parametrize("precision", PRECISIONS)
def test_evaluate_trec_rules_print_the_binarys_numbers(kept_cases, precision):
    for name, qrels_path, run_path in _qrels_cases(kept_cases, "-q -m all_trec"):
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
        kept = parse_output(kept_output(precision, name))
        names = sorted({m for m, q in kept if q != "all" and m not in ("relstring", "runid", "num_q")})
        rows = evaluate_rows(run, qrels, names, 1, per_turn=True, **_keyword(precision))
        got = {(m, t): (str(int(v)) if m.startswith("num_") else trec_eval_value(v)) for _, _, m, t, v in rows
               if t != "all"}
        assert got == {key: value for key, value in kept.items() if key[0] in names and key[1] != "all"}, name


@pytest.mark.parametrize("precision", PRECISIONS)
def test_the_api_prints_the_binarys_numbers(kept_cases, precision):
    for name, qrels_path, run_path in _qrels_cases(kept_cases, "-q -m all_trec"):
        kept = parse_output(kept_output(precision, name))
        means = castregin.calc_aggregate(["map", "P_5", "ndcg_cut_10"], str(qrels_path), str(run_path),
                                         rel_level=1, **_keyword(precision))
        assert {m: trec_eval_value(v) for m, v in means.items()} == {m: kept[m, "all"] for m in means}, name
        per_turn = castregin.iter_calc(["recip_rank"], str(qrels_path), str(run_path), rel_level=1,
                                       **_keyword(precision))
        assert {(m.measure, m.query_id): trec_eval_value(m.value) for m in per_turn} == {
            key: value for key, value in kept.items() if key[0] == "recip_rank" and key[1] != "all"}


def test_pytrec_eval_ranks_as_the_float_binary(kept_cases):
    """pytrec_eval (hence ir_measures) is the other float oracle: the same numbers as trec_eval v9.0.8."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    for name, qrels_path, run_path in _qrels_cases(kept_cases, "-q -m all_trec"):
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
        # pytrec_eval's labels below 0 as 0: the same for these measures (neither relevant nor a gain).
        labels = {t: {i: max(label, 0) for i, label in items.items()} for t, items in qrels.labels.items()}
        per_turn = pytrec_eval.RelevanceEvaluator(labels, set(ENGINE_MEASURES)).evaluate(run.scores)
        got = {(m, t): trec_eval_value(values[m]) for t, values in per_turn.items() for m in ENGINE_MEASURES}
        kept = parse_output(kept_output("float", name))
        assert got == {key: value for key, value in kept.items() if key[0] in ENGINE_MEASURES and key[1] != "all"}


# --- the commands that evaluate pass the option on -------------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
def test_evaluate_and_bootstrap_print_the_binarys_means(kept_cases, cli, precision):
    name, qrels, run = _qrels_cases(kept_cases, "-q -m all_trec")[0]
    kept = parse_output(kept_output(precision, name))
    common = ["--qrels", qrels, "-m", "map", "-m", "P_5", "--rel-level", "1", *_option(precision), "--format", "json"]
    rows = json.loads(cli("evaluate", run, *common).stdout)
    assert {r["measure"]: trec_eval_value(r["value"]) for r in rows if r["measure"] != "num_q"} == {
        "map": kept["map", "all"], "P_5": kept["P_5", "all"]}
    intervals = json.loads(cli("analyze", "bootstrap", run, *common, "--samples", "10").stdout)
    assert {r["measure"]: trec_eval_value(r["mean"]) for r in intervals} == {
        "map": kept["map", "all"], "P_5": kept["P_5", "all"]}


def _spy(monkeypatch, module, name: str, seen: list):
    """Records the ``score_precision`` each call of ``module.name`` is given (None: left to the default)."""
    original = getattr(module, name)
    signature = inspect.signature(original)

    def spy(*args, **kwargs):
        bound = signature.bind(*args, **kwargs).arguments
        seen.append(bound.get("score_precision", bound.get("options", {}).get("score_precision")))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)


@pytest.mark.parametrize("command", ["evaluate", "compare", "report", "analyze loro", "analyze correlation",
                                     "analyze bootstrap"])
def test_every_command_that_evaluates_passes_the_option_on(kept_cases, cli, monkeypatch, tmp_path, command):
    from castregin.evaluation import analysis

    _, qrels, run = _qrels_cases(kept_cases, "-q -m all_trec")[0]
    other = tmp_path / "other.run"
    other.write_text(run.read_text().replace("prec0", "other"))
    seen: list = []
    _spy(monkeypatch, evaluate_module, "evaluate_rows", seen)
    _spy(monkeypatch, evaluate_module, "evaluate_file_rows", seen)
    _spy(monkeypatch, analysis, "evaluate_rows", seen)
    import castregin.cli.evaluate as evaluate_command

    _spy(monkeypatch, evaluate_command, "evaluate_file_rows", seen)
    extra = {"report": ["--out", tmp_path / "report"], "analyze loro": ["--depth", "3"]}.get(command, [])
    result = cli(*command.split(), run, other, "--qrels", qrels, "--score-precision", "float", *extra)
    assert result.exit_code == 0, result.stderr
    assert seen and set(seen) == {"float"}, seen


# --- the binaries, live --------------------------------------------------------------------------------------------


@pytest.fixture(params=PRECISIONS)
def live_binary(request):
    variable = BINARIES[request.param]
    if not os.environ.get(variable):
        pytest.skip(f"${variable} is not set (the trec_eval binary of {request.param} scores)")
    return request.param, Path(os.environ[variable])


def test_kept_outputs_are_the_binarys(kept_cases, live_binary):
    precision, binary = live_binary
    for name, rel_format, options, judgments, run in kept_cases:
        assert run_binary(binary, rel_format, options, judgments, run) == kept_output(precision, name), name


@pytest.mark.parametrize("seed", range(100, 106))
def test_fresh_cases_equal_the_binary(tmp_path, cli, live_binary, seed):
    precision, binary = live_binary
    qrels_path, run_path = qrels_case(seed, tmp_path)
    for options in QRELS_OPTIONS:
        expected = run_binary(binary, "qrels", options, qrels_path, run_path)
        assert cli("trec_eval", *options.split(), *_option(precision), qrels_path, run_path).stdout_bytes == expected
    kept = parse_output(run_binary(binary, "qrels", "-q -m all_trec", qrels_path, run_path))
    qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
    turns = sorted(t for t in run.scores if t in qrels.labels)
    rows = evaluate_rows(run, qrels, ENGINE_MEASURES, 1, per_turn=True, **_keyword(precision))
    assert _values(rows) == _expected(kept, ENGINE_MEASURES, turns)
    for kind, _, options in PREFERENCE_CASES:
        judgments, run_path = preference_case(kind, seed, tmp_path)
        expected = run_binary(binary, kind, options, judgments, run_path)
        assert cli("trec_eval", "-R", kind, *options.split(), *_option(precision), judgments,
                   run_path).stdout_bytes == expected
