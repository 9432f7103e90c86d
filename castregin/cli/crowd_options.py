"""The options of crowd judgments, shared by ``castregin aggregate``, ``castregin agreement`` and ``castregin
nuggets aggregate``: how to read the CSVs and decide one label per (turn, item), parsed into the judging stage's
:class:`castregin.judging.sources.CrowdRules`."""

from __future__ import annotations

import re

import click

from ..errors import InputError
from .options import InputPath, criteria_list

_CRITERION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _criteria_or_none(ctx, param, value: str | None) -> list[str] | None:
    return None if value is None else criteria_names(ctx, param, value)


def criteria_names(ctx, param, value: str) -> list[str]:
    """``--criteria``: names, comma-separated, each fit to name an output file."""
    names = criteria_list(ctx, param, value)
    for name in names:
        if not _CRITERION.fullmatch(name):
            raise click.BadParameter(f"{name!r}: use letters, digits, '_', '.' and '-' (it names output files)")
    return names


def _scale(ctx, param, value: str) -> tuple[int, int]:
    from ..formats.crowd import parse_scale

    try:
        return parse_scale(value)
    except InputError as err:
        raise click.BadParameter(err.problem) from None


def _label_map(ctx, param, value) -> dict[str, int]:
    from ..formats.crowd import parse_label_map

    try:
        return parse_label_map(value)
    except InputError as err:
        raise click.BadParameter(err.problem) from None


def gold_option(function):
    return click.option("--gold", type=InputPath(), metavar="GOLD.csv",
                        help="Gold CSV with the columns turn_id, item_id, criterion, min_label, max_label: a worker "
                             "with a label outside the range loses all their labels for that topic. Rows of other "
                             "criteria are ignored, with a warning, as are gold items nobody judged.")(function)


def decision_options(function, scale: bool = True):
    """How one label per (turn, item) is decided: --scale (unless ``scale`` is False: a scale of its own), --majority,
    --tie, --rounding, --method."""
    options = [
        *([click.option("--scale", default="0-3", show_default=True, callback=_scale, metavar="MIN-MAX",
                        help="The label scale; a label outside it is an error.")] if scale else []),
        click.option("--majority", type=click.Choice(["plurality", "absolute"]), default="plurality",
                     show_default=True,
                     help="plurality: the mode wins when it is the only most frequent label; absolute: "
                          "it must also hold more than half of the labels."),
        click.option("--tie", type=click.Choice(["mean", "median", "max", "min"]), default="mean",
                     show_default=True,
                     help="Without a winning mode: the mean of all labels, their median (an even count "
                          "takes the mean of the two middle labels, rounded with --rounding), or the "
                          "highest / lowest of the most frequent labels."),
        click.option("--rounding", type=click.Choice(["half-up", "half-even", "floor", "ceil"]),
                     default="half-up", show_default=True,
                     help="How a mean (or an even-count median) becomes an integer, computed exactly: "
                          "half-up 2.5->3, half-even 2.5->2, floor, ceil."),
        click.option("--method", type=click.Choice(["mode-mean", "dawid-skene", "glad"]), default="mode-mean",
                     show_default=True,
                     help="mode-mean: the rules above (CAsT-ReGIn's); dawid-skene: EM over each worker's "
                          "confusion matrix; glad: worker ability x item difficulty. The models run per "
                          "criterion after the gold filter, gold items as known labels (a range bounds "
                          "the posterior); the label is the posterior's argmax, the lowest on a tie."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def reading_options(function):
    """How crowd CSVs are read: --input-format, --column, --label-map."""
    options = [
        click.option("--input-format", type=click.Choice(["auto", "long", "mturk"]), default="auto",
                     show_default=True,
                     help="long: worker_id,turn_id,item_id,<criterion>...; mturk: batch results (WorkerId, "
                          "AssignmentStatus, Input.turn_id, Input.item_id, Answer.<criterion>); auto: mturk "
                          "when the header has WorkerId or AssignmentStatus."),
        click.option("--column", "columns", multiple=True, metavar="ROLE=NAME",
                     help="Read a role from another column (repeatable); roles: worker_id, turn_id, item_id, "
                          "status (rows 'Rejected' are ignored) and each criterion. Figure Eight: "
                          "--column worker_id=_worker_id --column item_id=_unit_id."),
        click.option("--label-map", "label_map", multiple=True, callback=_label_map, metavar="TEXT=N,...",
                     help="Map textual labels to integers: TEXT=N pairs, comma-separated or repeated "
                          "(e.g. no=0,yes=1)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def crowd_options(function, criteria_required: bool = True):
    """Every option of crowd judgments: --criteria, --gold, how they are read, how a label is decided."""
    function = decision_options(function)
    function = reading_options(function)
    function = gold_option(function)
    return click.option("--criteria", required=criteria_required, callback=_criteria_or_none, metavar="NAME,...",
                        help="The judged criteria, comma-separated (relevance,novelty,diversity)."
                             + ("" if criteria_required else " Needed for crowd judgments; comparing sources "
                                "takes exactly one."))(function)


def crowd_rules(criteria, gold, input_format, columns, label_map, scale, majority, tie, rounding, method):
    """The options as the judging stage's :class:`~castregin.judging.sources.CrowdRules` (``--column`` checked
    here: a bad one is a usage error)."""
    from ..formats.crowd import parse_columns
    from ..judging.sources import CrowdRules

    try:
        roles = parse_columns(columns, criteria or [])
    except InputError as err:
        raise click.BadParameter(err.problem, param_hint="--column") from None
    return CrowdRules(criteria=criteria, gold=gold, input_format=input_format, columns=roles, label_map=label_map,
                      scale=scale, majority=majority, tie=tie, rounding=rounding, method=method)


def crowd_options_optional(function):
    """:func:`crowd_options` with --criteria optional (qrels and nugget sources need none)."""
    return crowd_options(function, criteria_required=False)
