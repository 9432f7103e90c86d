"""Every registered measure against an independent oracle: the test walks the registry.

A measure is proved on every path that computes it: ``evaluate`` in memory (the engine where it has a
vectorised computation, else its rule), its rule alone (the plain path of small files and of the
measures the engine lacks), its vectorised computation alone, and ``castregin trec_eval``. The oracles:

- pytrec_eval (trec_eval's C code, 32-bit scores: castregin's ``score_precision="float"``) on random
  qrels and runs with ties, unjudged items and grades 0-4, per turn and the ``all`` values (trec_eval's
  ``calc_avg`` rules, as tests/evaluation/test_measures_oracle.py forms them);
- the trec_eval 9.0.8 binary's outputs kept in tests/cli/data/trec_eval (random runs, and random qrels
  with labels below 0), compared line for line with what ``castregin trec_eval`` prints of the measure;
- ir_measures' judged provider for Judged@k;
- NIST's sample_eval.pl's outputs kept in tests/cli/data/sample_eval (random stratified samples, per topic with
  ``-q`` and the ``all`` values; at relevance level 1, the script's, and 2) for the inferred measures.

A registered measure without an oracle case fails here: register it with one (:data:`ORACLES`).
"""

from __future__ import annotations

import importlib
import math
import random
import re
import sys
import warnings
from pathlib import Path

import ir_measures
import pytest
import pytrec_eval

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from trec_eval_oracle import kept_output, negative_pair, random_pair

from castregin import formats
from castregin.data import Qrels, Run
from castregin.errors import CoverageWarning, InputError
from castregin.evaluation import engine, plain, trec_rules
from castregin.evaluation.evaluate import evaluate_rows
from castregin.evaluation.measures import (
    COUNT_TURNS,
    CUT_DOUBLE,
    GEOMETRIC,
    NO_PARAM,
    NUM_REL,
    P_DOUBLE,
    SUM,
    TREC_SETS,
    Definition,
    IrName,
    Param,
    cutoff,
    lookup,
    mark_measures,
    measure_catalogue,
    parse_measure,
    register,
    registered,
    registry,
    unregister,
)
from castregin.evaluation.measures.registry import BUILT_IN, BUILT_IN_IR_NAMES
from castregin.evaluation.trec_eval import TrecEvalOptions, trec_eval_lines
from castregin.formats import columnar
from castregin.render.trec import trec_eval_text

#: Random runs and qrels share few turns, or none, by design: the coverage warnings they raise are the subject of
#: tests/evaluation/test_coverage.py, not of these comparisons of numbers.
pytestmark = pytest.mark.filterwarnings("ignore::castregin.errors.CoverageWarning")


def random_case(seed: int, labels=(0, 0, 0, 1, 2, 3, 4)) -> tuple[dict, dict]:
    """Qrels and a run: ties (also of scores equal as floats only), unjudged items, turns on one side only."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for t in range(rng.randint(12, 20)):
        turn = f"{rng.randint(1, 9)}_{t}-{rng.randint(1, 9)}"
        items = [f"d{rng.randint(0, 50)}" for _ in range(rng.randint(3, 30))]
        if rng.random() < 0.9:
            qrels[turn] = {item: rng.choice(labels) for item in items[:rng.randint(1, len(items))]}
            qrels[turn].update({f"x{n}": rng.choice(labels) for n in range(rng.randint(0, 4))})  # never retrieved
        if rng.random() < 0.9:
            run[turn] = {item: rng.choice([round(rng.random(), 2), 0.5, 1.0, 1.0 + 1e-10]) for item in items}
    return qrels, run


CASES = [random_case(seed) for seed in range(4)]


def _calc_avg(definition: Definition, per_query: list[float], qrels: dict) -> float:
    """trec_eval's ``all`` value from its per-query values (summed in the queries' byte order)."""
    if definition.aggregate == COUNT_TURNS:
        return float(len(per_query))
    if definition.aggregate in (SUM, NUM_REL):
        return math.fsum(per_query)
    if definition.aggregate == GEOMETRIC:
        return math.exp(math.fsum(per_query) / len(per_query))
    return math.fsum(per_query) / len(per_query)


def name_at(definition: Definition, cutoff: int = 3) -> str:
    """A name that asks for ``definition``, read off its declaration: trec_eval's family name (``P``: its default
    cutoffs), else its first ir_measures name at ``cutoff`` (``HitAt@3`` for the docs' ``hit_at``, whose ir_measures
    name is not its own)."""
    if definition.trec_name:
        return definition.name
    alias = definition.ir_measures[0]
    return alias.shown.replace("@k", f"@{cutoff}") if alias.cutoff is not False else alias.shown


def _check_paths(definition: Definition, rel_level: int, qrels: dict, run: dict, oracle: dict[str, dict]) -> None:
    """evaluate in memory, the rule, and the vectorised computation against ``oracle``
    ``{value name: {turn: value}}``."""
    measures = parse_measure(name_at(definition), rel_level)
    rows = evaluate_rows(Run("r", run), Qrels(qrels, name="q"), measures, rel_level, per_turn=True,
                         score_precision="float")
    by_rule = plain.evaluate_run(run, qrels, measures, 32)
    by_engine = engine.evaluate_run(columnar.run_from_dict(Run("r", run)), engine.QrelsIndex(
        columnar.qrels_from_dict(Qrels(qrels, name="q"))), measures, score_bits=32) if definition.vectorised else None
    assert {m.name for m in measures} == set(oracle)
    for position, measure in enumerate(measures):
        want = oracle[measure.name]
        got = {turn: value for _, _, name, turn, value in rows if name == measure.name and turn != "all"}
        assert got == (pytest.approx(want, abs=1e-12) if definition.per_turn else {}), measure.name
        assert by_rule[position] == pytest.approx(want, abs=1e-12), (measure.name, "rule")
        if by_engine is not None:
            assert by_engine[position] == pytest.approx(want, abs=1e-12), (measure.name, "vectorised")
        mean = next(value for _, _, name, turn, value in rows if name == measure.name and turn == "all")
        assert mean == pytest.approx(_calc_avg(definition, [want[t] for t in sorted(want)], qrels), abs=1e-12)


def _pytrec_eval_case(definition: Definition) -> None:
    for qrels, run in CASES:
        for rel_level in (1, 2):
            evaluator = pytrec_eval.RelevanceEvaluator(qrels, {definition.name}, relevance_level=rel_level)
            per_query = evaluator.evaluate(run)
            names = {name for values in per_query.values() for name in values}
            oracle = {name: {turn: values[name] for turn, values in per_query.items()} for name in names}
            _check_paths(definition, rel_level, qrels, run, oracle)


#: Kept outputs of the binary: (pair maker, seed, file, trec_eval options as TrecEvalOptions' fields).
KEPT = [(random_pair, seed, f"random{seed}_q.txt.gz", {}) for seed in range(3)] + \
       [(negative_pair, seed, f"negative{seed}_all.txt.gz", {}) for seed in range(2)] + \
       [(negative_pair, seed, f"negative{seed}_J_l2.txt.gz", {"rel_level": 2, "judged_only": True})
        for seed in range(2)]


def _kept_output_case(definition: Definition, directory: Path) -> None:
    names = set(mark_measures([definition.name])[0].names) or {definition.name}
    for make, seed, kept, options in KEPT:
        qrels_path, run_path = make(seed, directory)
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path, extra_columns=True)
        lines = trec_eval_lines(qrels, run, TrecEvalOptions(("all_trec",), per_query=True, **options),
                                runid=run.last_tag)
        expected = [line for line in kept_output(kept).decode().splitlines(keepends=True)
                    if line.split("\t")[0].strip() in names]
        assert expected, (definition.name, kept)
        assert [line for line in trec_eval_text(lines).splitlines(keepends=True)
                if line.split("\t")[0].strip() in names] == expected, (definition.name, kept)


def _trec_eval_case(definition: Definition, directory: Path) -> None:
    if definition.numeric:
        _pytrec_eval_case(definition)
    _kept_output_case(definition, directory)


def _judged_case(definition: Definition, directory: Path) -> None:
    # ir_measures counts every qrels line as judged, castregin (as trec_eval) not those below 0.
    for qrels, run in [random_case(seed, labels=(-1, 0, 1, 2)) for seed in range(4)]:
        judged_lines = {t: {i: label for i, label in items.items() if label >= 0} for t, items in qrels.items()}
        metrics = ir_measures.judged.iter_calc([ir_measures.parse_measure("Judged@3")], judged_lines, run)
        oracle = {t: 0.0 for t in run if t in qrels}  # ir_measures skips a turn without lines: none is judged
        oracle.update({m.query_id: m.value for m in metrics if m.query_id in run and m.query_id in qrels})
        _check_paths(definition, 1, qrels, run, {"Judged@3": oracle})


def _gdeval_ndeval_case(definition: Definition, directory: Path) -> None:
    # gdeval.pl's and ndeval.c's kept outputs (tests/cli/gdeval_ndeval_oracle.py).
    from test_novelty_measures import check_against_originals

    # The first 30 cases (test_novelty_measures.py compares all of them, in both of ndeval's orders).
    assert check_against_originals(definition.name, limit=30) > 30


def _rbp_case(definition: Definition, directory: Path) -> None:
    # trectools' kept values (tests/evaluation/rbp_oracle.py).
    from test_novelty_measures import check_rbp

    assert check_rbp(definition.name) > 100


#: The values sample_eval.pl prints of each inferred measure: {castregin's name: the script's} (infIPrec: the means
#: only, the script prints no value per topic).
SAMPLE_EVAL_NAMES = {
    "xinfAP": {"xinfAP": "infAP"}, "infNDCG": {"infNDCG": "infNDCG"},
    "iP": {f"iP@{k}": f"iP{k}" for k in (10, 50, 1000)},
    "infIPrec": {f"infIPrec@{r / 10:g}": f"iprec@rec{r / 10:4.2f}" for r in range(11)},
    "inum_rel_ret": {"inum_rel_ret": "inum_rel_ret"}, "inum_rel": {"inum_rel": "inum_rel"},
}


def _printed(text: str) -> dict[tuple[str, str], str]:
    """``{(name, topic or "all"): value as printed}`` of sample_eval.pl's output."""
    return {(fields[0], fields[1]): fields[2].strip()
            for fields in ([field for field in line.split("\t") if field] for line in text.splitlines())}


def _sample_eval_case(definition: Definition, directory: Path) -> None:
    # sample_eval.pl's kept outputs (tests/cli/sample_eval_oracle.py): what evaluate prints, at the script's four
    # decimals, per turn (-q) and over the turns, on the stratified qrels read from the file as evaluate reads it.
    from sample_eval_oracle import cases, kept_outputs

    names = SAMPLE_EVAL_NAMES[definition.name]
    compared = 0
    for case, (qrels_text, run_text, options) in cases().items():
        # The script strips the leading zeros of the run's topics (evaluate takes ids as they are).
        (directory / "r.run").write_text("".join(line.lstrip("0") + "\n" for line in run_text.splitlines()))
        run = formats.read_run(directory / "r.run")
        (directory / "q.qrel").write_text(qrels_text)
        qrels = formats.read_qrels(directory / "q.qrel", stratified=None)
        for level in (1, 2):
            # At level 2 the script read the qrels with the labels 1 made 0; infNDCG takes every label above 0 as
            # its gain, whatever the level: the script's output on the qrels as they are.
            kept = level if definition.uses_level else 1
            printed = _printed(kept_outputs(kept)[case])
            measures = [m for name in names for m in parse_measure(name, level)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CoverageWarning)  # runs covering few of the qrels' turns
                rows = evaluate_rows(run, qrels, measures, level, per_turn=True)
            by_rule = plain.evaluate_run(run.scores, qrels.labels, measures)
            every_qrels_turn = set(qrels.labels) <= set(run.scores)
            for position, measure in enumerate(measures):
                printed_name = names[measure.name]
                got = {turn: value for _, _, name, turn, value in rows if name == measure.name}
                for turn, value in got.items():
                    if turn == "all" and measure.name == "inum_rel" and not every_qrels_turn:
                        # The script sums every qrels turn, evaluate the turns evaluated: the sum of the script's.
                        shown = [float(printed[printed_name, t]) for t in got if t != "all"
                                 if (printed_name, t) in printed]
                        if len(shown) == len(got) - 1:
                            assert value == pytest.approx(math.fsum(shown), abs=5e-5 * len(shown))
                            compared += 1
                        continue
                    wanted = printed.get((printed_name, turn))
                    if wanted is not None:
                        assert f"{value:.4f}" == wanted, (case, level, measure.name, turn)
                        compared += 1
                    else:
                        # Not printed: a turn's value without -q, or of the interpolated precision.
                        assert turn != "all" and ((kept == 1 and "-q" not in options) or printed_name.startswith(
                            "iprec")), (case, level, measure.name, turn)
                assert by_rule[position] == {turn: value for turn, value in got.items() if turn != "all"}
    assert compared > 400, compared


#: The oracle case of each registered measure, by name.
ORACLES = {**dict.fromkeys(TREC_SETS["all_trec"], _trec_eval_case), "Judged": _judged_case,
           **dict.fromkeys(("gdeval_nDCG", "ERR", "alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall",
                            "NRBP", "nNRBP", "AP_IA"), _gdeval_ndeval_case),
           **dict.fromkeys(("RBP", "RBP_residual"), _rbp_case), **dict.fromkeys(SAMPLE_EVAL_NAMES, _sample_eval_case)}



@pytest.mark.parametrize("definition", registered(), ids=lambda definition: definition.name)
def test_every_registered_measure_equals_its_oracle(definition, tmp_path):
    case = ORACLES.get(definition.name)
    assert case is not None, f"measure {definition.name} has no oracle case: add one to ORACLES"
    case(definition, tmp_path)


def _rules(run: dict, qrels: dict, measures) -> list[dict[str, float]]:
    """The measures' rules on every turn, none refused (the engine's contract; evaluate refuses, for the measures
    without ``any_label``, what trec_eval cannot evaluate: tests/cli/test_trec_eval_labels.py)."""
    evaluation = plain.evaluate(qrels, run, [m.marked() for m in measures],
                                trec_rules.Settings(measures[0].rel), strict=False)
    return [{topic.topic: topic.values[i][0] for topic in evaluation.topics} for i in range(len(measures))]


@pytest.mark.parametrize("definition", [d for d in registered() if d.vectorised and d.numeric],
                         ids=lambda definition: definition.name)
def test_vectorised_and_rule_agree_on_any_label(definition):
    """What a vectorised computation promises its rule keeps too: labels anywhere in signed 64 bits, and a
    turn labelled only below 0, which scores as one where nothing is judged (a refusal, the same one)."""
    labels = (-(2 ** 40), -1, 0, 1, 3, 2 ** 40, 2 ** 62)

    def outcome(compute, *args):
        try:
            return compute(*args)
        except InputError as refusal:
            return str(refusal)

    def by_the_engine(run, qrels, measures):
        return engine.evaluate_run(columnar.run_from_dict(Run("r", run)),
                                   engine.QrelsIndex(columnar.qrels_from_dict(Qrels(qrels, name="q"))), measures)

    for seed in range(4):
        qrels, run = random_case(seed, labels)
        qrels["negative"] = {"a": -1, "b": -3}
        run["negative"] = {"a": 1.0, "b": 0.5, "c": 0.25}
        for rel_level in (1, 2, 2 ** 40):
            measures = parse_measure(name_at(definition), rel_level)
            by_engine = outcome(by_the_engine, run, qrels, measures)
            assert by_engine == outcome(_rules, run, qrels, measures), definition.name
            if isinstance(by_engine, str):
                continue
            unjudged = _rules({"negative": run["negative"]}, {"negative": {"unretrieved": 0}}, measures)
            assert [values["negative"] for values in by_engine] == [values["negative"] for values in unjudged], \
                definition.name


def test_a_measure_whose_ir_measures_name_is_not_its_own_is_walked_too():
    """The docs' example (docs/evaluate.md, Adding a measure): ``hit_at``, named ``HitAt@k``. Its oracle is
    counted here from the runs and qrels: at rank k (scores as 32-bit floats, pytrec_eval's rule, descending;
    ties by item id descending), an item labelled at or above the level."""
    import numpy as np

    def rule(ranking, settings, cutoffs):
        relevant = set(ranking.relevant)
        return [1.0 if k - 1 in relevant else 0.0 for k in cutoffs]

    def vectorised(ranked, measure):
        return ranked.count(ranked.relevant(measure.rel) & (ranked.position == measure.param - 1)).astype(float)

    definition = register(Definition("hit_at", rule, cutoff((1, 3)), trec_name=False,
                                     ir_measures=(IrName("HitAt", "HitAt@k", cutoff=True),), vectorised=vectorised,
                                     formula="1 if the item at rank k is relevant, else 0", oracle="counted here"))
    try:
        assert name_at(definition) == "HitAt@3"
        for qrels, run in CASES:
            for rel_level in (1, 2):
                oracle = {}
                for turn, scores in run.items():
                    if turn in qrels:
                        ranked = sorted(scores, key=lambda item, s=scores: (float(np.float32(s[item])), item),
                                        reverse=True)
                        oracle[turn] = float(len(ranked) >= 3 and qrels[turn].get(ranked[2], -1) >= rel_level)
                _check_paths(definition, rel_level, qrels, run, {"HitAt@3": oracle})
        test_vectorised_and_rule_agree_on_any_label(definition)
    finally:
        unregister("hit_at")


def test_the_table_of_built_in_measures_is_what_their_modules_declare():
    # Parsing a name imports only the module that declares it (registry.BUILT_IN): the table must name every measure
    # of every module, in the order registered() lists them, and each module's ir_measures names.
    declared = {module: [d.name for d in importlib.import_module(f"castregin.evaluation.measures.{module}").MEASURES]
                for module in BUILT_IN}
    assert declared == {module: list(names) for module, names in BUILT_IN.items()}
    ir_names = {module: list(dict.fromkeys(alias.name for name in names for alias in lookup(name).ir_measures))
                for module, names in BUILT_IN.items()}
    assert ir_names == {module: list(names) for module, names in BUILT_IN_IR_NAMES.items()}
    assert [d.name for d in registered()] == [name for names in BUILT_IN.values() for name in names]
    modules = {path.stem for path in Path(registry.__file__).parent.glob("*.py")}
    assert modules - set(BUILT_IN) == {"__init__", "catalogue", "definition", "names", "registry"}, \
        "a new module of measures goes into registry.BUILT_IN"


@pytest.mark.parametrize(("names", "imported", "not_imported"), [
    (["P@5", "nDCG@3", "AP", "RR", "R@10"], {"precision", "gain", "average_precision"},
     {"novelty", "inferred", "sets", "counts"}),
    (["official"], {"counts", "precision", "average_precision"}, {"novelty", "inferred", "gain", "sets"}),
    (["ERR@20"], {"novelty"}, {"inferred", "sets", "gain"}),
    (["xinfAP"], {"inferred"}, {"novelty", "sets", "gain"}),
])
def test_parsing_a_name_imports_only_the_modules_of_its_measures(names, imported, not_imported):
    code = (
        "import json, sys\n"
        "from castregin.evaluation.measures import mark_measures, parse_measures\n"
        f"names = {names!r}\n"
        "parse_measures(names) if names != ['official'] else mark_measures(names)\n"
        "print(json.dumps(sorted(m.rsplit('.', 1)[1] for m in sys.modules "
        "if m.startswith('castregin.evaluation.measures.'))))\n"
    )
    import json
    import subprocess

    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                           check=True).stdout))
    assert imported <= loaded and not loaded & not_imported, loaded


@pytest.mark.parametrize(("name", "why"), [
    ("IPrec@1.5", "a recall level must be from 0 to 1, not 1.5"),
    ("iprec_at_recall_1.50", "a recall level must be from 0 to 1, not 1.50"),
    ("Rprec_mult_0.00", "a multiple of R (two decimals) must be above 0, not 0.00"),
    ("SetF(beta=0.0)", "the weight of recall must be above 0, not 0.0"),
    ("infIPrec@0.35", "a recall level is one of 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, not 0.35"),
    ("P@0", "must be a whole number from 1 to"),
])
def test_a_parameter_outside_its_declared_range_is_refused(name, why):
    with pytest.raises(InputError, match=re.escape(why)):
        parse_measure(name)


def test_the_declared_parameter_describes_itself():
    iprec = lookup("iprec_at_recall").parameter
    assert (iprec.kind, iprec.symbol, iprec.described()) == ("cut_double", "r", "a recall level from 0 to 1")
    assert iprec.refusal(0.5) is None and iprec.refusal(1.01) is not None
    beta = lookup("set_F").parameter
    assert beta.refusal(0.0) is not None and beta.refusal(1e-9) is None and beta.defaults == (1.0,)
    assert lookup("P").parameter == cutoff((5, 10, 15, 20, 30, 100, 200, 500, 1000))
    assert lookup("map").parameter == NO_PARAM
    # `castregin measures` says it too, from the same declaration.
    notes = {row["trec_eval"]: row["note"] for row in measure_catalogue()}
    assert notes["iprec_at_recall_k"].startswith("r: a recall level from 0 to 1; all_trec: 0.00,0.10")
    assert notes["set_F"].startswith("beta: the weight of recall above 0")


def test_a_declared_range_says_which_end_it_excludes():
    level = Param(CUT_DOUBLE, (), "r", "a level", low=0, high=1, above_low=True)
    assert (level.refusal(0.0), level.refusal(1.0)) == ("a level must be above 0 and at most 1", None)
    assert Param(P_DOUBLE, (), "n", "a count", low=2).refusal(1) == "a count must be at least 2"
    assert Param(P_DOUBLE, (), "n", "a share", high=1).described() == "a share at most 1"


def test_a_parameter_declared_the_old_way_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"hit_at: declare its parameter as a Param \(cutoff\(\(1, 3\)\) for cutoffs\)"):
        register(Definition("hit_at", lambda ranking, settings, params: [0.0], "cut_long", (1, 3)))
