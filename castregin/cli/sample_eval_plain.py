"""``castregin sample_eval`` without click: sample_eval.pl's command line and the body (see
:mod:`castregin.cli.gdeval_plain`, whose reading of castregin's own options it shares)."""

from __future__ import annotations

from . import warnings_as_lines
from .gdeval_plain import castregin_options, expect_files
from .plain import DropInCommand, UsageError


def read_sample_eval(args: list[str]) -> dict[str, object]:
    """sample_eval.pl's command line (and ``--output FILE``) as the keyword arguments of :func:`sample_eval`."""
    rest, rewrite, output = castregin_options(args)  # --output FILE, as gdeval and ndeval take it
    if rewrite:
        raise UsageError("--rewrite-ids is gdeval's and ndeval's: sample_eval reads topics as they are")
    per_topic = bool(rest) and rest[0] == "-q"
    if per_topic:
        rest.pop(0)
    expect_files(rest, "-q".__eq__, "sample_eval.pl: [-q] QRELS RUN")
    qrels_file, run_file = rest
    return {"qrels_file": qrels_file, "run_file": run_file, "per_topic": per_topic, "output": output}


def sample_eval(qrels_file: str, run_file: str, per_topic: bool, output: str) -> None:
    """The body of ``castregin sample_eval``: sample_eval.pl's output for the keyword arguments of
    :func:`read_sample_eval`."""
    from .. import formats
    from ..evaluation.inferred import SAMPLE_EVAL_BYTE_ORDER_MARK, sample_eval
    from ..formats.common import note_byte_order_mark, read_bytes, stem
    from ..formats.strata import parse_stratified_qrels
    from ..formats.trec import parse_run
    from ..render.sample_eval import sample_eval_text

    formats.ensure_not_input(output, [qrels_file, run_file])
    with warnings_as_lines():  # each file read once (a pipe too); a byte-order mark said, as the script keeps it
        qrels_data, run_data = read_bytes(qrels_file), read_bytes(run_file)
        for data, path in ((qrels_data, qrels_file), (run_data, run_file)):
            note_byte_order_mark(data, formats.display_name(path), SAMPLE_EVAL_BYTE_ORDER_MARK)
    qrels = parse_stratified_qrels(qrels_data, formats.display_name(qrels_file), stem(qrels_file))
    result = sample_eval(qrels, parse_run(run_data, formats.display_name(run_file)))
    formats.write_text(output, sample_eval_text(result, per_topic))


SAMPLE_EVAL = DropInCommand("[-q] QRELS RUN", read_sample_eval, sample_eval)
