"""Commands of the castregin CLI for the dialogue stage (registered on `castregin.cli.main`).

``castregin paradise`` (kappa, fit, predict): PARADISE's task success and performance function;
``castregin scorekeeping`` (score, summary): clembench's privateshared scores and leaderboard. The
work is in :mod:`castregin.dialogue` and :mod:`castregin.formats.dialogue`, imported inside the
commands so that ``castregin --help`` loads neither numpy nor statsmodels.
"""

from __future__ import annotations

import click

from . import main
from .options import FiniteFloat, InputPath, OutputPath, format_option, output_option

# --- paradise ----------------------------------------------------------------------------------------------

@main.group(short_help="PARADISE: task success as kappa, the performance function (Walker et al. 1997).")
def paradise():
    """PARADISE (Walker et al. 1997): task success as kappa, and the performance function.

    \b
    Examples:
      castregin paradise kappa avm.csv --attribute-groups depart-city=4,arrival-city=4,depart-range=2,depart-time=4
      castregin paradise fit dialogues.csv --satisfaction US --success kappa --cost turns --cost time \\
          --group agent --save performance.json
      castregin paradise predict performance.json new_dialogues.csv --id dialogue
    """


@paradise.command("kappa")
@click.argument("matrix_file", type=InputPath(), metavar="MATRIX.csv")
@click.option("--attribute-groups", "groups_spec", metavar="NAME=N,...|labels",
              help="The attribute blocks, for a kappa per attribute: consecutive block sizes "
                   "(depart-city=4,arrival-city=4,...) or `labels` to group values labelled ATTRIBUTE:VALUE.")
@format_option(["table", "json"])
@output_option()
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
    from ..formats import display_name, write_text
    from ..formats.dialogue import read_avm_matrix
    from ..formats.output import check_outputs
    from ..render.dialogue import kappa_report

    check_outputs([output], [matrix_file])
    source = display_name(matrix_file)
    labels, matrix = read_avm_matrix(matrix_file)
    groups = parse_attribute_groups(groups_spec, labels, source=source) if groups_spec else []
    write_text(output, kappa_report(avm_kappas(matrix, groups, source=source), OVERALL, fmt))








@paradise.command("fit")
@click.argument("dialogues", type=InputPath(), metavar="DIALOGUES.csv")
@click.option("--satisfaction", required=True, metavar="COL", help="User satisfaction (what is predicted).")
@click.option("--success", required=True, metavar="COL", help="Task success, usually each dialogue's kappa.")
@click.option("--cost", "costs", multiple=True, required=True, metavar="COL",
              help="A cost measure (turns, seconds, repairs...); repeat for several.")
@click.option("--group", metavar="COL", help="Group column (e.g. the agent): mean performance per group, "
                                            "and with two groups Student's t-test.")
@click.option("--id", "id_column", metavar="COL", help="Column naming each dialogue (default: its number, 1...).")
@click.option("--alpha-level", default=0.05, show_default=True, type=FiniteFloat(),
              help="Factors with p below this in the full model make the final model.")
@click.option("--save", type=OutputPath(), metavar="FILE",
              help="Save the performance function as JSON for `paradise predict`.")
@format_option(["table", "json"])
@output_option()
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
    from ..render.dialogue import fit_report

    check_outputs([output, save], [dialogues])
    table = read_dialogues(dialogues, list(dict.fromkeys([satisfaction, success, *costs])),
                           group=group, id_column=id_column)
    fit = fit_performance(table.columns, satisfaction=satisfaction, success=success, costs=costs,
                          groups=table.groups, alpha_level=alpha_level, source=table.source)
    if not fit.final.coefficients:
        click.echo(f"castregin: warning: no factor is significant at {alpha_level:g}; the performance "
                   "function is empty", err=True)
    with OutputSet([dialogues]) as outputs:  # the function and the report, both or neither
        if save:
            outputs.write_text(save, performance_function_text(fit.function))
        outputs.write_text(output, fit_report(fit, table.ids, alpha_level, fmt))


@paradise.command("predict")
@click.argument("function_file", type=InputPath(), metavar="FUNCTION.json")
@click.argument("dialogues", type=InputPath(), metavar="DIALOGUES.csv")
@click.option("--id", "id_column", metavar="COL", help="Column naming each dialogue (default: its number, 1...).")
@click.option("--group", metavar="COL", help="Group column: also the mean performance per group.")
@click.option("--normalize", type=click.Choice(["fitted", "own"]), default="fitted", show_default=True,
              help="z-score with the mean and sd of the dialogues the function was fitted on (`fitted`), "
                   "or of the new dialogues themselves (`own`).")
@format_option(["table", "csv", "json"])
@output_option()
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
    from ..dialogue.paradise import PerformanceFunction, group_means, predict
    from ..formats import write_text
    from ..formats.dialogue import read_dialogues, read_performance_function
    from ..formats.output import check_outputs
    from ..render.dialogue import prediction_report

    check_outputs([output], [function_file, dialogues])
    function = PerformanceFunction.from_dict(read_performance_function(function_file), source=function_file)
    table = read_dialogues(dialogues, list(function.coefficients), group=group, id_column=id_column)
    performance = predict(function, table.columns, normalize=normalize, source=table.source,
                          dialogues=len(table.ids))
    by_group, sizes = group_means(performance, table.groups)
    write_text(output, prediction_report(function.formula(), table.ids, table.groups, performance, by_group, sizes,
                                         fmt))


# --- scorekeeping ------------------------------------------------------------------------------------------

@main.group(short_help="clembench's privateshared game: episode scores.json and the leaderboard summary.")
def scorekeeping():
    """clembench's "privateshared" game: episode scores and the leaderboard summary.

    \b
    Examples:
      castregin scorekeeping score results/MODEL/privateshared/1_job-interview/episode_0 --format json
      castregin scorekeeping summary results/
    """




@scorekeeping.command("score")
@click.argument("episodes", nargs=-1, required=True, type=InputPath(), metavar="EPISODE...")
@format_option(["table", "json"])
@click.option("--write", "write_beside", is_flag=True,
              help="Also write each episode's scores.json beside its interactions.json, in clembench's "
                   "layout (replacing the one there), as `clem score` does.")
@output_option()
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
    from pathlib import Path

    from ..dialogue.scorekeeping import score_episode
    from ..errors import InputError
    from ..formats.dialogue import SCORES, interactions_path, read_interactions, scores_text
    from ..formats.output import OutputSet, check_outputs
    from ..render.dialogue import episode_scores_report

    inputs = [interactions_path(e) if e != "-" else e for e in episodes]
    if write_beside and "-" in episodes:
        raise InputError("--write needs episode files, not standard input")
    beside = [Path(p).parent / SCORES for p in inputs] if write_beside else []
    check_outputs([output, *beside], inputs)
    scored = []
    for episode in episodes:
        interactions, source = read_interactions(episode)
        scored.append((source, score_episode(interactions, source=source)))
    with OutputSet(inputs) as outputs:  # every scores.json and the report, or none of them
        if write_beside:
            for target, (_, scores) in zip(beside, scored, strict=True):
                outputs.write_text(target, scores_text(scores))
        outputs.write_text(output, episode_scores_report(scored, fmt))


@scorekeeping.command("summary")
@click.argument("runs_dir", type=InputPath(), metavar="RUNS_DIR")
@click.option("--rescore", is_flag=True,
              help="Score every episode from its interactions.json (privateshared only) instead of reading "
                   "the scores.json beside it.")
@click.option("--no-overall", is_flag=True, help="Leave out the per-game rows (experiment `all`).")
@format_option(["table", "csv", "json", "markdown", "latex"])
@output_option()
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
    from ..dialogue.scorekeeping import episode_records, summarize
    from ..formats import write_text
    from ..formats.dialogue import INTERACTIONS, SCORES, find_episodes
    from ..formats.output import check_outputs
    from ..render.dialogue import leaderboard_report

    locations = find_episodes(runs_dir)
    check_outputs([output], [where.directory / name for where in locations for name in (SCORES, INTERACTIONS)])
    write_text(output, leaderboard_report(summarize(episode_records(locations, rescore), overall=not no_overall),
                                          fmt))
