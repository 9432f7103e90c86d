"""Make tests/nuggets/data/ from a checkout of irlabamsterdam/CONE-RAG (TREC iKAT 2024's gold nuggets).

    python tests/nuggets/make_cone_rag_slice.py /path/to/CONE-RAG

The slice: the human nugget-matching study (``resources/human_resources/human-study-matching-labels.txt``,
lines ``HIT_TOPIC_TURN_NUGGET_RUN<TAB>0|1``) on the turns in :data:`TURNS`, with the texts of the gold nuggets
it matched (``resources/human_resources/gold_nuggets_human.json``, ``{turn: {"[k]": {"text", "relevance"}}}``),
written as nuggetizer's assignment files (``cone_rag_human/<run>.jsonl``, one per run of the study), a 1 as
``support`` and a 0 as ``not_support``. A record holds the nuggets the study labelled for that (run, turn), in
nugget-id order. CONE-RAG grades each gold nugget 1-4 (the grade of the passage it was taken from); iKAT has no
vital/okay: here grades 3 and 4 are ``vital``, 1 and 2 ``okay`` (so some turns have no vital nugget). The study
names runs by short names and holds no answer texts: ``answer_text`` is absent, except that the answer of
:data:`BLANK` is given as the empty string, to exercise the empty-answer rule of iKAT's nugget recall.

The oracle of ``nugget_recall``: CONE-RAG's own ``matching/NtR.py`` (``process_claim_coverage``), run on the
same labels, its GPT-4o call answered by the study's label ("yes" for 1, "no" for 0) through a stand-in for
``openai.OpenAI``; its per-run ``model_recall`` and per-turn ``recall`` go to ``cone_rag_ntr_expected.json``.
(nuggetizer, the oracle of the four other scores, is pip-installable: the tests run it themselves.)
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import types
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data"
TURNS = ["0_2", "10_1", "10_2", "10_6", "1_6", "8_3"]
BLANK = ("nii-1", "10_1")


def _study(cone: Path) -> dict[tuple[str, str], dict[str, int]]:
    labels: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    lines = (cone / "resources/human_resources/human-study-matching-labels.txt").read_text().splitlines()
    for line in filter(str.strip, lines):
        key, label = line.split("\t")
        _hit, topic, turn, nugget, run = key.split("_", 4)
        labels[f"{topic}_{turn}", run][f"[{nugget}]"] = int(label)
    return labels


def _ntr(cone: Path, gold: dict, study: dict) -> dict:
    """CONE-RAG's NtR recall on the study's labels (its model call answered from them)."""
    spec = importlib.util.spec_from_file_location("cone_ntr", cone / "matching/NtR.py")
    module = importlib.util.module_from_spec(spec)
    answers = {}

    class Completions:
        def create(self, model, messages, temperature, timeout):
            prompt = messages[1]["content"]
            claim = prompt.split("# Gold Information:\n", 1)[1].split("\n# Response:", 1)[0]
            response = prompt.split("# Response: \n", 1)[1].split("\n# Please answer", 1)[0]
            said = answers[response][claim]
            message = types.SimpleNamespace(content="yes" if said else "no")
            return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

    class Client:
        def __init__(self, api_key):
            self.chat = types.SimpleNamespace(completions=Completions())

    sys.modules["openai"] = types.SimpleNamespace(OpenAI=Client)
    spec.loader.exec_module(module)
    # NtR reads {turn: {run: response}} and {turn: {nugget id: nugget text}}: each answer is a distinct
    # stand-in text through which the fake model finds the study's labels.
    responses: dict[str, dict[str, str]] = defaultdict(dict)
    claims: dict[str, dict[str, str]] = defaultdict(dict)
    for (turn, run), labels in sorted(study.items()):
        text = "" if (run, turn) == BLANK else f"<the answer of {run} to {turn}>"
        responses[turn][run] = text
        answers[text] = {gold[turn][n]["text"]: said for n, said in labels.items()}
        claims[f"{turn}"].update({n: gold[turn][n]["text"] for n in labels})
    # The claims of a turn are the nuggets some run was labelled on; each run is asked about its own.
    expected = {}
    with tempfile.TemporaryDirectory() as out:
        for run in sorted({run for _, run in study}):
            run_claims = {turn: {n: claims[turn][n] for n in study[turn, run]}
                          for turn in TURNS if (turn, run) in study}
            run_responses = {turn: {run: responses[turn][run]} for turn in run_claims}
            paths = [Path(out) / f"{run}-{name}.json" for name in ("claims", "responses")]
            paths[0].write_text(json.dumps(run_claims))
            paths[1].write_text(json.dumps(run_responses))
            module.process_claim_coverage(str(paths[0]), str(paths[1]), str(Path(out) / run), "no key")
            recall = json.loads((Path(out) / run / f"recall_{run}.json").read_text())["model_recall"]
            turns = [json.loads(line) for line in (Path(out) / run / f"coverage_{run}.jsonl").read_text().splitlines()]
            expected[run] = {"model_recall": recall, "turns": {t["topic_turn_id"]: t["recall"] for t in turns}}
    return expected


def main(cone: Path) -> None:
    gold = json.loads((cone / "resources/human_resources/gold_nuggets_human.json").read_text())
    study = {key: labels for key, labels in _study(cone).items() if key[0] in TURNS}
    out = HERE / "cone_rag_human"
    out.mkdir(parents=True, exist_ok=True)
    by_run: dict[str, list[str]] = defaultdict(list)
    for (turn, run), labels in sorted(study.items(), key=lambda kv: (kv[0][1], TURNS.index(kv[0][0]))):
        ids = sorted(labels, key=lambda n: int(n.strip("[]")))
        record: dict = {"query": "", "qid": turn}
        if (run, turn) == BLANK:
            record["answer_text"] = ""
        record["run_id"] = run
        record["nuggets"] = [{"text": gold[turn][n]["text"],
                              "importance": "vital" if int(gold[turn][n]["relevance"]) >= 3 else "okay",
                              "assignment": "support" if labels[n] else "not_support"} for n in ids]
        by_run[run].append(json.dumps(record, ensure_ascii=False))
    for run, lines in by_run.items():
        (out / f"{run}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (HERE / "cone_rag_ntr_expected.json").write_text(json.dumps(_ntr(cone, gold, study), indent=2) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
