"""Runs and qrels read piece by piece (turn_stream.TurnStream) give the numbers and errors of the line reader.

The streaming path is forced with tiny sizes: record batches of a few lines, pieces and engine
batches of two lines, so that turns are cut by every boundary and carried over. Runs whose turns
are not contiguous fall back to reading the run whole; that fallback is checked to happen, and to
say so only when the run is large. Small inputs are scored in plain Python (evaluation.plain):
those numbers are checked against trec_eval's C code too, in both score precisions (see
test_engine_properties.py for the oracle of each).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import subprocess
import sys
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from castregin import InputError, Qrels, Run, formats
from castregin.errors import InputWarning
from castregin.evaluation import evaluate as evaluate_module
from castregin.evaluation import plain
from castregin.evaluation import small as small_module
from castregin.evaluation.evaluate import evaluate, evaluate_files
from castregin.evaluation.measures import parse_measures
from castregin.evaluation.ranking import score_bits
from castregin.formats import columnar, turn_batches, turn_stream
from evaluation.test_engine_properties import (
    FAST,
    JUDGED,
    PRECISIONS,
    TREC_NAMES,
    _oracle,
    _write,
    ascii_run_strategy,
    qrels_strategy,
    run_strategy,
    trec_text,
)

#: Random runs and qrels share few turns, or none, by design: the coverage warnings they raise are the subject of
#: tests/evaluation/test_coverage.py, not of these comparisons of numbers.
pytestmark = pytest.mark.filterwarnings("ignore::castregin.errors.CoverageWarning")

MEASURES = [*TREC_NAMES, *JUDGED]


@contextlib.contextmanager
def tiny_pieces(block: int = 96, lines: int = 2):
    """Streaming with record batches of ``block`` bytes (checked two at a time, so that turns are cut both
    within a group and between groups) and pieces and batches of ``lines`` lines; yields the runs read
    whole (the fallback), as a list."""
    whole = []
    read_run = columnar.read_run

    def spy(path, *args, **kwargs):
        whole.append(str(path))
        return read_run(path, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(turn_stream, "STREAM_BLOCK", block)
        patch.setattr(turn_stream, "CHECK_BATCHES", 2)
        patch.setattr(turn_stream, "PIECE_LINES", lines)
        patch.setattr(turn_batches, "BATCH_LINES", lines)
        patch.setattr(small_module, "SMALL_RUN_BYTES", 0)
        patch.setattr(columnar, "read_run", spy)
        yield whole


def _per_turn(frame) -> dict:
    return {(r.measure, r.turn): r.value for r in frame.itertuples()}


def _check_against_oracle(results, qrels: dict, run: dict, rel_level: int, complete: bool,
                          score_precision: str) -> None:
    expected = _oracle(qrels, run, rel_level, score_precision)
    got = _per_turn(results)
    for measure in MEASURES:
        want = dict(expected[measure])
        if complete:
            want.update({t: 0.0 for t in qrels if t not in want})
        mine = {turn: value for (m, turn), value in got.items() if m == measure and turn != "all"}
        assert set(mine) == set(want), measure
        for turn, value in want.items():
            assert mine[turn] == pytest.approx(value, abs=1e-12, rel=0), (measure, turn)


# --- numbers ------------------------------------------------------------------------------------------


@FAST
@given(qrels=qrels_strategy, run=ascii_run_strategy, rel_level=st.sampled_from([1, 2]), complete=st.booleans(),
       interleave=st.booleans(), lines=st.sampled_from([1, 2, 3]), score_precision=st.sampled_from(PRECISIONS))
def test_streamed_files_equal_pytrec_eval(tmp_path_factory, qrels, run, rel_level, complete, interleave, lines,
                                          score_precision):
    run_path, qrels_path = _write(tmp_path_factory.mktemp("stream"), qrels, run, interleave)
    with tiny_pieces(lines=lines) as whole:
        results = evaluate_files([run_path], [(None, str(qrels_path))], measures=MEASURES, rel_level=rel_level,
                                 complete=complete, per_turn=True, score_precision=score_precision)
    # Interleaved turns come back after others (unless each turn has one line): then the run is read whole.
    comes_back = len({line.split("\t")[0] for line in run_path.read_text().splitlines()}) < sum(
        1 for _ in _turn_runs(run_path))
    assert whole == ([str(run_path)] if comes_back else [])
    _check_against_oracle(results, qrels, run, rel_level, complete, score_precision)


def _turn_runs(path):
    """The runs of consecutive lines of one turn."""
    last = None
    for line in path.read_text().splitlines():
        turn = line.split("\t")[0]
        if turn != last:
            yield turn
        last = turn


@FAST
@given(qrels=qrels_strategy, run=ascii_run_strategy, rel_level=st.sampled_from([1, 2]))
def test_positive_only_qrels_and_judged_give_the_same_numbers(tmp_path_factory, qrels, run, rel_level):
    # Without Judged@k the lines labelled 0 or less are not kept; with it they are: same values.
    run_path, qrels_path = _write(tmp_path_factory.mktemp("positive"), qrels, run, False)
    with tiny_pieces():
        without = evaluate_files([run_path], [(None, str(qrels_path))], measures=list(TREC_NAMES),
                                 rel_level=rel_level, per_turn=True)
        with_judged = evaluate_files([run_path], [(None, str(qrels_path))], measures=MEASURES,
                                     rel_level=rel_level, per_turn=True)
    assert _per_turn(without).items() <= _per_turn(with_judged).items()


@FAST
@given(qrels=qrels_strategy, run=run_strategy, rel_level=st.sampled_from([1, 2, 3]),
       score_precision=st.sampled_from(PRECISIONS))
def test_plain_python_equals_pytrec_eval(qrels, run, rel_level, score_precision):
    specs = parse_measures(tuple(MEASURES), rel_level)
    values = plain.evaluate_run(run, qrels, specs, score_bits(score_precision))
    expected = _oracle(qrels, run, rel_level, score_precision)
    for measure, got in zip(MEASURES, values, strict=True):
        assert got.keys() == expected[measure].keys()
        for turn, value in expected[measure].items():
            assert got[turn] == pytest.approx(value, abs=1e-12, rel=0), (measure, turn)


@FAST
@given(qrels=qrels_strategy, run=run_strategy, rel_level=st.sampled_from([1, 2]),
       score_precision=st.sampled_from(PRECISIONS))
def test_plain_python_equals_the_engine_bit_for_bit(qrels, run, rel_level, score_precision):
    specs = parse_measures(tuple(MEASURES), rel_level)
    from_engine = evaluate(Run("r", run), Qrels(qrels), MEASURES, rel_level=rel_level, per_turn=True,
                           score_precision=score_precision)
    engine = {(r.measure, r.turn): r.value for r in from_engine.itertuples() if r.turn != "all"}
    for measure, values in zip(MEASURES,
                               plain.evaluate_run(run, qrels, specs, score_bits(score_precision)), strict=True):
        assert values == {turn: v for (m, turn), v in engine.items() if m == measure}, measure


def test_small_files_take_the_plain_path_and_large_ones_stream(tmp_path, monkeypatch):
    qrels = {f"t{t}": {f"d{i}": (i + t) % 4 for i in range(30)} for t in range(20)}
    run = {f"t{t}": {f"d{i}": float((i * 7 + t) % 13) for i in range(40)} for t in range(20)}
    run_path, qrels_path = _write(tmp_path, qrels, run, False)
    called = []
    original = plain.evaluate_run
    monkeypatch.setattr(plain, "evaluate_run", lambda *args: called.append(1) or original(*args))
    small = evaluate_files([run_path], [(None, str(qrels_path))], measures=MEASURES, per_turn=True)
    assert called
    called.clear()
    with tiny_pieces(block=1 << 10, lines=100) as whole:
        streamed = evaluate_files([run_path], [(None, str(qrels_path))], measures=MEASURES, per_turn=True)
    assert not called and whole == []
    assert small.equals(streamed)


# --- what is streamed and what falls back -------------------------------------------------------------------


def _run_text(turns: int = 6, items: int = 5, ending: str = "\n") -> str:
    return "".join(f"t{t}\tQ0\td{(i * 3 + t) % 11}\t{i + 1}\t{10 - i}.25\tr{ending}"
                   for t in range(turns) for i in range(items))


QRELS_TEXT = "".join(f"t{t} 0 d{i} {i % 4}\n" for t in range(6) for i in range(0, 11, 2))


def _evaluate_text(tmp_path, run_text: str, qrels_text: str = QRELS_TEXT, **options):
    (tmp_path / "r.run").write_text(run_text, newline="")
    (tmp_path / "q.qrel").write_text(qrels_text, newline="")
    return evaluate_files([tmp_path / "r.run"], [(None, str(tmp_path / "q.qrel"))], measures=MEASURES,
                          per_turn=True, **options)


def _from_dicts(tmp_path):
    return evaluate(formats.read_run(tmp_path / "r.run"), formats.read_qrels(tmp_path / "q.qrel"), MEASURES,
                    per_turn=True)


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_line_endings_and_blank_lines_are_streamed(tmp_path, ending):
    lines = _run_text(ending=ending).splitlines(keepends=True)
    # Blank lines first, inside a turn's lines, between turns and last.
    text = ending + "".join(lines[:2]) + ending * 2 + "".join(lines[2:10]) + ending + "".join(lines[10:]) + ending
    with tiny_pieces() as whole:
        results = _evaluate_text(tmp_path, text)
    assert whole == []
    assert results.equals(_from_dicts(tmp_path))


def test_a_turn_that_comes_back_falls_back_silently_when_small(tmp_path):
    lines = _run_text().splitlines(keepends=True)
    with tiny_pieces() as whole, warnings.catch_warnings():
        warnings.simplefilter("error")
        results = _evaluate_text(tmp_path, "".join(lines[:3] + lines[5:] + lines[3:5]))  # t0 again at the end
    assert whole == [str(tmp_path / "r.run")]
    assert results.equals(_from_dicts(tmp_path))


def test_a_large_run_read_whole_says_so_once(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate_module, "WHOLE_RUN_NOTE_LINES", 10)
    lines = _run_text().splitlines(keepends=True)
    with tiny_pieces(), pytest.warns(InputWarning) as caught:
        _evaluate_text(tmp_path, "".join(lines[:3] + lines[5:] + lines[3:5]))
    notes = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert notes == [(f"{tmp_path / 'r.run'}: turn t0 comes back after other turns, so the run is held whole in "
                      "memory (30 lines); write each turn's lines together to evaluate it in constant memory")]


@pytest.mark.parametrize("where", [1, 2, 9, 14, 20])
def test_the_first_reason_in_the_file_is_said_whichever_thread_finds_it(tmp_path, monkeypatch, where):
    """The parsing thread finds a turn that comes back, the reading thread a field that is not ASCII (checked
    there, as the parsing thread is the longer one): the one met first in the file, a group of record
    batches at a time, is the reason said, whichever thread is ahead."""
    monkeypatch.setattr(evaluate_module, "WHOLE_RUN_NOTE_LINES", 10)
    lines = _run_text().splitlines(keepends=True)

    def accent(line: str) -> str:
        return line.replace("\tQ0\td", "\tQ0\té")  # UTF-8: the line reader reads it

    accented = [*lines[:where], accent(lines[where]), *lines[where + 1:]]
    t0_again = "".join([*accented[:3], *accented[5:], *accented[3:5]])  # t0 comes back at the end
    cases = [(t0_again, 64, "its item column holds a field"), (t0_again, 4096, "its item column holds a field")]
    if where < 10:
        # t0 comes back early (line 8), the accent comes last, in a later group of batches.
        early = "".join([*lines[:3], *lines[5:10], *lines[3:5], *lines[10:-1], accent(lines[-1])])
        cases.append((early, 64, "turn t0 comes back"))
    for text, block, reason in cases:
        with tiny_pieces(block=block), pytest.warns(InputWarning) as caught:
            _evaluate_text(tmp_path, text)
        notes = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
        assert len(notes) == 1 and reason in notes[0], (block, notes)


@pytest.mark.parametrize("text, why", [
    ("t0\tQ0\td1\t1\t2\tr\nt0\tQ0\té\t2\t1\tr\n", "non-ASCII item"),
    ("t0 Q0 d1 1 2 r\nt0\tQ0\td2\t2\t1\tr\n", "both separators"),
    ("t0 Q0 d1 1 2 r\nt0 Q0 d2 2 1 r\n\n   \n", "a line of spaces"),
    ("t0 Q0 d1 1 2 r\nt0 Q0 d2  2 1 r\n", "a separator doubled"),
    # The turn column is checked on the first field of each run of equal fields: one in the middle of a batch,
    # in a turn of several lines, and a turn at a batch's start that goes on from the one before.
    ("t0 Q0 d1 1 2 r\nt0 Q0 d2 2 1 r\nté Q0 d1 1 2 r\nté Q0 d2 2 1 r\nt1 Q0 d1 1 2 r\n", "non-ASCII turn"),
    ("té Q0 d1 1 2 r\nté Q0 d2 2 1 r\nté Q0 d3 3 0 r\n", "non-ASCII turn, over batches"),
])
def test_what_the_stream_cannot_vouch_for_is_read_whole(tmp_path, text, why):
    with tiny_pieces(lines=1) as whole:
        results = _evaluate_text(tmp_path, text)
    assert whole == [str(tmp_path / "r.run")], why
    assert results.equals(_from_dicts(tmp_path)), why


# --- errors: the line reader's, with its line numbers -----------------------------------------------------


def _same_error(tmp_path, text: str, qrels_text: str = QRELS_TEXT) -> str:
    (tmp_path / "r.run").write_text(text, newline="")
    (tmp_path / "q.qrel").write_text(qrels_text, newline="")
    try:
        formats.read_qrels(tmp_path / "q.qrel")
        formats.read_run(tmp_path / "r.run")
    except InputError as err:
        expected = str(err)
    else:
        raise AssertionError("the line reader accepts the files")
    for lines in (1, 2, 3):
        with tiny_pieces(lines=lines), pytest.raises(InputError) as caught:
            _evaluate_text(tmp_path, text, qrels_text)
        assert str(caught.value) == expected
    return expected


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_pair_listed_twice_across_batches_names_its_line(tmp_path, ending):
    lines = _run_text(ending=ending).splitlines(keepends=True)
    # The turn t2's first item again, four lines later (other batches), after blank lines.
    text = "".join(lines[:14]) + ending * 3 + lines[10].replace("\t1\t", "\t9\t") + "".join(lines[14:])
    assert _same_error(tmp_path, text) == f"{tmp_path / 'r.run'}:18: item d2 is listed twice for turn t2"


def test_a_pair_judged_twice_across_batches_names_its_line(tmp_path):
    qrels_lines = QRELS_TEXT.splitlines(keepends=True)
    text = "".join(qrels_lines[:9]) + "\n" + qrels_lines[6] + "".join(qrels_lines[9:])
    assert _same_error(tmp_path, _run_text(), text) == f"{tmp_path / 'q.qrel'}:11: item d0 is judged twice for turn t1"


@pytest.mark.parametrize("bad, message", [
    ("t5\tQ0\td1\tone\t1\tr\n", "rank 'one' is not a number"),
    ("t5\tQ0\td1\t0x10\t1\tr\n", "rank '0x10' is not a number"),
    ("t5\tQ0\td1\t1\tnan\tr\n", "score 'nan' is not a finite number"),
    ("t5\tQ0\td1\t1\t1\n", "expected 6 columns"),
    ("t5\t\tQ0\td1\t1\t1\n", "expected 6 columns"),
])
def test_a_bad_line_late_in_the_run_is_named(tmp_path, bad, message):
    expected = _same_error(tmp_path, _run_text() + bad)
    assert expected.startswith(f"{tmp_path / 'r.run'}:31: ") and message in expected


@FAST
@given(text=trec_text(6))
def test_random_text_reads_as_the_line_reader_reads_it(tmp_path_factory, text):
    directory = tmp_path_factory.mktemp("text")
    (directory / "q.qrel").write_text(QRELS_TEXT)
    (directory / "r.run").write_text(text, encoding="utf-8")
    try:
        expected = _from_dicts(directory)
    except InputError as err:
        refusal = err
    else:
        refusal = None
    if refusal is not None:
        with tiny_pieces(), pytest.raises(InputError) as caught:
            evaluate_files([directory / "r.run"], [(None, str(directory / "q.qrel"))], measures=MEASURES,
                           per_turn=True)
        assert str(caught.value) == str(refusal)
        return
    with tiny_pieces(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = evaluate_files([directory / "r.run"], [(None, str(directory / "q.qrel"))], measures=MEASURES,
                             per_turn=True)
    assert got.equals(expected)


# --- inputs that are not plain files ---------------------------------------------------------------------


def test_compressed_runs_and_qrels_are_streamed(tmp_path):
    text = _run_text()
    (tmp_path / "r.run.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "q.qrel.gz").write_bytes(gzip.compress(QRELS_TEXT.encode()))
    with tiny_pieces() as whole:
        packed = evaluate_files([tmp_path / "r.run.gz"], [(None, str(tmp_path / "q.qrel.gz"))], measures=MEASURES,
                                per_turn=True)
    assert whole == []
    assert packed.equals(_evaluate_text(tmp_path, text))


def test_a_compressed_run_whose_turn_comes_back_is_read_again(tmp_path):
    lines = _run_text().splitlines(keepends=True)
    text = "".join(lines[:3] + lines[5:] + lines[3:5])
    (tmp_path / "r.run.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "q.qrel").write_text(QRELS_TEXT)
    with tiny_pieces() as whole:
        packed = evaluate_files([tmp_path / "r.run.gz"], [(None, str(tmp_path / "q.qrel"))], measures=MEASURES,
                                per_turn=True)
    assert whole == [str(tmp_path / "r.run.gz")]
    assert packed.equals(_evaluate_text(tmp_path, text))


def test_standard_input_is_streamed_from_its_bytes(cli, tmp_path):
    lines = _run_text().splitlines(keepends=True)
    (tmp_path / "q.qrel").write_text(QRELS_TEXT)
    for text in ("".join(lines), "".join(lines[:3] + lines[5:] + lines[3:5])):
        (tmp_path / "r.run").write_text(text)
        piped = cli("evaluate", "-", "--qrels", str(tmp_path / "q.qrel"), "--format", "json", "-q",
                    input=gzip.compress(text.encode()))
        assert piped.exit_code == 0, piped.stderr
        assert piped.stdout == cli("evaluate", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "q.qrel"),
                                   "--format", "json", "-q").stdout


def test_leaving_early_stops_the_parser(tmp_path, monkeypatch):
    monkeypatch.setattr(turn_stream, "STREAM_BLOCK", 96)
    monkeypatch.setattr(turn_stream, "CHECK_BATCHES", 1)
    monkeypatch.setattr(turn_stream, "PIECE_LINES", 1)
    (tmp_path / "r.run").write_text(_run_text(turns=50))
    with columnar.stream_run(tmp_path / "r.run") as stream:
        first = next(iter(stream))
    assert not stream._thread.is_alive()
    assert first.turns == ["t0"] and stream.tag == "r"


# --- start-up -----------------------------------------------------------------------------------------------


def test_evaluating_a_small_run_does_not_load_pyarrow(tmp_path):
    (tmp_path / "r.run").write_text(_run_text(turns=2))
    (tmp_path / "q.qrel").write_text(QRELS_TEXT)
    code = ("import json, sys\nfrom castregin.cli import main\n"
            f"try:\n    main(['evaluate', {str(tmp_path / 'r.run')!r}, '--qrels', {str(tmp_path / 'q.qrel')!r}])\n"
            "except SystemExit as exit:\n    assert not exit.code\n"
            "print(json.dumps([m for m in ('pyarrow', 'pandas') if m in sys.modules]), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stderr.strip().splitlines()[-1]) == []
    assert "P@1" in result.stdout


def test_per_turn_values_of_a_streamed_run_are_a_mapping_whose_values_can_be_read():
    # TurnValues kept its column in an attribute named `values`, which hid Mapping.values(): any code
    # reading a streamed run's per-turn values as a dict (`.values()`) failed with "not callable".
    import numpy as np

    from castregin.evaluation.evaluate import TurnValues

    per_turn = TurnValues(["t2", "t1"], np.array([0.5, 0.25]))
    assert list(per_turn.values()) == [0.5, 0.25]
    assert dict(per_turn.items()) == {"t2": 0.5, "t1": 0.25}
    assert per_turn.in_byte_order() == [0.25, 0.5]
