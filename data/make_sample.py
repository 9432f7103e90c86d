"""Make the small sample data of `make demo` (deterministic: run it again, get the same bytes).

A track in miniature: two topics, six turns (one where no question helps), a bank of twelve clarifying questions, two
mixed-initiative runs in the CAsT 2022 JSON format (one ranks bank ids, one generates text, with
a question the bank lacks and a whitespace variant of one it has), and a simulated crowd of six
workers who judge every question the runs return on relevance, novelty and diversity, one of whom fails a gold
question in topic 101.

    python data/make_sample.py      # rewrites the files below, beside this script
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

BANK = {
    "Q0000": "",
    "Q0001": "Are you interested in the history of the Olympic Games?",
    "Q0002": "Do you want to know which city hosts the next Olympics?",
    "Q0003": "Would you like to learn about Olympic sports for beginners?",
    "Q0004": "Are you asking about the summer or the winter games?",
    "Q0005": "Do you want tips for training like an athlete?",
    "Q0006": "Would you like to know how sourdough bread is made?",
    "Q0007": "Are you looking for a gluten-free bread recipe?",
    "Q0008": "Do you want to know why bread dough needs to rise?",
    "Q0009": "Are you interested in bread from a particular country?",
    "Q0010": "Would you like to know how to store bread so it stays fresh?",
    "Q0011": "Do you bake with a bread machine or by hand?",
}

TURNS = {"101": ["1-1", "1-3", "2-1"], "102": ["1-1", "1-3", "2-1"]}

# How useful each question is for each turn (hidden truth the simulated crowd judges by).
TRUTH = {
    "101_1-1": {"Q0001": 3, "Q0002": 2, "Q0004": 3, "Q0003": 1, "Q0005": 0, "new": 2},
    "101_1-3": {"Q0002": 3, "Q0004": 2, "Q0001": 1, "Q0005": 1, "Q0003": 0, "new": 1},
    "101_2-1": {"Q0005": 3, "Q0003": 2, "Q0001": 0, "Q0002": 0, "Q0004": 1, "new": 0},
    "102_1-1": {"Q0006": 3, "Q0009": 2, "Q0011": 1, "Q0007": 1, "Q0008": 0, "new": 3},
    "102_1-3": {"Q0008": 3, "Q0010": 1, "Q0006": 2, "Q0011": 0, "Q0007": 0, "new": 1},
    # A turn where no question helps: `qrels filter --min-label 2` drops it.
    "102_2-1": {"Q0010": 1, "Q0009": 0, "Q0011": 1, "Q0007": 0, "Q0008": 0, "new": 0},
}

NEW_QUESTION = {
    "101_1-1": "Which Olympic event would you like to hear about?",
    "101_1-3": "Do you mean the Olympic host city selection process?",
    "101_2-1": "Are you training for a specific Olympic sport?",
    "102_1-1": "What kind of bread would you like to bake?",
    "102_1-3": "Is your bread dough not rising?",
    "102_2-1": "Do you want a bread recipe for dinner tonight?",
}

# The ids `castregin convert questions` gives the new texts: next free ids, in order of first appearance.
NEW_IDS = {turn: f"Q{12 + k:04d}" for k, turn in enumerate(NEW_QUESTION)}


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def make_runs(rng: random.Random) -> None:
    retrieval = {"run_name": "alpha retrieval", "turns": []}
    generative = {"run_name": "beta_generative", "turns": []}
    for topic, numbers in TURNS.items():
        for number in numbers:
            turn = f"{topic}_{number}"
            truth = {q: g for q, g in TRUTH[turn].items() if q != "new"}
            # alpha: a noisy ranking of bank ids by the truth
            scored = sorted(truth, key=lambda q: truth[q] + rng.uniform(-1.2, 1.2), reverse=True)
            retrieval["turns"].append({
                "turn_id": turn,
                "questions": [{"question": q, "score": round(10.0 - 1.7 * k + rng.random() / 10, 6)}
                              for k, q in enumerate(scored)],
            })
            # beta: generates text; sometimes a bank question with extra spaces, mostly its own
            best_bank = max(truth, key=lambda q: (truth[q], q))
            questions = [{"question": NEW_QUESTION[turn], "score": 0.9}]
            second = BANK[best_bank] if number != "1-3" else "  " + BANK[best_bank].replace(" ", "  ") + " "
            questions.append({"question": second, "score": 0.7})
            generative["turns"].append({"turn_id": turn, "questions": questions})
    write_json(HERE / "runs" / "alpha.json", retrieval)
    write_json(HERE / "runs" / "beta.json", generative)


def make_crowd(rng: random.Random) -> None:
    """Judge every (turn, candidate) of the runs' top 2, as a crowd would: noisy labels around the truth."""
    workers = [f"W{n:02d}" for n in range(1, 7)]
    rows = []
    for topic, numbers in TURNS.items():
        for number in numbers:
            turn = f"{topic}_{number}"
            for candidate, grade in TRUTH[turn].items():
                item = candidate if candidate != "new" else NEW_IDS[turn]
                for worker in workers:
                    careless = worker == "W06" and topic == "101"
                    labels = {}
                    for criterion, shift in (("relevance", 0), ("novelty", -1), ("diversity", 1)):
                        noisy = grade + shift + rng.choice([0, 0, 0, 1, -1])
                        labels[criterion] = 3 - grade if careless else max(0, min(3, noisy))
                    rows.append({"worker_id": worker, "turn_id": turn, "item_id": item, **labels})
    path = HERE / "crowd" / "judgments.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["worker_id", "turn_id", "item_id", "relevance", "novelty", "diversity"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    with (HERE / "crowd" / "gold.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["turn_id", "item_id", "criterion", "min_label", "max_label"])
        writer.writerow(["101_1-1", "Q0001", "relevance", 2, 3])
        writer.writerow(["102_1-1", "Q0006", "relevance", 2, 3])


def main() -> None:
    rng = random.Random(2022)
    write_json(HERE / "question_bank.json", BANK)
    write_json(HERE / "turn_ids.json", TURNS)
    make_runs(rng)
    make_crowd(rng)


if __name__ == "__main__":
    main()
