"""A UTF-8 byte-order mark before a drop-in's input: castregin skips it, the originals do not, and castregin says so.

trec_eval 9.0.8 keeps the mark in the first line's query id, which becomes a query of its own: on the kept pair
(trec_eval_oracle.byte_order_mark_cases) the qrels' first judgment leaves its query, or the run's first item does
(num_ret 14 -> 13). gdeval.pl 1.3 and ndeval 4.5 stop with a format error on that line. castregin prints what
the originals print for the file without the mark, with a warning naming the difference (docs/trec-eval.md,
docs/gdeval-ndeval.md): a drop-in may improve on its original only out loud.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gdeval_ndeval_oracle import live_command
from trec_eval_oracle import byte_order_mark_cases, kept_output, run_binary

MARK = b"\xef\xbb\xbf"
TREC_EVAL_WARNING = ("castregin: warning: {}: starts with a UTF-8 byte-order mark, which castregin skips and "
                     "trec_eval 9.0.8 reads as part of the first line's query id, a query of its own there, so that "
                     "query's numbers differ; remove it to have both agree\n")


@pytest.fixture
def cases(tmp_path):
    return {name.removesuffix(".txt.gz"): (name, options, qrels, run)
            for name, options, qrels, run in byte_order_mark_cases(tmp_path)}


def test_trec_eval_keeps_the_mark_in_the_first_id(cases):
    # The kept outputs of the binary: the mark changes its numbers for the first line's query, and only there.
    plain = kept_output(cases["bom_none"][0]).decode().splitlines()
    for name in ("bom_qrels", "bom_run"):
        _, _, qrels, run = cases[name]
        first_query = (qrels if name == "bom_qrels" else run).read_bytes()[len(MARK):].split()[0].decode()
        marked = kept_output(cases[name][0]).decode().splitlines()
        differing = {line.split("\t")[1] for line in set(marked) ^ set(plain)}
        assert differing == {first_query, "all"}, name


@pytest.mark.parametrize("name", ["bom_qrels", "bom_run"])
def test_castregin_trec_eval_skips_it_and_says_so(cli, cases, name):
    _, options, qrels, run = cases[name]
    result = cli("trec_eval", *options.split(), qrels, run)
    assert result.exit_code == 0
    assert result.stdout_bytes == kept_output(cases["bom_none"][0])  # trec_eval's numbers without the mark
    marked = qrels if name == "bom_qrels" else run
    assert result.stderr == TREC_EVAL_WARNING.format(marked)


def test_on_every_path_of_castregin_trec_eval(cli, cases, tmp_path):
    _, options, qrels, run = cases["bom_qrels"]
    # Standard input (read once), -Z, -R qrels_jg: each input is read once and its mark noted.
    result = cli("trec_eval", *options.split(), qrels, "-", input=cases["bom_run"][3].read_bytes())
    assert result.stderr == TREC_EVAL_WARNING.format(qrels) + TREC_EVAL_WARNING.format("<stdin>")
    zscores = tmp_path / "z.txt"
    topics = dict.fromkeys(line.split()[0] for line in run.read_text().splitlines())
    zscores.write_bytes(MARK + "".join(f"{topic} P_5 0.5 0.1\n" for topic in topics).encode())
    result = cli("trec_eval", "-Z", zscores, "-m", "P.5", qrels, run)
    assert result.exit_code == 0 and result.stderr == (TREC_EVAL_WARNING.format(qrels)
                                                       + TREC_EVAL_WARNING.format(zscores))
    result = cli("trec_eval", "-R", "qrels_jg", "-m", "qrels_jg", qrels, run)
    assert result.exit_code == 0 and result.stderr == TREC_EVAL_WARNING.format(qrels)


def test_the_streaming_path_says_it_too(cli, cases, monkeypatch):
    # Inputs above castregin.evaluation.small's thresholds are streamed; with a threshold of 0, these are.
    from castregin.evaluation import small

    monkeypatch.setattr(small, "small_inputs", lambda runs, qrels: False)
    qrels = cases["bom_qrels"][2]
    result = cli("trec_eval", "-q", "-m", "P.5,10", "-m", "map", qrels, cases["bom_run"][3])
    assert result.exit_code == 0
    assert result.stderr == TREC_EVAL_WARNING.format(qrels) + TREC_EVAL_WARNING.format(cases["bom_run"][3])


def test_without_the_mark_no_warning(cli, cases):
    _, options, qrels, run = cases["bom_none"]
    result = cli("trec_eval", *options.split(), qrels, run)
    assert result.stdout_bytes == kept_output(cases["bom_none"][0]) and result.stderr == ""


def test_the_kept_outputs_are_the_binarys(cases, trec_eval_binary):
    for name, options, qrels, run in cases.values():
        assert run_binary(trec_eval_binary, options, qrels, run) == kept_output(name), name


# --- gdeval and ndeval ---------------------------------------------------------------------------------------

#: What the originals print on standard error for a file whose first line starts with the mark (gdeval.pl 1.3 under
#: perl 5.36, ndeval 4.5 built with gcc 12, as tests/cli/gdeval_ndeval_oracle.py describes them); they exit non-zero.
ORIGINAL_REFUSALS = {
    ("gdeval", "qrels"): 'gdeval.pl: format error on line 1 of "{}"\n',  # gdeval.pl names itself by $0
    ("gdeval", "run"): 'gdeval.pl: format error on line 1 of "{}"\n',
    ("ndeval", "qrels"): 'ndeval: syntax error in qrel file "{}" at line 1\n',
    ("ndeval", "run"): 'ndeval: syntax error in run file "{}" at line 1\n',
}
QRELS = {"gdeval": "1 0 d1 2\n1 0 d2 0\n2 0 d1 1\n", "ndeval": "1 1 d1 1\n1 2 d2 1\n2 1 d1 1\n2 1 d3 1\n"}
RUN = "1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n2 Q0 d1 1 1 r\n"
DROP_IN_WARNING = {
    "gdeval": "gdeval.pl reads as part of the first line's topic id, stopping with a format error unless the id "
              "holds a '-' (its rewrite drops what precedes the last one)",
    "ndeval": "ndeval reads as part of the first line's topic id, stopping with a syntax error unless a run's id "
              "holds a '-' (ndeval reads the number after the first one)",
}


def _plain_and_marked(tmp_path, texts: dict[str, bytes], marked: str) -> tuple[dict, dict]:
    """The files without the mark, and the same with it before the ``marked`` one (qrels or run)."""
    plain = {kind: tmp_path / f"plain.{kind}" for kind in texts}
    for kind, path in plain.items():
        path.write_bytes(texts[kind])
    with_mark = dict(plain)
    with_mark[marked] = tmp_path / f"marked.{marked}"
    with_mark[marked].write_bytes(MARK + texts[marked])
    return plain, with_mark


@pytest.mark.parametrize("tool", ["gdeval", "ndeval"])
@pytest.mark.parametrize("marked", ["qrels", "run"])
def test_gdeval_and_ndeval_skip_it_and_say_so(cli, tmp_path, tool, marked):
    texts = {"qrels": QRELS[tool].encode(), "run": RUN.encode()}
    plain, with_mark = _plain_and_marked(tmp_path, texts, marked)
    expected = cli(tool, plain["qrels"], plain["run"])
    result = cli(tool, with_mark["qrels"], with_mark["run"])
    assert result.exit_code == 0 and result.stdout == expected.stdout and expected.stderr == ""
    assert result.stderr == (f"castregin: warning: {with_mark[marked]}: starts with a UTF-8 byte-order mark, which "
                             f"castregin skips and {DROP_IN_WARNING[tool]}; remove it to have both agree\n")
    command = live_command(tool)
    if command is not None:  # the original refuses the file, as kept above
        done = subprocess.run([*command, str(with_mark["qrels"]), str(with_mark["run"])], capture_output=True,
                              text=True, check=False)
        assert done.returncode != 0
        assert done.stderr.endswith(ORIGINAL_REFUSALS[tool, marked].format(with_mark[marked]).partition(":")[2])


@pytest.mark.parametrize("marked", ["qrels", "run"])
def test_sample_eval_skips_it_and_says_so(cli, tmp_path, marked):
    """sample_eval.pl keeps the mark in the first topic id (a topic of its own: with the mark on these qrels
    its topic 1 scores 0, its infAP 0.0000 where the file without it gives 1.0000). castregin skipped it in
    silence; it prints the output of the file without the mark, and a warning."""
    from sample_eval_oracle import live_command as sample_eval_command
    from sample_eval_oracle import run_original

    texts = {"qrels": b"1 0 d1 1 1\n1 0 d2 1 0\n2 0 d1 1 1\n", "run": b"1 Q0 d1 1 2 r\n2 Q0 d2 1 2 r\n"}
    plain, with_mark = _plain_and_marked(tmp_path, texts, marked)
    expected = cli("sample_eval", "-q", plain["qrels"], plain["run"])
    result = cli("sample_eval", "-q", with_mark["qrels"], with_mark["run"])
    assert result.exit_code == 0 and result.stdout == expected.stdout and expected.stderr == ""
    assert result.stderr == (f"castregin: warning: {with_mark[marked]}: starts with a UTF-8 byte-order mark, which "
                             "castregin skips and sample_eval.pl reads as part of the first line's topic id, a topic "
                             "of its own there, so that topic's numbers differ; remove it to have both agree\n")
    if sample_eval_command():
        original = run_original(with_mark["qrels"], with_mark["run"], ["-q"])
        # the marked topic is in one file only: topic 1 scores 0 (qrels marked) or is not evaluated (run marked)
        assert original != expected.stdout
        assert ("infAP\t\t1\t\t0.0000\n" in original) if marked == "qrels" else ("\t1\t" not in original)
