"""Write docs/measures.md, the measure catalogue, from the measure registry.

    python docs/gen_measures.py            # rewrite docs/measures.md (`make docs-measures`)
    python docs/gen_measures.py --check    # exit 1 when it differs from what the registry says

Every registered measure (``castregin.evaluation.measures``: one ``Definition`` each) with its names in
both spellings, its formula, its parameters, how its ``all`` value is formed and the tool whose numbers
it gives, read off :func:`castregin.evaluation.measures.catalogue.measure_reference`; then the names
castregin refuses. tests/test_docs_measures.py fails when the committed page is not this output.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PAGE = Path(__file__).resolve().parent / "measures.md"
REGENERATE = "make docs-measures"

_HEADER = f"""\
# Measure catalogue

Every measure castregin gives a number for, with its names, its formula, its parameters and the tool
whose numbers it gives. Each is checked against that tool: `tests/evaluation/test_registry.py` walks
the registry, and a measure without an oracle fails it ([Evaluate](evaluate.md#the-measure-registry)
says how to add one). `castregin measures` prints the same list in short.

!!! note "Generated"
    This page is written by `{REGENERATE}` (`docs/gen_measures.py`) from the measure registry
    (`castregin/evaluation/measures/`), and `make test` fails when it differs from what the registry
    says: change a measure's declaration, then run `{REGENERATE}`.

**Names.** `castregin evaluate`, `compare`, `report` and the [Python API](api.md) take a measure's
ir_measures name (`nDCG@3`, `AP`, `P(rel=1)@5`) or its trec_eval name as trec_eval prints it
(`ndcg_cut_3`, `map`; a family with its default cutoffs: `P`, or given ones: `P.5,10`);
[`castregin trec_eval -m`](trec-eval.md) takes trec_eval's own (`ndcg_cut.3`). A name that is a
known one but for case and separators gets its spelling back in the error (`ndcg@5`: did you mean
`nDCG@5`?).

**Notation.** A turn's items are ranked as trec_eval ranks them (score descending, ties by item id
descending) and numbered from 1; `n` is the number retrieved (after `-M`), `R` the number the qrels
label at or above the relevance level (`--rel-level`, trec_eval's `-l`), `rel(k)` the relevant items
among the first `k`, `P(i) = rel(i) / i`, `num_rel_ret = rel(n)`. A turn is evaluated when both the
run and the qrels have it; the `all` value is formed from the turns' values as trec_eval 9.0.8 forms
it ([Evaluate](evaluate.md#the-all-value)).

"""


def _code(text: str | None) -> str:
    return f"`{text}`" if text else "-"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _parameter(parameter: dict) -> str:
    name = parameter["name"]
    words = [f"`{name}`" if name else "the parameter", parameter["description"]]
    line = f"{words[0]}: {words[1]}"
    if parameter["choices"]:
        line += " (" + " or ".join(f"`{choice!r}`" for choice in parameter["choices"]) + ")"
    default = parameter["default"]
    if isinstance(default, list):  # a parameter's values, several where trec_eval's all_trec takes several
        line += "; default `" + ",".join(f"{value:g}" if isinstance(value, float) else str(value)
                                         for value in default) + "`"
    elif default is not None:
        line += f"; default `{default!r}`"
    return line


def _anchor(row: dict) -> str:
    return f"measure-{row['name'].lower().replace('_', '-')}"


def _section(row: dict) -> str:
    names = [f"`{name}`" for name in row["ir_measures"]]
    trec = f"`{row['trec_eval']}` (`trec_eval -m {row['trec_eval_m']}`)" if row["trec_eval"] else None
    lines = [f"### {row['name']} {{ #{_anchor(row)} }}", ""]
    lines.append(f"- **Names**: {', '.join(names) or 'none in ir_measures'}"
                 + (f"; trec_eval's {trec}" if trec else "; not a trec_eval measure"))
    lines.append(f"- **Formula**: {row['formula']}")
    parameters = [_parameter(p) for p in row["parameters"]]
    lines.append(f"- **Parameters**: {'; '.join(parameters) if parameters else 'none'}")
    if row["numeric"]:
        level = "applies (relevant: labelled at or above it)" if row["level"] else "does not apply"
        lines.append(f"- **Relevance level**: {level}")
        lines.append(f"- **All value**: {row['aggregate']}" + ("" if row["per_turn"] else "; no per-turn value"))
    else:
        lines.append("- **Value**: text, printed by `castregin trec_eval` only")
    computed = {"engine": "the streaming engine (vectorised) and its rule", "trec_eval": "its rule",
                "rule": "its rule", "refused": "its rule, in `castregin trec_eval` only"}[row["backend"]]
    lines.append(f"- **Matches**: {row['matches']}; computed by {computed}")
    if row["note"]:
        lines.append(f"- **Note**: {row['note']}")
    return "\n".join(lines) + "\n\n"


def render() -> str:
    """The whole page."""
    from castregin.evaluation.measures import measure_catalogue
    from castregin.evaluation.measures.catalogue import measure_reference

    rows = measure_reference()
    parts = [_HEADER, "## At a glance\n\n",
             "| measure | ir_measures | trec_eval | matches |\n| --- | --- | --- | --- |\n"]
    for row in rows:
        ir_names = ", ".join(f"`{name}`" for name in row["ir_measures"]) or "-"
        parts.append(f"| [{row['name']}](#{_anchor(row)}) | {_cell(ir_names)} | {_code(row['trec_eval'])} | "
                     f"{row['matches']} |\n")
    parts.append("\n## The measures\n\n")
    parts += [_section(row) for row in rows]
    parts.append("## Refused\n\nWell-known names castregin refuses, and why (every other name ir_measures parses "
                 "and no oracle checks is refused too, in one line that says why: "
                 "[What castregin refuses](refusals.md#measures-it-cannot-check-against-trec_eval)).\n\n"
                 "| name | why |\n| --- | --- |\n")
    for row in measure_catalogue():
        if row["backend"] == "refused" and row["trec_eval"] is None:
            parts.append(f"| {_code(row['ir_measures'])} | {row['note']} |\n")
    return "".join(parts).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} differs from the measure registry: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
