"""PARADISE and scorekeeping results as tables (people), CSV and JSON (programs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..formats.common import json_text
from .numbers import fixed, p_value
from .tables import csv_text, render_table, text_table

#: The episode scores `scorekeeping score` shows in its table.
EPISODE_COLUMNS = ("Aborted", "Accuracy", "Kappa", "Slot-Filling-Accuracy", "Main Score", "Request Success Ratio")
#: The leaderboard's columns, as `scorekeeping summary --format json|csv` names them.
LEADERBOARD_COLUMNS = ("model", "game", "experiment", "episodes", "played", "quality", "quality_std", "clemscore")


def kappa_report(results: Mapping, overall: str, fmt: str) -> str:
    """``paradise kappa``: P(A), P(E) and kappa, overall and per attribute."""
    if fmt == "json":
        return json_text({"overall": results[overall].as_dict(),
                          "attributes": {name: k.as_dict() for name, k in results.items() if name != overall}})
    rows = [[name, fixed(k.total, integer=True), fixed(k.p_a), fixed(k.p_e), fixed(k.kappa)]
            for name, k in results.items()]
    return text_table(["attribute", "T", "P(A)", "P(E)", "kappa"], rows, {1, 2, 3, 4})


def _regression_rows(regression) -> list[list[str]]:
    return [[name, fixed(b), p_value(regression.p_values[name])] for name, b in regression.coefficients.items()]


def _performance_records(ids: Sequence[str], groups: Sequence[str] | None, performance: Sequence[float]) -> list[dict]:
    return [{"dialogue": ident, **({"group": groups[i]} if groups is not None else {}), "performance": p}
            for i, (ident, p) in enumerate(zip(ids, performance, strict=True))]


def _group_table(means: Mapping[str, float], sizes: Mapping[str, int]) -> str:
    return text_table(["group", "dialogues", "mean performance"],
                      [[g, str(sizes[g]), fixed(m)] for g, m in means.items()],
                      {1, 2})


def fit_report(fit, ids: Sequence[str], alpha_level: float, fmt: str) -> str:
    """``paradise fit``: both regressions, the function, each dialogue's performance, the t-test."""
    records = _performance_records(ids, fit.groups, fit.performance)
    if fmt == "json":
        return json_text({
            "full": fit.full.as_dict(), "final": fit.final.as_dict(),
            "performance_by_group": dict(fit.performance_by_group),
            "t_test": fit.t_test.as_dict() if fit.t_test else None,
            "performance_function": fit.function.as_dict(), "performance": records,
        })
    full, final = fit.full, fit.final
    title = f"Full model: N({fit.function.satisfaction}) on every factor, {full.n} dialogues"
    out = [f"{title}, R^2 = {fixed(full.r_squared)}",
           text_table(["factor", "coefficient", "p-value"], _regression_rows(full), {1, 2}),
           f"Final model: the factors with p < {alpha_level:g}, R^2 = {fixed(final.r_squared)}"]
    if final.coefficients:
        out.append(text_table(["factor", "coefficient", "p-value"], _regression_rows(final), {1, 2}))
    else:
        out.append("(no factor is significant)\n")
    out.append(fit.function.formula() + "\n")
    header = list(records[0]) if records else ["dialogue", "performance"]
    out.append(text_table(header, [[*(str(v) for v in list(r.values())[:-1]), fixed(r["performance"])]
                                   for r in records], {len(header) - 1}))
    if fit.groups is not None:
        out.append(_group_table(fit.performance_by_group, fit.group_sizes))
        test = fit.t_test
        if test is None:
            out.append(f"(no t-test: it needs exactly two groups, there are {len(fit.performance_by_group)})\n")
        else:
            out.append(f"Student's two-sample t-test (equal variances), {test.first} vs {test.second}: "
                       f"t({test.df:g}) = {fixed(test.statistic)}, p = {p_value(test.p_value)}\n")
    return "\n".join(out)


def prediction_report(formula: str, ids: Sequence[str], groups: Sequence[str] | None, performance: Sequence[float],
                      by_group: Mapping[str, float], sizes: Mapping[str, int], fmt: str) -> str:
    """``paradise predict``: each dialogue's performance, and the mean per group."""
    records = _performance_records(ids, groups, performance)
    if fmt == "json":
        return json_text({"performance_function": formula, "performance": records, "performance_by_group": by_group})
    header = list(records[0])
    if fmt == "csv":
        return csv_text(header, [[*list(r.values())[:-1], repr(r["performance"])] for r in records])
    rows = [[*(str(v) for v in list(r.values())[:-1]), fixed(r["performance"])] for r in records]
    text = formula + "\n\n" + text_table(header, rows, {len(header) - 1})
    return text + ("\n" + _group_table(by_group, sizes) if by_group else "")


def episode_scores_report(scored: Sequence[tuple[str, dict]], fmt: str) -> str:
    """``scorekeeping score``: clembench's scores.json structure (JSON) or a row per episode."""
    if fmt == "json":
        import json

        # clembench's own serialisation: NaN stays NaN, as in the scores.json files it writes.
        data = scored[0][1] if len(scored) == 1 else dict(scored)
        return json.dumps(data, indent=None if len(scored) == 1 else 2) + "\n"
    header = ["episode", "rounds", *EPISODE_COLUMNS]
    rows = []
    for source, scores in scored:
        name = str(Path(source).parent) if Path(source).name == "interactions.json" else source
        values = scores["episode scores"]
        rows.append([name, str(len(scores["turn scores"])), *(fixed(values.get(c)) for c in EPISODE_COLUMNS)])
    return text_table(header, rows, set(range(1, len(header))))


def leaderboard_report(rows: Sequence[Mapping], fmt: str) -> str:
    """``scorekeeping summary``: played, quality and clemscore per model, game and experiment."""
    if fmt == "json":
        return json_text(list(rows))
    if fmt == "csv":
        return csv_text(LEADERBOARD_COLUMNS, [["" if isinstance(r[c], float) and r[c] != r[c] else r[c]
                                               for c in LEADERBOARD_COLUMNS] for r in rows])
    header = ["model", "game", "experiment", "episodes", "% played", "quality", "std", "clemscore"]
    body = [[r["model"], r["game"], r["experiment"], str(r["episodes"]), fixed(r["played"], 2), fixed(r["quality"], 2),
             fixed(r["quality_std"], 2, undefined=""), fixed(r["clemscore"], 2)] for r in rows]
    return render_table(header, body, fmt, {3, 4, 5, 6, 7})  # table, markdown or latex


#: Episodes a run that did not play them all names on standard error (run_log.json lists every one).
EPISODES_NAMED = 5


def play_summary(log: Mapping) -> list[str]:
    """What ``castregin play`` says on standard error after a run: the episodes not played and why (the first
    few named), then the episodes played, the calls, tokens and cost."""
    from ..dialogue.privateshared_play import NOT_PLAYED

    lines = []
    this = log["this_run"]
    missing = log["not_played"]
    if missing:
        reasons: dict[str, int] = {}
        for episode in missing:
            reasons[episode["status"]] = reasons.get(episode["status"], 0) + 1
        why = ", ".join(f"{n}: {NOT_PLAYED.get(status, status)}" for status, n in reasons.items())
        first = f"; the first error: {this['first_failure']}" if this["first_failure"] else ""
        named = ", ".join(episode["episode"] for episode in missing[:EPISODES_NAMED])
        more = f" and {len(missing) - EPISODES_NAMED} more (see run_log.json)" if len(missing) > EPISODES_NAMED else ""
        lines.append(f"castregin: warning: {len(missing)} episode(s) not played ({why}){first}: {named}{more}; "
                     "run the same command again to play them (their answers so far come from the cache)")
    lines.append(f"castregin: {log['episodes_played']} episode(s) played in this run, {log['episodes_already_played']} "
                 f"played before, {len(missing)} not played; {log['calls']} calls ({this['from_cache']} answers "
                 f"from the cache, {this['requests']} requests now); tokens {log['tokens']['prompt']} in, "
                 f"{log['tokens']['completion']} out; cost ${log['cost']['usd']:.4f}")
    return lines
