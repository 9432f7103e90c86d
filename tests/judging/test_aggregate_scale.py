"""The integer-key paths of reading and aggregating against a plain-Python reading of the SPEC's rules.

``aggregate`` works on integer codes (a unit is a (turn, item) as one integer, a label a column of a
small matrix, counts come from bincounts); the reference below works on strings and dicts, label
by label, as the SPEC states the rules. Seeded random crowds exercise what codes could get wrong:
ids whose concatenations collide, an item judged under several turns, ids that sort otherwise as
numbers, padding that stripping removes, crowds split over files with their columns in other
orders, rejected rows, empty cells, gold, and duplicates across files.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections import Counter, defaultdict

import numpy as np
import pytest

from castregin.errors import InputError
from castregin.formats import crowd as crowd_module
from castregin.formats.aggregation import aggregation_files
from castregin.formats.crowd import parse_gold, parse_judgments
from castregin.judging import suspects as rules
from castregin.judging.aggregate import aggregate
from castregin.statistics import cohen_kappa

CRITERIA = ["relevance", "novelty"]
SCALE = (0, 3)
# Turn and item ids chosen against integer keys: "1_1"+"2Q" and "1_12"+"Q" concatenate alike, "031"
# and "31" are two items, "10_1" sorts before "1_1", and "Q1" is judged under several turns.
TURNS = ["1_1", "1_12", "10_1", "1_1-2", "2_1"]
ITEMS = ["2Q", "Q", "Q1", "031", "31", "Q10", "Q9", "R01"]
WORKERS = ["W1", "W10", "W9", "w1", "A_1", "Z"]


# --- the reference: strings and dicts, one label at a time ----------------------------------------

def topic(turn: str) -> str:
    return turn.split("_", 1)[0]


def decide(labels: list[int]) -> tuple[int, bool]:
    """The SPEC's default rule: the mode when one label is strictly most frequent, else the mean half up."""
    counts = Counter(labels)
    top = max(counts.values())
    modes = [label for label, n in counts.items() if n == top]
    if len(modes) == 1:
        return modes[0], True
    return (2 * sum(labels) + len(labels)) // (2 * len(labels)), False


def alpha(units: list[list[int]], level: str) -> float:
    """Krippendorff's alpha from its coincidence definition, in plain Python."""
    pairable = [u for u in units if len(u) >= 2]
    o: dict[tuple[int, int], float] = defaultdict(float)
    for u in pairable:
        for a in range(len(u)):
            for b in range(len(u)):
                if a != b:
                    o[u[a], u[b]] += 1 / (len(u) - 1)
    values = list(range(SCALE[0], SCALE[1] + 1))
    n_v = {v: sum(o[v, k] for k in values) for v in values}
    n = sum(n_v.values())

    def delta(c: int, k: int) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return float((c - k) ** 2)
        low, high = min(c, k), max(c, k)
        return (sum(n_v[g] for g in range(low, high + 1)) - (n_v[c] + n_v[k]) / 2) ** 2

    expected = sum(n_v[c] * n_v[k] * delta(c, k) for c in values for k in values)
    if n <= 1 or expected <= 0:
        return math.nan
    return 1 - (n - 1) * sum(o[c, k] * delta(c, k) for c in values for k in values) / expected


def fleiss(units: list[list[int]]) -> float:
    pairable = [u for u in units if len(u) >= 2]
    if not pairable:
        return math.nan
    pooled = Counter(v for u in pairable for v in u)
    total = sum(pooled.values())
    chance = sum((n / total) ** 2 for n in pooled.values())
    observed = sum((sum(n * n for n in Counter(u).values()) - len(u)) / (len(u) * (len(u) - 1))
                   for u in pairable) / len(pairable)
    return math.nan if chance >= 1 else (observed - chance) / (1 - chance)


def agreement_block(by_unit: dict[tuple[str, str], list[int]]) -> dict:
    def block(units):
        units = list(units)
        pairable = [u for u in units if len(u) >= 2]
        return {"alpha_nominal": alpha(units, "nominal"), "alpha_ordinal": alpha(units, "ordinal"),
                "alpha_interval": alpha(units, "interval"), "fleiss": fleiss(units),
                "units": len(pairable), "labels": sum(len(u) for u in pairable)}

    summary = block(by_unit.values())
    topics = sorted({topic(t) for t, _ in by_unit})
    summary["topics"] = {p: block(v for (t, _), v in by_unit.items() if topic(t) == p) for p in topics}
    return summary


def kappa(pairs: list[tuple[int, int]]) -> float:
    if not pairs:
        return math.nan
    return cohen_kappa([a for a, _ in pairs], [b for _, b in pairs], "quadratic",
                       list(range(SCALE[0], SCALE[1] + 1)))


def read_rows(files: list[tuple[bytes, str]]) -> list[dict]:
    """Every accepted row, in file order: worker, turn, item (stripped), labels per criterion, seconds."""
    rows = []
    for data, _ in files:
        for record in csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")):
            if record.get("status", "").strip().lower() == "rejected":
                continue
            labels = {c: int(record[c]) for c in CRITERIA if record[c].strip()}
            seconds = record.get("seconds", "")
            rows.append({"worker": record["worker_id"].strip(), "turn": record["turn_id"].strip(),
                         "item": record["item_id"].strip(), "labels": labels,
                         "seconds": float(seconds) if seconds.strip() else math.nan})
    return rows


def repeat_of(answers: list[tuple]) -> tuple[int, float]:
    best_period, best_share = 0, 0.0
    for period in range(1, rules.MAX_PERIOD + 1):
        trials = len(answers) - period
        if trials <= 0:
            continue
        share = sum(answers[k] == answers[k - period] for k in range(period, len(answers))) / trials
        if share > best_share:
            best_period, best_share = period, share
    return best_period, best_share


def reference(files: list[tuple[bytes, str]], gold_rows: list[tuple]) -> dict:
    """qrels, removed, dropped items, decisions, agreement and the workers' audit, by the SPEC's words."""
    rows = read_rows(files)
    labels = {(r["worker"], r["turn"], r["item"], c): v for r in rows for c, v in r["labels"].items()}
    universe = {(r["turn"], r["item"]) for r in rows}
    gold = {(t, i, c): (lo, hi) for t, i, c, lo, hi in gold_rows if c in CRITERIA}
    failed = defaultdict(list)
    for (w, t, i, c), v in labels.items():
        lo, hi = gold.get((t, i, c), (SCALE[0], SCALE[1]))
        if not lo <= v <= hi:
            failed[w, topic(t)].append({"turn_id": t, "item_id": i, "criterion": c, "label": v,
                                        "min_label": lo, "max_label": hi})
    removed = [{"worker_id": w, "topic": p,
                "gold": sorted(g, key=lambda x: (x["turn_id"], x["item_id"], x["criterion"]))}
               for (w, p), g in sorted(failed.items())]
    out = {"removed": removed, "qrels": {}, "decisions": {}, "dropped": [], "agreement": {}, "accuracy": {}}
    for c in CRITERIA:
        before, after = defaultdict(list), defaultdict(list)
        for (w, t, i, cc), v in labels.items():
            if cc == c:
                before[t, i].append(v)
                if (w, topic(t)) not in failed:
                    after[t, i].append(v)
        decided = {unit: decide(v) for unit, v in after.items()}
        out["qrels"][c] = {unit: label for unit, (label, _) in decided.items()}
        out["decisions"][c] = {"mode": sum(m for _, m in decided.values()),
                               "tie": sum(not m for _, m in decided.values())}
        for unit in universe:
            if unit not in before:
                out["dropped"].append({"turn_id": unit[0], "item_id": unit[1], "criterion": c, "reason": "empty"})
            elif unit not in after:
                out["dropped"].append({"turn_id": unit[0], "item_id": unit[1], "criterion": c, "reason": "gold"})
        pairs = defaultdict(list)
        for (w, t, i, cc), v in labels.items():
            if cc == c and (t, i) in decided:
                pairs[w].append((v, decided[t, i][0]))
        out["agreement"][c] = {"before_gold": agreement_block(before), "after_gold": agreement_block(after),
                               "workers": {w: (len(p), kappa(p)) for w, p in pairs.items()}}
        hits = defaultdict(list)
        for (w, t, i, cc), v in labels.items():
            if cc == c and (w, topic(t)) not in failed:
                hits[w].append(v == decided[t, i][0])
        out["accuracy"][c] = {w: sum(h) / len(h) for w, h in hits.items()}
    out["dropped"].sort(key=lambda d: (d["turn_id"], d["item_id"], d["criterion"]))
    out["workers"] = reference_workers(rows, labels, out["accuracy"])
    return out


def reference_workers(rows: list[dict], labels: dict, accuracy: dict) -> dict:
    """Each worker's suspect evidence: leave-one-out kappa, top share, repeats, time, and the flags."""
    workers = {}
    timed = [r["seconds"] for r in rows if r["labels"] and not math.isnan(r["seconds"])]
    crowd_median = statistics.median(timed) if timed else None
    for w in sorted({key[0] for key in labels}):
        entry = {"labels": sum(1 for key in labels if key[0] == w), "kappa_others": {}, "kappa_items": {},
                 "top_share": {}, "accuracy": {c: accuracy[c].get(w) for c in CRITERIA}}
        reasons = set()
        for c in CRITERIA:
            pairs, given = [], []
            for (ww, t, i, cc), v in labels.items():
                if ww != w or cc != c:
                    continue
                given.append(v)
                others = [x for (w2, t2, i2, c2), x in labels.items() if (t2, i2, c2) == (t, i, c) and w2 != w]
                if others:
                    pairs.append((v, decide(others)[0]))
            entry["kappa_others"][c], entry["kappa_items"][c] = kappa(pairs), len(pairs)
            entry["top_share"][c] = max(Counter(given).values()) / len(given) if given else math.nan
            if len(pairs) >= rules.MIN_ITEMS and entry["kappa_others"][c] <= 0:
                reasons.add("below_chance")
            if len(given) >= rules.MIN_ITEMS and entry["top_share"][c] >= rules.CONSTANT_SHARE:
                reasons.add("constant")
        answers = [tuple(r["labels"].get(c) for c in CRITERIA) for r in rows if r["worker"] == w and r["labels"]]
        seconds = [r["seconds"] for r in rows if r["worker"] == w and r["labels"] and not math.isnan(r["seconds"])]
        entry["rows"] = len(answers)
        entry["repeat"] = repeat_of(answers) if len(answers) > 1 else None
        if len(answers) >= rules.MIN_ITEMS and entry["repeat"][1] >= rules.REPEAT_SHARE:
            reasons.add("repeated")
        entry["median_seconds"] = statistics.median(seconds) if seconds else None
        if crowd_median is not None and seconds and entry["median_seconds"] < rules.FAST_FRACTION * crowd_median:
            reasons.add("fast")
        entry["reasons"] = [r for r in ("below_chance", "constant", "repeated", "fast") if r in reasons]
        workers[w] = entry
    return workers


# --- seeded crowds ---------------------------------------------------------------------------------

def random_crowd(seed: int, files: int | None = None) -> tuple[list[tuple[bytes, str]], list[tuple]]:
    """(CSV files, gold rows) of a seeded crowd; every (worker, turn, item) at most once over all files."""
    rng = np.random.default_rng(seed)
    units = [(t, i) for t in TURNS for i in ITEMS if rng.random() < 0.6]
    truth = {unit: int(rng.integers(0, 4)) for unit in units}
    kinds = {w: rng.choice(["honest", "honest", "constant", "random", "repeat"]) for w in WORKERS}
    rows = []
    for w in WORKERS:
        chosen = [u for u in units if rng.random() < 0.7]
        for k, (t, i) in enumerate(chosen):
            cells = []
            for _criterion in CRITERIA:
                if kinds[w] == "constant":
                    v = 3
                elif kinds[w] == "random":
                    v = int(rng.integers(0, 4))
                elif kinds[w] == "repeat":
                    v = k % 3
                else:
                    v = int(np.clip(truth[t, i] + rng.integers(-1, 2) * (rng.random() < 0.3), 0, 3))
                cells.append("" if rng.random() < 0.1 else str(v))
            pad = " " if rng.random() < 0.1 else ""  # stripped away: " Q1" is Q1
            seconds = str(int(rng.integers(2, 8) if w == "Z" else rng.integers(20, 90))) if rng.random() < 0.9 else ""
            rows.append({"worker_id": w, "turn_id": t, "item_id": pad + i + pad, CRITERIA[0]: cells[0],
                         CRITERIA[1]: cells[1], "seconds": seconds})
    order = rng.permutation(len(rows))
    n_files = files or int(rng.integers(1, 4))
    parts = np.array_split(order, n_files)
    out = []
    for k, part in enumerate(parts):
        columns = ["worker_id", "turn_id", "item_id", *CRITERIA, "seconds", "note"]
        rng.shuffle(columns)
        rejected = []
        if k == 0:  # a rejected row carries garbage that must not count
            columns.append("status")
            rejected = [{"worker_id": "X", "turn_id": "9 9", "item_id": "", CRITERIA[0]: "7", CRITERIA[1]: "x",
                         "seconds": "1", "status": "Rejected"}]
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, columns, restval="", lineterminator="\n")
        writer.writeheader()
        for row in [rows[r] for r in part] + rejected:
            writer.writerow({**row, "note": "a, b" if rng.random() < 0.2 else ""})
        out.append((buffer.getvalue().encode(), f"part{k}.csv"))
    gold = []
    for t, i in units[:3]:
        lo = max(truth[t, i] - 1, 0)
        gold.append((t, i, CRITERIA[int(rng.integers(0, 2))], lo, min(lo + 1, 3)))
    return out, gold


def gold_bytes(rows: list[tuple]) -> bytes:
    lines = ["turn_id,item_id,criterion,min_label,max_label", *(",".join(map(str, r)) for r in rows)]
    return ("\n".join(lines) + "\n").encode()


def close(got, want) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None or (isinstance(got, float) and math.isnan(got))
    return got == pytest.approx(want, abs=1e-9)


def same_block(got: dict, want: dict) -> None:
    for key in ("alpha_nominal", "alpha_ordinal", "alpha_interval", "fleiss"):
        assert close(got[key], want[key]), key
    assert (got["units"], got["labels"]) == (want["units"], want["labels"])


# A random gold file may name topics nobody judged: the warning is test_aggregate.py's subject, not this one's.
@pytest.mark.filterwarnings("ignore::castregin.errors.InputWarning")
@pytest.mark.parametrize("seed", range(12))
def test_aggregate_equals_the_reference(seed):
    files, gold_rows = random_crowd(seed)
    judgments = parse_judgments(files, CRITERIA)
    gold = parse_gold(gold_bytes(gold_rows), "gold.csv") if gold_rows else None
    result = aggregate(judgments, gold)
    want = reference(files, gold_rows)
    for c in CRITERIA:
        assert {(t, i): v for t, items in result.qrels[c].items() for i, v in items.items()} == want["qrels"][c]
        assert list(result.qrels[c]) == sorted(result.qrels[c])
        assert all(list(items) == sorted(items) for items in result.qrels[c].values())
    assert result.decisions == want["decisions"]
    assert result.removed == want["removed"]
    assert result.dropped_items == want["dropped"]
    for c in CRITERIA:
        part, expected = result.agreement[c], want["agreement"][c]
        for stage in ("before_gold", "after_gold"):
            same_block(part[stage], expected[stage])
            assert set(part[stage]["topics"]) == set(expected[stage]["topics"])
            for name, block in part[stage]["topics"].items():
                same_block(block, expected[stage]["topics"][name])
        expected_items = {w: n for w, (n, _) in expected["workers"].items()}
        assert {w["worker_id"]: w["items"] for w in part["workers"]} == expected_items
        for w in part["workers"]:
            assert close(w["kappa_quadratic"], expected["workers"][w["worker_id"]][1])
    assert [w["worker_id"] for w in result.workers] == sorted(want["workers"])
    for entry in result.workers:
        expected = want["workers"][entry["worker_id"]]
        for key in ("labels", "rows", "kappa_items", "reasons"):
            assert entry[key] == expected[key], (entry["worker_id"], key)
        for c in CRITERIA:
            for key in ("kappa_others", "top_share", "accuracy"):
                assert close(entry[key][c], None if expected[key][c] is None else round(expected[key][c], 6)
                             if not math.isnan(expected[key][c]) else math.nan), (entry["worker_id"], key, c)
        if expected["repeat"] is None:
            assert entry["repeat"] is None
        else:
            assert entry["repeat"]["period"] == expected["repeat"][0]
            assert close(entry["repeat"]["share"], round(expected["repeat"][1], 6))
        assert close(entry["median_seconds"], expected["median_seconds"])
    assert result.suspects["workers"] == [w for w, e in want["workers"].items() if e["reasons"]]


def test_a_crowd_split_over_files_aggregates_as_one_file():
    files, gold_rows = random_crowd(3, files=3)
    gold = parse_gold(gold_bytes(gold_rows), "gold.csv")
    split = aggregation_files(aggregate(parse_judgments(files, CRITERIA), gold), "q")
    # The same rows as one file (in the same order, header of the first): the outputs are the same bytes.
    header, *_ = files[0][0].decode().splitlines()
    rows = [{**record, "status": record.get("status", "")}
            for data, _ in files for record in csv.DictReader(io.StringIO(data.decode(), newline=""))]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header.split(","), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    whole = aggregation_files(aggregate(parse_judgments([(buffer.getvalue().encode(), "all.csv")], CRITERIA), gold),
                              "q")
    assert whole == split


def first_duplicate(files: list[tuple[bytes, str]]) -> str:
    """The SPEC's check, label by label in the order the labels are listed: per file, criterion, row."""
    seen = {}
    for data, source in files:
        records = list(csv.DictReader(io.StringIO(data.decode(), newline="")))
        for c in CRITERIA:
            for k, record in enumerate(records):
                if not record[c].strip():
                    continue
                key = (record["worker_id"].strip(), record["turn_id"].strip(), record["item_id"].strip(), c)
                if key in seen:
                    first = seen[key]
                    return (f"{source}:{k + 2}: worker {key[0]} labels {c} of turn {key[1]} item {key[2]} a second "
                            f"time (first at {first[0]}:{first[1]}); keep one of the rows")
                seen[key] = (source, k + 2)
    return ""


@pytest.mark.parametrize("seed", range(8))
def test_duplicates_across_files_name_both_lines(seed):
    files, _ = random_crowd(seed, files=2)
    rng = np.random.default_rng(100 + seed)
    # Copy a few rows of the first file into the second, some with their labels of one criterion only.
    records = list(csv.DictReader(io.StringIO(files[0][0].decode(), newline="")))
    records = [r for r in records if r.get("status", "").strip().lower() != "rejected"]
    header = files[1][0].decode().splitlines()[0].split(",")
    copies = []
    for r in (records[k] for k in rng.choice(len(records), size=3, replace=False)):
        copy = dict(r)
        if rng.random() < 0.5:
            copy[CRITERIA[int(rng.integers(0, 2))]] = ""
        copies.append(",".join(f'"{copy.get(name, "")}"' for name in header))
    second = files[1][0] + ("\n".join(copies) + "\n").encode()
    files = [files[0], (second, files[1][1])]
    expected = first_duplicate(files)
    if expected:
        with pytest.raises(InputError) as raised:
            parse_judgments(files, CRITERIA)
        assert str(raised.value) == expected
    else:  # every copied label was empty
        parse_judgments(files, CRITERIA)


def test_duplicates_within_rows_of_a_repeated_pair_are_found_per_criterion():
    data = (b"worker_id,turn_id,item_id,relevance,novelty\n"
            b"A,1_1,Q1,,2\nA,1_1,Q1,1,\nB,1_1,Q1,1,1\nA,1_1,Q1,,\nA,1_1,Q1,3,\n")
    # A's rows on 1_1 Q1 repeat the pair four times; only relevance (lines 3 and 6) is labelled twice.
    with pytest.raises(InputError, match=r"j.csv:6: worker A labels relevance of turn 1_1 item Q1 a second time "
                                         r"\(first at j.csv:3\)"):
        parse_judgments([(data, "j.csv")], CRITERIA)
    ok = b"worker_id,turn_id,item_id,relevance,novelty\nA,1_1,Q1,,2\nA,1_1,Q1,1,\n"
    assert len(parse_judgments([(ok, "j.csv")], CRITERIA)) == 2


# --- the two readers agree ---------------------------------------------------------------------------

def random_csv(rng) -> bytes:
    """A judgments CSV with the oddities CSV allows: quotes, commas and newlines in fields, CRLF, blank lines."""
    def cell(k: int) -> str:
        r = rng.random()
        if k >= 3:  # a label, empty, padded or quoted
            return rng.choice(["", "0", "1", "2", "3", " 2", '"3"', "2 "])
        if r < 0.75:
            return rng.choice(["A", "B", "1_1", "1_2", "Q1", "Q2", "031"])
        if r < 0.95:
            return '"' + rng.choice(["A", "Q1", "1_1", "x,y", 'say""hi""', "two\nlines"]) + '"'
        return rng.choice(["x\"y", " Q1", "Q1 ", ""])

    end = rng.choice(["\n", "\r\n"])
    lines = ["worker_id,turn_id,item_id,relevance,extra"]
    for _ in range(int(rng.integers(1, 6))):
        width = 5 if rng.random() < 0.95 else int(rng.integers(3, 7))
        lines.append(",".join(cell(k) for k in range(width)))
        if rng.random() < 0.1:
            lines.append("")
    return (end.join(lines) + rng.choice(["", end])).encode()


def outcome(data: bytes):
    try:
        judgments = parse_judgments([(data, "j.csv")], ["relevance"])
    except InputError as err:
        return "error", str(err)
    frame = judgments.labels
    return sorted(zip(frame["worker_id"].astype(str), frame["turn_id"].astype(str), frame["item_id"].astype(str),
                      frame["label"].tolist(), [judgments.line_of(k)[1] for k in range(len(frame))], strict=True))


def test_pyarrow_reads_what_pandas_reads(monkeypatch):
    rng = np.random.default_rng(0)
    cases = [random_csv(rng) for _ in range(300)]
    arrow_columns, vouched = crowd_module._arrow_columns, []

    def counted(csv_file, indices):
        parsed = arrow_columns(csv_file, indices)
        vouched.append(parsed is not None)
        return parsed

    monkeypatch.setattr(crowd_module, "_arrow_columns", counted)
    fast = [outcome(data) for data in cases]
    monkeypatch.setattr(crowd_module, "_arrow_columns", lambda csv_file, indices: None)
    slow = [outcome(data) for data in cases]
    assert fast == slow
    assert sum(isinstance(f, list) for f in fast) > 50 and sum(vouched) > 50  # pyarrow read many of them


def test_a_row_with_one_field_more_is_refused_even_on_every_row():
    # pandas alone took the first field of such rows for an index, shifting every column by one.
    data = b"worker_id,turn_id,item_id,relevance\nW1,1_1,Q1,2,\nW2,1_1,Q1,3,\n"
    with pytest.raises(InputError, match=r"j.csv:2: 5 fields where the header has 4"):
        parse_judgments([(data, "j.csv")], ["relevance"])


def test_a_quote_left_open_at_the_end_is_refused():
    data = b'worker_id,turn_id,item_id,relevance\nW1,1_1,Q1,2\nW2,1_1,Q1,"3\n'
    with pytest.raises(InputError, match=r"j.csv:\d+: malformed CSV"):
        parse_judgments([(data, "j.csv")], ["relevance"])


def test_an_item_under_several_turns_is_one_unit_per_turn():
    data = b"worker_id,turn_id,item_id,relevance\nA,2_1,Q1,1\nB,2_1,Q1,1\nA,1_1,Q1,3\nA,1_1,Q2,0\n"
    result = aggregate(parse_judgments([(data, "j.csv")], ["relevance"]))
    assert result.qrels["relevance"] == {"1_1": {"Q1": 3, "Q2": 0}, "2_1": {"Q1": 1}}
