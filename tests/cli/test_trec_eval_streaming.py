"""`castregin trec_eval` on its streaming path prints what trec_eval 9.0.8 prints, byte for byte.

Inputs that are not small (``castregin.evaluation.small.small_inputs``) stream through the engine, every measure by its
vectorised form; here the threshold is 0 and the pieces a few lines, so that the kept outputs of the
trec_eval binary (tests/cli/data: all_trec on random runs with ties, negative labels, -q, -c, -l2,
-M; the CAsT 2022 baselines; trec_eval's own quicktest) go through that path. Options the engine
leaves to the rules (-Z, -J, -l below 1, -M 0, gain pairs) fall back to them, as a run that cannot be
streamed and a topic trec_eval cannot evaluate do: the same bytes, or the same refusal.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from streaming_paths import streaming
from trec_eval_oracle import GOLDEN, kept_output, label_cases, random_pair, run_binary

from castregin.evaluation import trec_eval as trec_eval_module
from castregin.evaluation.measures import mark_measures
from castregin.evaluation.trec_eval import TrecEvalOptions, stream_refusal

from .test_trec_eval import OPTION_SETS, cast_cases, random_cases  # noqa: F401 (fixtures)
from .test_trec_eval_quicktest import DATA, QUICKTEST, _arguments


def _streamed(cli, options: str, qrels: Path, run: Path, lines: int = 7) -> tuple[bytes, bool]:
    """The command's output through the streaming path, and whether that path gave it."""
    with streaming(lines) as calls:
        result = cli("trec_eval", *options.split(), qrels, run)
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes, bool(calls)


def _streamable(options: str) -> bool:
    words = options.split()
    measures = tuple(words[i + 1] for i, word in enumerate(words) if word == "-m") or ("official",)
    level = int(next((w[2:] or words[i + 1] for i, w in enumerate(words) if w.startswith("-l")), "1"))
    depth = next((int(w[2:] or words[i + 1]) for i, w in enumerate(words) if w.startswith("-M")), None)
    options_read = TrecEvalOptions(measures, level, max_per_query=depth, judged_only="-J" in words)
    return stream_refusal(options_read, mark_measures(measures)) is None


def test_the_kept_all_trec_outputs_are_streamed_byte_for_byte(random_cases, cli):  # noqa: F811
    """all_trec on random runs with ties, unjudged items, labels above 9: -q, -c, -l2, -M; -J falls back."""
    streamed = 0
    for name, options, qrels, run in random_cases:
        out, was_streamed = _streamed(cli, options, qrels, run)
        assert out == gzip.decompress((GOLDEN / name).read_bytes()), (name, options)
        assert was_streamed == _streamable(options), options
        streamed += was_streamed
    assert streamed >= 12


def test_the_cast_baselines_are_streamed_byte_for_byte(cast_cases, cast_data, cli):  # noqa: F811
    for name, options, qrels, run in cast_cases:
        # Pieces of some 1,000 lines: the baselines' 2,000 or so a turn are cut within and between turns (the
        # slice's 15 to 20 a turn, by pieces of 7).
        out, was_streamed = _streamed(cli, options, qrels, run, lines=1000 if cast_data.name == "cast2022" else 7)
        assert out == gzip.decompress((GOLDEN / name).read_bytes()) and was_streamed, (name, options)


def test_negative_labels_are_streamed_byte_for_byte(tmp_path, cli):
    """Labels below 0 (trec_eval's "in the pool but unjudged"): '.' in relstring, apart in bpref and infAP."""
    streamed = 0
    for name, options, qrels, run in label_cases(tmp_path):
        if name.startswith("negative"):
            out, was_streamed = _streamed(cli, options, qrels, run)
            assert out == kept_output(name), (name, options)
            streamed += was_streamed
    assert streamed >= 12


@pytest.mark.parametrize("expected, command", QUICKTEST)
def test_trec_evals_quicktest_through_the_streaming_path(expected, command, cli):
    with streaming() as calls:
        result = cli("trec_eval", *_arguments(command))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (DATA / expected).read_bytes()
    # -R formats are the preference code's; -Z and ndcg's gain pairs are left to the rules.
    assert bool(calls) == (" -R " not in command and "-Z" not in command and "=" not in command), command


@pytest.mark.parametrize("seed", range(6))
def test_random_runs_streamed_equal_the_binary(seed, tmp_path, cli, trec_eval_binary):
    qrels, run = random_pair(300 + seed, tmp_path)
    for options in OPTION_SETS:
        out, was_streamed = _streamed(cli, options, qrels, run)
        assert out == run_binary(trec_eval_binary, options, qrels, run), options
        assert was_streamed == _streamable(options), options


def test_a_run_whose_turns_come_back_falls_back_to_the_rules(tmp_path, cli):
    qrels, run = tmp_path / "q.qrel", tmp_path / "r.run"
    qrels.write_text("t1 0 a 2\nt1 0 b 0\nt2 0 c 1\n")
    run.write_text("t1 Q0 a 1 0.9 x\nt2 Q0 c 1 0.7 x\nt1 Q0 b 2 0.5 last\n")
    with streaming() as calls:
        streamed = cli("trec_eval", "-q", "-m", "all_trec", qrels, run)
    assert calls and streamed.exit_code == 0
    assert streamed.stdout_bytes == cli("trec_eval", "-q", "-m", "all_trec", qrels, run).stdout_bytes
    assert b"runid                 \tall\tlast\n" in streamed.stdout_bytes


def test_a_piped_run_is_read_once_whole(tmp_path, cli):
    """A run from a pipe (whose turns come back) is read once, by the rules: the streaming path could hand
    it back to them, and a pipe cannot be read twice."""
    import os
    import threading

    qrels, run, pipe = tmp_path / "q.qrel", tmp_path / "r.run", tmp_path / "pipe"
    qrels.write_text("t1 0 a 2\nt1 0 b 0\nt2 0 c 1\n")
    run.write_text("t1 Q0 a 1 0.9 x\nt2 Q0 c 1 0.7 x\nt1 Q0 b 2 0.5 last\n")
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_bytes(run.read_bytes()))
    writer.start()
    with streaming() as calls:
        piped = cli("trec_eval", "-m", "P.5", qrels, pipe)
    writer.join(timeout=10)
    assert not calls and piped.exit_code == 0, piped.stderr
    assert piped.stdout_bytes == cli("trec_eval", "-m", "P.5", qrels, run).stdout_bytes


@pytest.mark.parametrize("qrels_text, run_text, message", [
    ("t1 0 a -1\nt1 0 b -2\nt2 0 c 1\n", "t1 Q0 a 1 0.9 x\nt2 Q0 c 1 0.7 x\n", "topic t1: every label is negative"),
    ("t1 0 a 1\nt1 0 b 1001\nt2 0 c 1\n", "t1 Q0 a 1 0.9 x\nt2 Q0 c 1 0.7 x\n", "item b: label 1001 is above 1000"),
    ("t1 0 a 1\n", "t9 Q0 a 1 0.9 x\n", "no query has both results"),
])
def test_what_the_rules_refuse_the_streaming_path_refuses_in_their_words(tmp_path, cli, qrels_text, run_text,
                                                                         message):
    qrels, run = tmp_path / "q.qrel", tmp_path / "r.run"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    read_whole = []
    read_run = trec_eval_module.trec_eval_lines

    def spy(*args, **kwargs):
        read_whole.append(args)
        return read_run(*args, **kwargs)

    with streaming() as calls, pytest.MonkeyPatch.context() as patch:
        patch.setattr(trec_eval_module, "trec_eval_lines", spy)
        streamed = cli("trec_eval", "-m", "all_trec", qrels, run)
    assert calls and not read_whole
    by_rules = cli("trec_eval", "-m", "all_trec", qrels, run)
    assert streamed.exit_code == by_rules.exit_code == 1 and message in streamed.stderr
    assert streamed.stderr == by_rules.stderr


def test_quicktests_measure_parameters_streamed_without_the_gain_pairs(cli):
    """trec_eval's meas_params test (cutoffs out of order, decimal cutoffs, utility's coefficients, Rprec_mult's
    multiples, 11pt_avg's levels) on the streaming path: its expected output less the ndcg line, which gain pairs
    leave to the rules."""
    expected, command = next((e, c) for e, c in QUICKTEST if e == "out.test.meas_params")
    arguments = [word for word in _arguments(command) if not word.startswith("-mndcg.")]
    assert len(arguments) == len(_arguments(command)) - 1
    with streaming() as calls:
        result = cli("trec_eval", *arguments)
    assert calls and result.exit_code == 0, result.stderr
    kept = [line for line in (DATA / expected).read_bytes().splitlines(keepends=True)
            if not line.startswith(b"ndcg_1=3,2=9,4=4.5")]
    assert result.stdout_bytes == b"".join(kept)


@pytest.mark.parametrize("precision", ["double", "float"])
def test_scores_tied_as_floats_only_streamed_as_each_binary_prints_them(tmp_path, cli, precision):
    """The kept outputs of trec_eval-9.0.8 (doubles) and v9.0.8 (floats) on runs whose scores tie as floats only."""
    from trec_eval_precision_oracle import cases
    from trec_eval_precision_oracle import kept_output as kept_precision_output

    streamed = 0
    for name, rel_format, options, qrels, run in cases(tmp_path):
        if rel_format != "qrels":
            continue
        with streaming() as calls:
            result = cli("trec_eval", *options.split(), "--score-precision", precision, qrels, run)
        assert result.exit_code == 0, result.stderr
        assert result.stdout_bytes == kept_precision_output(precision, name), (precision, name)
        streamed += bool(calls)
    assert streamed >= 8


def test_a_huge_relstring_length_streamed_prints_the_rules_strings(tmp_path, cli):
    """relstring.900000000 streamed: rows as long as the longest ranking, the strings of the rules' path.
    (Memory is measured by the benchmarks, not here: a pytest worker's peak RSS says nothing of this call.)"""
    qrels, run = tmp_path / "q.qrel", tmp_path / "r.run"
    qrels.write_text("t1 0 a 2\nt2 0 c 1\n")
    run.write_text("t1 Q0 a 1 0.9 x\nt1 Q0 b 2 0.5 x\nt2 Q0 c 1 0.7 x\n")
    with streaming() as calls:
        streamed = cli("trec_eval", "-q", "-m", "relstring.900000000", qrels, run)
    assert calls and streamed.exit_code == 0, streamed.stderr
    assert streamed.stdout_bytes == cli("trec_eval", "-q", "-m", "relstring.900000000", qrels, run).stdout_bytes


def test_max_per_query_streamed_warns_of_few_judged_as_the_rules_do(tmp_path, cli):
    """-M cuts the streamed ranking; the judged share of the top 10 (items judged 0 count as judged) is the
    uncut ranking's on both paths: no warning here."""
    qrels, run = tmp_path / "q.qrel", tmp_path / "r.run"
    qrels.write_text("".join(f"t{t} 0 d{i} {1 if i == 15 else 0}\n" for t in range(3) for i in range(20)))
    run.write_text("".join(f"t{t} Q0 d{i} {i + 1} {20 - i} x\n" for t in range(3) for i in range(20)))
    with streaming() as calls:
        streamed = cli("trec_eval", "-M", "100", "-m", "P.5", qrels, run)
    assert calls and streamed.exit_code == 0
    rules = cli("trec_eval", "-M", "100", "-m", "P.5", qrels, run)
    assert streamed.stdout_bytes == rules.stdout_bytes
    assert "judged" not in rules.stderr and "judged" not in streamed.stderr, streamed.stderr


def test_the_per_query_lines_are_made_and_written_a_block_at_a_time(random_cases, cli, monkeypatch):  # noqa: F811
    """The streamed -q lines are made from the per-turn values a few topics at a time and printed a few lines at a
    time (blocks cut within a topic's lines): still the binary's bytes."""
    from castregin.evaluation import trec_eval_stream
    from castregin.render import trec

    monkeypatch.setattr(trec_eval_stream, "_TOPICS_AT_A_TIME", 2)
    monkeypatch.setattr(trec, "LINES_PER_CHUNK", 7)
    streamed = 0
    for name, options, qrels, run in random_cases:
        if "-q" in options.split() and _streamable(options):
            out, was_streamed = _streamed(cli, options, qrels, run)
            assert out == gzip.decompress((GOLDEN / name).read_bytes()) and was_streamed, (name, options)
            streamed += 1
    assert streamed >= 6
