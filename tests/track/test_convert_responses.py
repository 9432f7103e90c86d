"""`castregin convert responses` and `convert passages`: main-task runs to the runs ReGIn and NIST judged."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from castregin.formats.trec import read_qrels
from castregin.track.convert import Bank, Warnings, convert_passages, convert_responses, iter_responses


def write(path, data):
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def lines(text):
    return [line.split("\t") for line in text.splitlines()]


def read_pool(path) -> dict[str, list[str]]:
    pool = defaultdict(list)
    for line in path.read_text().splitlines():
        turn, _, item, *_ = line.split()
        pool[turn].append(item)
    return dict(pool)


def respaced(text: str) -> str:
    """The same text with other whitespace: doubled spaces, a newline, spaces around."""
    return "  " + text.replace(" ", "  ", 3).replace(" ", "\n", 1) + " \t"


@pytest.fixture(scope="module")
def published(cast2022):
    """A main-task run rebuilt from the published response pool, with whitespace variants and new texts."""
    bank = json.loads((cast2022 / "regin/response_bank.json").read_text())
    pool = read_pool(cast2022 / "regin/response_pool_depth_1.pool")
    folded = defaultdict(list)
    for rid, text in bank.items():
        folded[" ".join(text.split())].append(rid)
    twins = {rid for group in folded.values() if len(group) > 1 for rid in group}
    turns, expected, variants = [], {}, 0
    new_texts = {}
    for number, (turn, ids) in enumerate(pool.items()):
        responses = []
        for rid in ids:
            text = bank[rid]
            if rid not in twins and len(responses) % 2 == 1:
                text = respaced(text)  # a whitespace variant of a text with no whitespace twin
                assert text not in bank.values()
                variants += 1
            responses.append(text)
        items = list(ids)
        if number % 40 == 5:  # a few brand-new texts, one of them repeated with other spacing later
            text = f"A brand-new response number {len(new_texts)}."
            new_texts[text] = f"R{2315 + len(new_texts):05d}"
            responses.insert(1, text)
            items.insert(1, new_texts[text])
        if number == 100:
            responses.append("  A brand-new   response number 0. ")
            items.append("R02315")
        turns.append({"turn_id": turn, "responses": [
            {"text": text, "rank": rank, "provenance": [{"id": f"P-{turn}-{rank}", "text": "", "score": 1.0}]}
            for rank, text in enumerate(responses, start=1)]})
        expected[turn] = items
    assert variants > 500 and len(new_texts) == 4 and len(twins) == 136
    return {"run_name": "rebuilt pool", "run_type": "manual", "turns": turns}, expected, new_texts, pool


def test_published_pool_converts_back_to_its_ids(cast2022, published, cli, tmp_path):
    run, expected, new_texts, pool = published
    path = write(tmp_path / "rebuilt.json", run)
    result = cli("convert", "responses", path, "--bank", cast2022 / "regin/response_bank.json", "--depth", "100",
                 "-o", tmp_path / "out.run", "--bank-out", tmp_path / "bank.json")
    assert result.exit_code == 0 and result.stderr == ""
    got = defaultdict(list)
    for fields in lines((tmp_path / "out.run").read_text()):
        got[fields[0]].append(fields[2])
        assert fields[5] == "rebuilt_pool"
        assert fields[4] == repr(1 / int(fields[3]))
    assert dict(got) == expected
    # The 68 whitespace twins of the bank were judged as different responses: exact matching keeps them apart.
    assert {(t, r) for t, ids in got.items() for r in ids if not r >= "R02315"} == \
           {(t, r) for t, ids in pool.items() for r in ids}
    bank = json.loads((tmp_path / "bank.json").read_text())
    assert list(bank)[-4:] == list(new_texts.values()) == ["R02315", "R02316", "R02317", "R02318"]
    assert [bank[r] for r in new_texts.values()] == list(new_texts)


def test_depth_three_by_rank_scores_one_over_rank(cast2022, published, cli, tmp_path):
    run, expected, _, _ = published
    shuffled = json.loads(json.dumps(run))
    for turn in shuffled["turns"]:
        turn["responses"].reverse()  # the rank field decides, not the file order
    result = cli("convert", "responses", write(tmp_path / "r.json", shuffled), "--bank",
                 cast2022 / "regin/response_bank.json", "-o", "-")
    assert result.exit_code == 0
    got = defaultdict(list)
    for fields in lines(result.stdout):
        got[fields[0]].append((fields[2], fields[3], fields[4]))
    assert got == {turn: [(item, str(rank), repr(1 / rank)) for rank, item in enumerate(items[:3], start=1)]
                   for turn, items in expected.items()}
    assert got["132_1-1"][2][2] == "0.3333333333333333"


RBANK = {"R00000": "alpha", "R00001": "beta", "R00007": "gamma"}


def response(text, rank, *passages):
    return {"text": text, "rank": rank, "provenance": [{"id": p, "text": "", "score": 1.0} for p in passages]}


def test_passage_filter_keeps_responses_with_a_passage_at_the_level(tmp_path, cli):
    bank = write(tmp_path / "bank.json", RBANK)
    run = write(tmp_path / "run.json", {"run_name": "f", "turns": [
        {"turn_id": "1_1-1", "responses": [
            response("alpha", 1, "p1", "p2"),      # p2 graded 2
            response("new, filtered out", 2, "p3"),  # graded 1 only
            response("new, kept", 3, "p4"),         # graded 4
            response("gamma", 4, "p2")]},           # beyond --depth 3
        {"turn_id": "1_1-3", "responses": [response("beta", 1, "p1"), response("another new", 2, "p9")]},
        {"turn_id": "9_9-9", "responses": [response("alpha", 1, "p2")]},  # a turn NIST did not judge
    ]})
    qrels = tmp_path / "passages.qrel"
    qrels.write_text("1_1-1 0 p1 0\n1_1-1 0 p2 2\n1_1-1 0 p3 1\n1_1-1 0 p4 4\n1_1-3 0 p9 3\n9_9-8 0 p2 4\n")
    result = cli("convert", "responses", run, "--bank", bank, "--passage-qrels", qrels, "-o", "-",
                 "--bank-out", tmp_path / "out.json")
    assert result.exit_code == 0
    # Every response dropped is counted, one line per reason with the first example.
    filtered = f"castregin: warning: {run}: 1 response (of the top 3 per turn) dropped by --passage-qrels 'passages'"
    assert result.stderr.splitlines() == [
        f"{filtered}: the qrels judge no passage of their turn; first: turn 9_9-9, rank 1",
        (f"{filtered}: none of their provenance passages is judged for their turn (check that the run's passage "
         "ids are the qrels' ids); first: turn 1_1-3, rank 1, passage 'p1' (the qrels judge 'p9' there)"),
        f"{filtered}: their provenance passages are graded below 2; first: turn 1_1-1, rank 2",
        ("castregin: 3 warnings: 1 dropped: turn not in the passage qrels, 1 dropped: no provenance passage "
         "judged, 1 dropped: provenance graded below the level")]
    # New ids only for kept responses, in order: "new, filtered out" gets none.
    assert result.stdout == ("1_1-1\tQ0\tR00000\t1\t1.0\tf\n1_1-1\tQ0\tR00008\t2\t0.5\tf\n"
                             "1_1-3\tQ0\tR00009\t1\t1.0\tf\n")
    assert json.loads((tmp_path / "out.json").read_text()) == {**RBANK, "R00008": "new, kept", "R00009": "another new"}

    strict = cli("convert", "responses", run, "--bank", bank, "--passage-qrels", qrels, "--passage-rel-level", "3",
                 "-o", "-")
    assert strict.stdout == "1_1-1\tQ0\tR00008\t1\t1.0\tf\n1_1-3\tQ0\tR00009\t1\t1.0\tf\n"
    # alpha (p2 graded 2) and "new, filtered out" (p3 graded 1) are below 3 now.
    assert ("castregin: 4 warnings: 1 dropped: turn not in the passage qrels, 1 dropped: no provenance passage "
            "judged, 2 dropped: provenance graded below the level") in strict.stderr
    # What the filter drops is what it was asked to do: --strict does not refuse it.
    assert cli("convert", "responses", run, "--bank", bank, "--passage-qrels", qrels, "--strict",
               "-o", "-").stdout == result.stdout
    no_filter = cli("convert", "responses", run, "--bank", bank, "-o", "-")
    assert [f[2] for f in lines(no_filter.stdout)] == ["R00000", "R00008", "R00009", "R00001", "R00010", "R00000"]


def test_passage_filter_counts_responses_without_provenance_and_refuses_an_empty_run(tmp_path, cli):
    bank = write(tmp_path / "bank.json", RBANK)
    run = write(tmp_path / "run.json", {"run_name": "e", "turns": [
        {"turn_id": "1_1-1", "responses": [response("alpha", 1), response("beta", 2, "p7"), response("gamma", 3)]},
    ]})
    qrels = tmp_path / "passages.qrel"
    qrels.write_text("1_1-1 0 p1 3\n")
    out = tmp_path / "out.run"
    result = cli("convert", "responses", run, "--bank", bank, "--passage-qrels", qrels, "-o", out)
    assert result.exit_code == 1 and not out.exists()
    *warned, error = result.stderr.splitlines()
    assert warned == [
        (f"castregin: warning: {run}: 2 responses (of the top 3 per turn) dropped by --passage-qrels 'passages': "
         "they have no provenance passage; first: turn 1_1-1, rank 1"),
        (f"castregin: warning: {run}: 1 response (of the top 3 per turn) dropped by --passage-qrels 'passages': "
         "none of their provenance passages is judged for their turn (check that the run's passage ids are the "
         "qrels' ids); first: turn 1_1-1, rank 2, passage 'p7' (the qrels judge 'p1' there)")]
    assert error == (f"castregin: error: {run}: no line is left to write (3 warnings: 2 dropped: no provenance "
                     "passage, 1 dropped: no provenance passage judged); nothing written")


def test_no_shared_passage_id_is_an_error_not_an_empty_run(cast2022, cli, tmp_path):
    # The NIST qrels with every passage id renamed: no response of the sample run is grounded any more.
    nist = (cast2022 / "nist/2022-passage-qrels.txt").read_text().splitlines()
    renamed = tmp_path / "renamed.qrel"
    renamed.write_text("".join(f"{turn} {zero} X{passage} {grade}\n" for turn, zero, passage, grade in
                               (line.split() for line in nist)))
    out_dir = tmp_path / "out"
    result = cli("convert", "responses", cast2022 / "runs/main/sample_run.json", "--bank",
                 cast2022 / "regin/response_bank.json", "--passage-qrels", renamed, "--out-dir", out_dir)
    assert result.exit_code == 1 and not out_dir.exists()
    assert result.stderr.splitlines()[-1].startswith("castregin: error: ")
    assert "no line is left to write" in result.stderr.splitlines()[-1]


def test_filter_on_the_nist_qrels(cast2022, cli):
    source = cast2022 / "runs/main/sample_run.json"
    nist = cast2022 / "nist/2022-passage-qrels.txt"
    result = cli("convert", "responses", source, "--bank", cast2022 / "regin/response_bank.json",
                 "--passage-qrels", nist, "-o", "-")
    assert result.exit_code == 0, result.stderr
    grades = read_qrels(nist).labels
    data = json.loads(source.read_text())
    bank = Bank(json.loads((cast2022 / "regin/response_bank.json").read_text()), "R")
    expected = []
    reasons = {"turn": 0, "unjudged": 0, "below": 0}
    for turn in data["turns"]:
        top = sorted(turn["responses"], key=lambda r: r["rank"])[:3]
        kept = [r for r in top if any(grades.get(turn["turn_id"], {}).get(p["id"], 0) >= 2 for p in r["provenance"])]
        ids = list(dict.fromkeys(bank.id_for(r["text"]) for r in kept))
        expected += [[turn["turn_id"], "Q0", rid, str(rank), repr(1 / rank), "sample_run"]
                     for rank, rid in enumerate(ids, start=1)]
        for r in top:
            judged = [grades[turn["turn_id"]][p["id"]] for p in r["provenance"]
                      if p["id"] in grades.get(turn["turn_id"], {})]
            if turn["turn_id"] not in grades:
                reasons["turn"] += 1
            elif not judged:
                reasons["unjudged"] += 1
            elif max(judged) < 2:
                reasons["below"] += 1
    assert lines(result.stdout) == expected and len(expected) > 0
    assert all(reasons.values())  # every provenance list of the sample run holds a passage
    assert (f"{reasons['turn']} dropped: turn not in the passage qrels, {reasons['unjudged']} dropped: no "
            f"provenance passage judged, {reasons['below']} dropped: provenance graded below the level"
            ) in result.stderr


def test_response_warnings(tmp_path, cli):
    bank = write(tmp_path / "bank.json", RBANK)
    run = write(tmp_path / "run.json", {"run_name": "w", "turns": [
        {"turn_id": "1_1-1", "responses": [response("alpha", 1, "p"), response(" alpha", 2, "p"),
                                           response("  ", 3, "p")]},
        {"turn_id": "1_1-3", "responses": []},
    ]})
    result = cli("convert", "responses", run, "--bank", bank, "-o", "-")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"castregin: warning: {run}: turn 1_1-1: the response at rank 2 repeats R00000; kept once",
        f"castregin: warning: {run}: turn 1_1-1: the response at rank 3 is empty; dropped",
        f"castregin: warning: {run}: turn 1_1-3 has no responses; omitted",
        "castregin: 3 warnings: 1 duplicate response, 1 empty response, 1 turn without responses"]
    assert result.stdout == "1_1-1\tQ0\tR00000\t1\t1.0\tw\n"
    strict = cli("convert", "responses", run, "--bank", bank, "-o", tmp_path / "s.run", "--strict")
    assert strict.exit_code == 1 and not (tmp_path / "s.run").exists()
    warnings = Warnings()
    assert list(iter_responses(run, Bank(RBANK, "R"), warnings=warnings)) == [("1_1-1", [("R00000", 1.0)])]
    assert warnings.counts() == {"duplicate response": 1, "empty response": 1, "turn without responses": 1}


def test_response_options_and_help(tmp_path, cli):
    bank = write(tmp_path / "bank.json", RBANK)
    run = write(tmp_path / "run.json", {"turns": [{"turn_id": "1_1-1", "responses": [response("alpha", 1, "p")]}]})
    level_alone = cli("convert", "responses", run, "--bank", bank, "--passage-rel-level", "3", "-o", "-")
    assert level_alone.exit_code == 2 and "--passage-rel-level needs --passage-qrels" in level_alone.stderr
    assert cli("convert", "responses", run, "--bank", bank).exit_code == 2
    refused = cli("convert", "responses", run, "--bank", bank, "--bank-out", run, "-o", "-")
    assert refused.exit_code == 1 and "refusing to overwrite the input file" in refused.stderr
    helptext = " ".join(cli("convert", "responses", "--help").stdout.split())
    assert "The CAsT-ReGIn README does not give the threshold; 2 is the one TREC CAsT 2022 uses" in helptext
    converted, warnings = convert_responses(run, Bank(RBANK, "R"))
    assert converted.tag == "run" and converted.scores == {"1_1-1": {"R00000": 1.0}} and not warnings


# ------------------------------------------------------------------------------------------- passages

def expected_passages(data):
    out = []
    for turn in data["turns"]:
        seen = []
        for r in sorted(turn["responses"], key=lambda r: r["rank"]):
            for p in r["provenance"]:
                if p["id"] not in seen:
                    seen.append(p["id"])
        out += [[turn["turn_id"], "Q0", pid, str(i + 1), repr(float(100 - i)), data["run_name"]]
                for i, pid in enumerate(seen)]
    return out


def test_sample_run_to_passages(cast2022, cli, tmp_path):
    source = cast2022 / "runs/main/sample_run.json"
    result = cli("convert", "passages", source, "--out-dir", tmp_path)
    assert result.exit_code == 0 and result.stderr == ""
    got = lines((tmp_path / "sample_run.run").read_text())
    # 132_1-1: three responses, nine provenance entries, four distinct passages.
    assert got[:5] == [
        ["132_1-1", "Q0", "MARCO_30_1605964568-454576", "1", "100.0", "sample_run"],
        ["132_1-1", "Q0", "MARCO_30_1605964568-2", "2", "99.0", "sample_run"],
        ["132_1-1", "Q0", "MARCO_30_1605964568-3", "3", "98.0", "sample_run"],
        ["132_1-1", "Q0", "MARCO_30_1605964568-1", "4", "97.0", "sample_run"],
        ["132_1-3", *got[4][1:]]]
    data = json.loads(source.read_text())
    assert got == expected_passages(data)
    per_turn = defaultdict(list)
    for fields in got:
        per_turn[fields[0]].append(fields[2])
    assert all(len(ids) == len(set(ids)) for ids in per_turn.values()) and len(per_turn) == 205
    again = cli("convert", "passages", source, "-o", "-")
    assert again.stdout.encode() == (tmp_path / "sample_run.run").read_bytes()
    converted, _ = convert_passages(source)
    assert converted.scores["132_1-1"] == {"MARCO_30_1605964568-454576": 100.0, "MARCO_30_1605964568-2": 99.0,
                                           "MARCO_30_1605964568-3": 98.0, "MARCO_30_1605964568-1": 97.0}


def test_passages_rank_order_and_duplicate_turns(tmp_path, cli):
    run = write(tmp_path / "run.json", {"run_name": "p", "turns": [
        {"turn_id": "1_1-1", "responses": [response("b", 2, "x", "y"), response("a", 1, "y", "z")]},
        {"turn_id": "1_1-3", "responses": [response("a", 1)]},
        {"turn_id": "1_1-1", "responses": [response("c", 3, "w", "x")]},
    ]})
    result = cli("convert", "passages", run, "-o", "-")
    assert result.exit_code == 0
    assert result.stdout == ("1_1-1\tQ0\ty\t1\t100.0\tp\n1_1-1\tQ0\tz\t2\t99.0\tp\n1_1-1\tQ0\tx\t3\t98.0\tp\n"
                             "1_1-1\tQ0\tw\t4\t97.0\tp\n")
    assert result.stderr.splitlines() == [
        (f"castregin: warning: {run}: turn 1_1-1 is listed 2 times (turns[0], turns[2]); its responses are "
         "taken together, in file order"),
        f"castregin: warning: {run}: turn 1_1-3 has no provenance passages; omitted",
        "castregin: 2 warnings: 1 duplicate turn, 1 turn without passages"]
