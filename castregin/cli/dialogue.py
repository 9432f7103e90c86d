"""Commands of the castregin CLI for the dialogue stage (registered on `castregin.cli.main`).

``castregin paradise`` (kappa, fit, predict): PARADISE's task success and performance function;
``castregin scorekeeping`` (score, summary): clembench's privateshared scores and leaderboard. The
work is in :mod:`castregin.dialogue` and :mod:`castregin.formats.dialogue`, imported inside the
commands so that ``castregin --help`` loads neither numpy nor statsmodels.
"""

from __future__ import annotations

import click

from . import main

_NUMBER_DECIMALS = 4


def _output_option(function):
    return click.option("-o", "--output", default="-", show_default=True, metavar="FILE",
                        help="Where to write (`-`: standard output). Written atomically.")(function)


def _fmt(value, decimals: int = _NUMBER_DECIMALS) -> str:
    import math

    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:.{decimals}f}"


def _dumps(data) -> str:
    from ..formats.common import json_text

    return json_text(data)


# --- paradise ----------------------------------------------------------------------------------------------

@main.group(short_help="PARADISE: task success as kappa, the performance function (Walker et al. 1997).")
def paradise():
    """PARADISE (Walker et al. 1997): task success as kappa, and the performance function.

    \b
      castregin paradise kappa avm.csv --attribute-groups depart-city=4,arrival-city=4,depart-range=2,depart-time=4
      castregin paradise fit dialogues.csv --satisfaction US --success kappa --cost turns --cost time \\
          --group agent --save performance.json
      castregin paradise predict performance.json new_dialogues.csv --id dialogue
    """


@paradise.command("kappa")
@click.argument("matrix_file", metavar="MATRIX.csv")
@click.option("--attribute-groups", "groups_spec", metavar="NAME=N,...|labels",
              help="The attribute blocks, for a kappa per attribute: consecutive block sizes "
                   "(depart-city=4,arrival-city=4,...) or `labels` to group values labelled ATTRIBUTE:VALUE.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_output_option
def paradise_kappa(matrix_file, groups_spec, fmt, output):
    """Task success of an attribute-value-matrix confusion matrix: P(A), P(E), kappa.

    MATRIX.csv has a header line (a corner cell, then one label per column: the values in the
    scenario keys) and one line per row (the values in the dialogue data: label, then counts).
    Rows are matched to columns by label; an unlabelled matrix of numbers is read as is.

    \b
    P(A)  = trace(M) / T                 (T: the total count)
    P(E)  = sum_i (t_i / T)^2            (t_i: column sums, the key's distribution)
    kappa = (P(A) - P(E)) / (1 - P(E))   (nan when P(E) = 1)

    With --attribute-groups, each attribute's diagonal block gets the same computation; counts
    outside the blocks enter only the overall kappa.

    \b
    Examples:
      castregin paradise kappa agent_a.csv
      castregin paradise kappa agent_a.csv --attribute-groups depart-city=4,arrival-city=4,depart-range=2,depart-time=4
      castregin paradise kappa agent_a.csv --attribute-groups labels --format json -o kappa.json
    """
    from ..dialogue.paradise import OVERALL, avm_kappas, parse_attribute_groups
    from ..formats import display_name, ensure_not_input, write_text
    from ..formats.dialogue import read_avm_matrix
    from ..render.tables import text_table

    ensure_not_input(output, [matrix_file])
    source = display_name(matrix_file)
    labels, matrix = read_avm_matrix(matrix_file)
    groups = parse_attribute_groups(groups_spec, labels, source=source) if groups_spec else []
    results = avm_kappas(matrix, groups, source=source)
    if fmt == "json":
        data = {"overall": results[OVERALL].as_dict(),
                "attributes": {name: k.as_dict() for name, k in results.items() if name != OVERALL}}
        write_text(output, _dumps(data))
        return
    rows = [[name, _fmt(k.total, 0) if float(k.total).is_integer() else _fmt(k.total), _fmt(k.p_a),
             _fmt(k.p_e), _fmt(k.kappa)] for name, k in results.items()]
    write_text(output, text_table(["attribute", "T", "P(A)", "P(E)", "kappa"], rows, {1, 2, 3, 4}))


def _fmt_p(p: float) -> str:
    """A p-value: four decimals, or two significant digits below 0.0001 (``1.7e-09``)."""
    return f"{p:.1e}" if 0 < p < 0.0001 else _fmt(p)


def _regression_rows(regression) -> list[list[str]]:
    return [[name, _fmt(b), _fmt_p(regression.p_values[name])] for name, b in regression.coefficients.items()]


def _fit_table(fit, table, alpha_level: float) -> str:
    from ..render.tables import text_table

    out = []
    full, final = fit.full, fit.final
    out.append(f"Full model: N({fit.function.satisfaction}) on every factor, {full.n} dialogues, "
               f"R^2 = {_fmt(full.r_squared)}")
    out.append(text_table(["factor", "coefficient", "p-value"], _regression_rows(full), {1, 2}))
    out.append(f"Final model: the factors with p < {alpha_level:g}, R^2 = {_fmt(final.r_squared)}")
    if final.coefficients:
        out.append(text_table(["factor", "coefficient", "p-value"], _regression_rows(final), {1, 2}))
    else:
        out.append("(no factor is significant)\n")
    out.append(fit.function.formula() + "\n")
    header = ["dialogue", *(["group"] if fit.groups is not None else []), "performance"]
    rows = [[ident, *([fit.groups[i]] if fit.groups is not None else []), _fmt(p)]
            for i, (ident, p) in enumerate(zip(table.ids, fit.performance))]
    out.append(text_table(header, rows, {len(header) - 1}))
    if fit.groups is not None:
        rows = [[g, str(fit.group_sizes[g]), _fmt(m)] for g, m in fit.performance_by_group.items()]
        out.append(text_table(["group", "dialogues", "mean performance"], rows, {1, 2}))
        test = fit.t_test
        if test is None:
            out.append(f"(no t-test: it needs exactly two groups, there are {len(fit.performance_by_group)})\n")
        else:
            out.append(f"Student's two-sample t-test (equal variances), {test.first} vs {test.second}: "
                       f"t({test.df:g}) = {_fmt(test.statistic)}, p = {_fmt_p(test.p_value)}\n")
    return "\n".join(out)


@paradise.command("fit")
@click.argument("dialogues", metavar="DIALOGUES.csv")
@click.option("--satisfaction", required=True, metavar="COL", help="User satisfaction (what is predicted).")
@click.option("--success", required=True, metavar="COL", help="Task success, usually each dialogue's kappa.")
@click.option("--cost", "costs", multiple=True, required=True, metavar="COL",
              help="A cost measure (turns, seconds, repairs...); repeat for several.")
@click.option("--group", metavar="COL", help="Group column (e.g. the agent): mean performance per group, "
                                            "and with two groups Student's t-test.")
@click.option("--id", "id_column", metavar="COL", help="Column naming each dialogue (default: its number, 1...).")
@click.option("--alpha-level", default=0.05, show_default=True, type=float,
              help="Factors with p below this in the full model make the final model.")
@click.option("--save", metavar="FILE", help="Save the performance function as JSON for `paradise predict`.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_output_option
def paradise_fit(dialogues, satisfaction, success, costs, group, id_column, alpha_level, save, fmt, output):
    """Fit PARADISE's performance function on one CSV line per dialogue.

    Every factor (--success and each --cost) and --satisfaction are z-scored (sample standard
    deviation, n - 1). A multiple linear regression (statsmodels OLS, with an intercept, which is 0
    with z-scored data and not reported) of N(satisfaction) on all factors is the full model; the
    factors with p < --alpha-level make the final model, whose coefficients give

    \b
      Performance = alpha * N(success) - sum_i w_i * N(cost_i)

    Coefficients are printed signed as fitted (a cost's is usually negative). Then each dialogue's
    performance, the mean per --group and, with two groups, Student's two-sample t-test (equal
    variances; t is the group seen first minus the other).

    \b
    --format json prints {"full": {"coefficients": {factor: b}, "p_values": {...}, "r_squared": x},
    "final": {...}, "performance_by_group": {group: mean}, "t_test": {"statistic": t, "p_value": p},
    "performance_function": {...}, "performance": [{"dialogue", "group", "performance"}]};
    "t_test" is null unless there are two groups, "performance_by_group" empty without --group.

    \b
    Examples:
      castregin paradise fit dialogues.csv --satisfaction US --success kappa --cost turns --cost time
      castregin paradise fit dialogues.csv --satisfaction US --success kappa --cost turns --cost time \\
          --group agent --id dialogue --save performance.json --format json -o fit.json
    """
    from ..dialogue.paradise import fit_performance
    from ..formats.dialogue import performance_function_text, read_dialogues
    from ..formats.output import OutputSet, check_outputs

    check_outputs([output, save], [dialogues])
    table = read_dialogues(dialogues, list(dict.fromkeys([satisfaction, success, *costs])),
                           group=group, id_column=id_column)
    fit = fit_performance(table.columns, satisfaction=satisfaction, success=success, costs=costs,
                          groups=table.groups, alpha_level=alpha_level, source=table.source)
    if not fit.final.coefficients:
        click.echo(f"castregin: warning: no factor is significant at {alpha_level:g}; the performance "
                   "function is empty", err=True)
    if fmt == "json":
        data = {
            "full": fit.full.as_dict(),
            "final": fit.final.as_dict(),
            "performance_by_group": dict(fit.performance_by_group),
            "t_test": fit.t_test.as_dict() if fit.t_test else None,
            "performance_function": fit.function.as_dict(),
            "performance": [
                {"dialogue": ident, **({"group": fit.groups[i]} if fit.groups is not None else {}), "performance": p}
                for i, (ident, p) in enumerate(zip(table.ids, fit.performance))
            ],
        }
        text = _dumps(data)
    else:
        text = _fit_table(fit, table, alpha_level)
    with OutputSet([dialogues]) as outputs:  # the function and the report, both or neither
        if save:
            outputs.write_text(save, performance_function_text(fit.function))
        outputs.write_text(output, text)


@paradise.command("predict")
@click.argument("function_file", metavar="FUNCTION.json")
@click.argument("dialogues", metavar="DIALOGUES.csv")
@click.option("--id", "id_column", metavar="COL", help="Column naming each dialogue (default: its number, 1...).")
@click.option("--group", metavar="COL", help="Group column: also the mean performance per group.")
@click.option("--normalize", type=click.Choice(["fitted", "own"]), default="fitted", show_default=True,
              help="z-score with the mean and sd of the dialogues the function was fitted on (`fitted`), "
                   "or of the new dialogues themselves (`own`).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@_output_option
def paradise_predict(function_file, dialogues, id_column, group, normalize, fmt, output):
    """Apply a performance function saved by `paradise fit --save` to new dialogues.

    DIALOGUES.csv needs the columns the function uses (its final factors). By default they are
    z-scored with the fitted dialogues' means and standard deviations, so the values compare with
    theirs and a single dialogue can be scored; --normalize own z-scores the new set on its own.

    \b
    --format json prints {"performance_function": "...", "performance": [{"dialogue", "performance"}],
    "performance_by_group": {group: mean}}.

    \b
    Examples:
      castregin paradise predict performance.json new_dialogues.csv --id dialogue
      castregin paradise predict performance.json new_dialogues.csv --group agent --format csv -o perf.csv
    """
    import csv
    import io

    from ..dialogue.paradise import group_means, predict
    from ..formats import ensure_not_input, write_text
    from ..formats.dialogue import read_dialogues, read_performance_function
    from ..render.tables import text_table

    ensure_not_input(output, [function_file, dialogues])
    function = read_performance_function(function_file)
    table = read_dialogues(dialogues, list(function.coefficients), group=group, id_column=id_column)
    performance = (predict(function, table.columns, normalize=normalize, source=table.source)
                   if function.coefficients else [0.0] * len(table.ids))
    by_group, sizes = group_means(performance, table.groups) if table.groups is not None else ({}, {})
    records = [{"dialogue": ident, **({"group": table.groups[i]} if table.groups is not None else {}),
                "performance": p} for i, (ident, p) in enumerate(zip(table.ids, performance))]
    if fmt == "json":
        write_text(output, _dumps({"performance_function": function.formula(), "performance": records,
                                   "performance_by_group": by_group}))
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(list(records[0]))
        writer.writerows([[*r.values()][:-1] + [repr(r["performance"])] for r in records])
        write_text(output, buffer.getvalue())
    else:
        header = list(records[0])
        rows = [[*(str(v) for v in list(r.values())[:-1]), _fmt(r["performance"])] for r in records]
        text = function.formula() + "\n\n" + text_table(header, rows, {len(header) - 1})
        if by_group:
            text += "\n" + text_table(["group", "dialogues", "mean performance"],
                                      [[g, str(sizes[g]), _fmt(m)] for g, m in by_group.items()], {1, 2})
        write_text(output, text)


# --- scorekeeping ------------------------------------------------------------------------------------------

@main.group(short_help="clembench's privateshared game: episode scores.json and the leaderboard summary.")
def scorekeeping():
    """clembench's "privateshared" game: episode scores and the leaderboard summary.

    \b
      castregin scorekeeping score results/MODEL/privateshared/1_job-interview/episode_0 --format json
      castregin scorekeeping summary results/
    """


_EPISODE_COLUMNS = ("Aborted", "Accuracy", "Kappa", "Slot-Filling-Accuracy", "Main Score",
                    "Request Success Ratio")


@scorekeeping.command("score")
@click.argument("episodes", nargs=-1, required=True, metavar="EPISODE...")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--write", "write_beside", is_flag=True,
              help="Also write each episode's scores.json beside its interactions.json, in clembench's "
                   "layout (replacing the one there), as `clem score` does.")
@_output_option
def scorekeeping_score(episodes, fmt, write_beside, output):
    """clembench's scores of privateshared episodes, from their interactions.json.

    EPISODE is an episode directory or its interactions.json. Only fully played probing rounds
    ("Played Probe Rounds") are scored. Per round: request counts, Accuracy and (from round 1)
    Slot Filled?. Per episode: Middle-Accuracy (round int((slots+1)/2)-1), Accuracy, Kappa (Cohen's,
    as scikit-learn computes it), Truncated Kappa max(0, kappa), Slot-Filling-Accuracy, Main Score
    100*(2*sf*tk/(sf+tk)) (0 when sf+tk = 0), Aborted, Lose, Success, request counts and ratio.
    An aborted episode gets NaN game scores. On clembench's published episodes the scores are
    equal, and --write writes them byte for byte as clembench did.

    \b
    --format json prints clembench's scores.json structure {"turn scores": {"0": {...}, ...},
    "episode scores": {...}} for one EPISODE, and {interactions.json path: that structure} for
    several; undefined scores are NaN, as clembench writes them.

    \b
    Examples:
      castregin scorekeeping score results/gpt-4/privateshared/1_job-interview/episode_0
      castregin scorekeeping score results/*/privateshared/*/episode_*/interactions.json --format json
      castregin scorekeeping score results/*/privateshared/*/episode_* --write
    """
    import json
    from pathlib import Path

    from ..dialogue.scorekeeping import score_episode
    from ..errors import InputError
    from ..formats.dialogue import SCORES, interactions_path, read_interactions, scores_text
    from ..formats.output import OutputSet, check_outputs
    from ..render.tables import text_table

    inputs = [interactions_path(e) if e != "-" else e for e in episodes]
    if write_beside and "-" in episodes:
        raise InputError("--write needs episode files, not standard input")
    beside = [Path(p).parent / SCORES for p in inputs] if write_beside else []
    check_outputs([output, *beside], inputs)
    scored = []
    for episode in episodes:
        interactions, source = read_interactions(episode)
        scored.append((source, score_episode(interactions, source=source)))
    if fmt == "json":
        data = scored[0][1] if len(scored) == 1 else {source: scores for source, scores in scored}
        text = json.dumps(data, indent=None if len(scored) == 1 else 2) + "\n"
    else:
        header = ["episode", "rounds", *_EPISODE_COLUMNS]
        rows = []
        for source, scores in scored:
            name = str(Path(source).parent) if Path(source).name == "interactions.json" else source
            values = scores["episode scores"]
            rows.append([name, str(len(scores["turn scores"])), *(_fmt(values[c]) for c in _EPISODE_COLUMNS)])
        text = text_table(header, rows, set(range(1, len(header))))
    with OutputSet(inputs) as outputs:  # every scores.json and the report, or none of them
        for target, (_, scores) in zip(beside, scored):
            outputs.write_text(target, scores_text(scores))
        outputs.write_text(output, text)


@scorekeeping.command("summary")
@click.argument("runs_dir", metavar="RUNS_DIR")
@click.option("--rescore", is_flag=True,
              help="Score every episode from its interactions.json (privateshared only) instead of reading "
                   "the scores.json beside it.")
@click.option("--no-overall", is_flag=True, help="Leave out the per-game rows (experiment `all`).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@_output_option
def scorekeeping_summary(runs_dir, rescore, no_overall, fmt, output):
    """The clembench leaderboard's numbers per model, game and experiment.

    RUNS_DIR is laid out as clembench's results: MODEL/GAME/EXPERIMENT/EPISODE/scores.json (the
    model is everything between RUNS_DIR and the game, e.g. `v1.0/gpt-4-t0.0--gpt-4-t0.0`). Each
    episode's scores.json is read (an episode with only interactions.json is scored; --rescore
    scores them all). Per group:

    \b
      played       % played: 100 * (1 - mean of Aborted)
      quality      quality score: mean of Main Score over the non-aborted episodes (NaN ones skipped)
      quality_std  its sample standard deviation (n - 1; empty with fewer than two episodes)
      clemscore    played / 100 * quality

    A row with experiment `all` per model and game pools all its experiments (the leaderboard's
    per-game figure). JSON: a list of {"model", "game", "experiment", "episodes", "played",
    "quality", "quality_std", "clemscore"}, null where undefined.

    \b
    Examples:
      castregin scorekeeping summary results/
      castregin scorekeeping summary results/ --rescore --format json -o leaderboard.json
    """
    import csv
    import io

    from ..dialogue.scorekeeping import EpisodeRecord, score_episode, summarize
    from ..formats import write_text
    from ..formats.dialogue import INTERACTIONS, SCORES, find_episodes, read_interactions, read_scores
    from ..formats.output import check_outputs
    from ..render.tables import text_table

    locations = find_episodes(runs_dir)
    check_outputs([output], [where.directory / name for where in locations for name in (SCORES, INTERACTIONS)])
    records = []
    for location in locations:
        scores_file = location.directory / SCORES
        if rescore or not scores_file.exists():
            if not (location.directory / INTERACTIONS).exists():
                from ..errors import InputError

                raise InputError(f"no {INTERACTIONS} to score", source=str(location.directory))
            interactions, source = read_interactions(location.directory)
            scores = score_episode(interactions, source=source)
        else:
            scores = read_scores(scores_file)
        records.append(EpisodeRecord(location.model, location.game, location.experiment, location.episode,
                                     scores["episode scores"]))
    rows = summarize(records, overall=not no_overall)
    if fmt == "json":
        write_text(output, _dumps(rows))
        return
    columns = ["model", "game", "experiment", "episodes", "played", "quality", "quality_std", "clemscore"]
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if isinstance(row[c], float) and row[c] != row[c] else row[c] for c in columns])
        write_text(output, buffer.getvalue())
        return
    header = ["model", "game", "experiment", "episodes", "% played", "quality", "std", "clemscore"]
    body = [[r["model"], r["game"], r["experiment"], str(r["episodes"]), _fmt(r["played"], 2),
             _fmt(r["quality"], 2), "" if r["quality_std"] != r["quality_std"] else _fmt(r["quality_std"], 2),
             _fmt(r["clemscore"], 2)] for r in rows]
    write_text(output, text_table(header, body, {3, 4, 5, 6, 7}))
