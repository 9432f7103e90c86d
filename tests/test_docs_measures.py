"""The measure catalogue (docs/measures.md) is what the registry says: it cannot drift from the declarations.

docs/gen_measures.py writes the page; these tests write it again in memory and compare. After declaring or
changing a measure, `make docs-measures` rewrites the page.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path

from castregin.evaluation.measures import (
    CUT_LONG,
    Definition,
    IrName,
    Option,
    cutoff,
    parse_measure,
    register,
    registered,
    unregister,
)
from castregin.evaluation.measures.catalogue import measure_reference

REPO = Path(__file__).resolve().parent.parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_measures", REPO / "docs" / "gen_measures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_measures = _load_generator()


def test_the_committed_page_is_what_the_registry_says():
    committed = (REPO / "docs" / "measures.md").read_text(encoding="utf-8")
    generated = gen_measures.render()
    if committed != generated:
        diff = "".join(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                            "docs/measures.md (committed)", "the registry", n=1))
        raise AssertionError(f"docs/measures.md differs from the measure registry: run "
                             f"`{gen_measures.REGENERATE}` and commit docs/measures.md\n{diff[:4000]}")


def test_every_measure_has_its_section_formula_and_oracle():
    page = gen_measures.render()
    for definition in registered():
        assert definition.formula, f"{definition.name}: declare its formula"
        assert definition.matches, f"{definition.name}: declare the tool whose numbers it gives (oracle=...)"
        section = page.split(f"### {definition.name} {{ #", 1)[1].split("\n### ", 1)[0]
        assert f"**Formula**: {definition.formula}" in section
        assert f"**Matches**: {definition.matches}" in section
        for alias in definition.ir_measures:
            assert f"`{alias.shown}`" in section
        for option in definition.options:
            assert f"`{option.name}`: {option.description}" in section


def test_both_spellings_of_a_measure_name_the_same_definition():
    # The page's two spellings of each cutoff measure, read back: nDCG@3 and ndcg_cut_3 are ndcg_cut at 3.
    rows = {row["name"]: row for row in measure_reference()}
    checked = 0
    for definition in registered():
        row = rows[definition.name]
        if definition.kind != CUT_LONG or not definition.numeric:
            continue
        spellings = [row["trec_eval"].replace("_k", "_3")] if row["trec_eval"] else []
        spellings += [shown.replace("@k", "@3") for shown in row["ir_measures"]]
        for spelling in spellings:
            (measure,) = parse_measure(spelling)
            assert (measure.definition.name, measure.param) == (definition.name, 3), spelling
            checked += 1
    assert checked >= 20


def test_the_check_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "measures.md"
    stale.write_text(gen_measures.render().replace("gm_map", "gm_ap"), encoding="utf-8")
    monkeypatch.setattr(gen_measures, "PAGE", stale)
    assert gen_measures.main(["--check"]) == 1
    assert "run `make docs-measures`" in capsys.readouterr().err


def test_a_new_declaration_shows_on_the_page():
    # The docs' own example (docs/evaluate.md, Adding a measure), with a typed option: its names, formula and
    # parameters come out of the declaration.
    definition = register(Definition(
        "hit_at", lambda ranking, settings, params: [0.0], cutoff((1, 3)), trec_name=False,
        ir_measures=(IrName("HitAt", "HitAt(depth=2)@k", cutoff=True),),
        options=(Option("depth", 2, "how deep to look", ()),), formula="1 if the item at rank k is relevant",
        oracle="the test's own count"))
    try:
        page = gen_measures.render()
    finally:
        unregister(definition.name)
    section = page.split("### hit_at { #measure-hit-at }", 1)[1].split("\n### ", 1)[0]
    assert "`HitAt(depth=2)@k`; not a trec_eval measure" in section
    assert "**Formula**: 1 if the item at rank k is relevant" in section
    assert "`k`: a cutoff" in section and "default `1,3`" in section
    assert "`depth`: how deep to look; default `2`" in section
    assert "**Matches**: the test's own count" in section
    assert re.search(r"\| \[hit_at\]\(#measure-hit-at\) \| `HitAt\(depth=2\)@k` \| - \| the test's own count \|", page)
