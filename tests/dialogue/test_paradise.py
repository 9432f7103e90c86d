"""PARADISE: kappa of AVM confusion matrices and the performance function, checked against values computed
independently here (numpy on the expanded judgments for kappa, statsmodels and scipy called directly
for the regressions and the t-test), and bad input answered with one line and exit code 1.

The worked example of Walker et al. (1997), the train-timetable AVMs of agents A and B, is not
reproduced: its two 14 x 14 matrices cannot be rebuilt here with certainty of every cell.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from castregin.dialogue import paradise
from castregin.errors import InputError

# A confusion matrix of two attributes (rows: values in the dialogues, columns: the keys), with one
# count outside the blocks (a city recorded as a time) that only the overall kappa sees.
LABELS = ["city:Milano", "city:Roma", "city:Torino", "time:am", "time:pm"]
MATRIX = np.array([
    [20, 2, 1, 0, 0],
    [3, 15, 2, 0, 0],
    [1, 1, 10, 0, 1],
    [0, 0, 0, 25, 5],
    [0, 0, 0, 4, 16],
])


def matrix_csv(path, labels=LABELS, matrix=MATRIX, order=None):
    order = list(range(len(labels))) if order is None else order
    lines = ["data\\key," + ",".join(labels)]
    lines.extend(labels[i] + "," + ",".join(str(v) for v in matrix[i]) for i in order)
    path.write_text("\n".join(lines) + "\n")
    return path


def kappa_from_pairs(matrix):
    """P(A), P(E), kappa from the individual (data value, key value) judgments the matrix counts."""
    data, key = [], []
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            data += [i] * int(matrix[i, j])
            key += [j] * int(matrix[i, j])
    data, key = np.array(data), np.array(key)
    p_a = np.mean(data == key)
    key_distribution = np.bincount(key, minlength=matrix.shape[1]) / len(key)
    p_e = np.sum(key_distribution ** 2)
    return p_a, p_e, (p_a - p_e) / (1 - p_e)


def test_task_kappa_against_the_expanded_judgments():
    result = paradise.task_kappa(MATRIX)
    p_a, p_e, kappa = kappa_from_pairs(MATRIX)
    assert result.total == MATRIX.sum() == 106
    assert result.p_a == pytest.approx(p_a, abs=1e-15)
    assert result.p_e == pytest.approx(p_e, abs=1e-15)
    assert result.kappa == pytest.approx(kappa, abs=1e-15)
    # P(E) uses the key's distribution only, not Cohen's product of both marginals.
    rows, columns = MATRIX.sum(axis=1) / 106, MATRIX.sum(axis=0) / 106
    assert result.p_e != pytest.approx(float(rows @ columns))


def test_kappa_cli_overall_and_per_attribute(cli, tmp_path):
    path = matrix_csv(tmp_path / "avm.csv")
    for spec in ("labels", "city=3,time=2"):
        result = cli("paradise", "kappa", path, "--attribute-groups", spec, "--format", "json")
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)
        assert list(data["attributes"]) == ["city", "time"]
        expected = {"overall": MATRIX, "city": MATRIX[:3, :3], "time": MATRIX[3:, 3:]}
        for name, block in expected.items():
            got = data["overall"] if name == "overall" else data["attributes"][name]
            p_a, p_e, kappa = kappa_from_pairs(block)
            assert got["total"] == block.sum()
            assert got["p_a"] == pytest.approx(p_a, abs=1e-15)
            assert got["p_e"] == pytest.approx(p_e, abs=1e-15)
            assert got["kappa"] == pytest.approx(kappa, abs=1e-15)
    table = cli("paradise", "kappa", path, "--attribute-groups", "labels").stdout
    assert table.splitlines()[0].split() == ["attribute", "T", "P(A)", "P(E)", "kappa"]
    assert table.splitlines()[2].split()[:2] == ["overall", "106"]


def test_rows_are_matched_to_columns_by_label(cli, tmp_path):
    straight = cli("paradise", "kappa", matrix_csv(tmp_path / "a.csv"), "--format", "json").stdout
    shuffled = cli("paradise", "kappa", matrix_csv(tmp_path / "b.csv", order=[3, 0, 4, 2, 1]), "--format", "json")
    assert shuffled.exit_code == 0
    assert json.loads(shuffled.stdout) == json.loads(straight)


def test_unlabelled_matrix(cli, tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("8,2\n1,9\n")
    data = json.loads(cli("paradise", "kappa", path, "--format", "json").stdout)
    kappa = kappa_from_pairs(np.array([[8, 2], [1, 9]]))[2]
    assert data["overall"]["kappa"] == pytest.approx(kappa, abs=1e-15)
    assert data["attributes"] == {}


def test_kappa_undefined_when_the_key_has_one_value():
    result = paradise.task_kappa([[5, 0], [0, 0]])
    assert result.p_e == 1 and math.isnan(result.kappa)


@pytest.mark.parametrize("text, message", [
    ("x,a,b,c\na,1,2,3\nb,1,2,3\n", "the matrix has 2 rows and 3 columns; a confusion matrix must be square"),
    ("x,a,b\na,1,2,3\nb,1,2\n", ":2: row 'a' has 3 counts but there are 2 columns"),
    ("x,a,b\na,1,2\nc,1,2\n", ":3: row label 'c' is not a column label"),
    ("x,a,b\na,1,-2\nb,1,2\n", ":2: row 'a', column 'b': expected a count (a number >= 0), got '-2'"),
    ("x,a,b\na,1,many\nb,1,2\n", "got 'many'"),
    ("x,a,b\na,0,0\nb,0,0\n", "every count is 0"),
    ("", "the file is empty"),
])
def test_bad_matrix_is_one_line_and_exit_1(cli, tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result = cli("paradise", "kappa", path)
    assert result.exit_code == 1
    assert result.stderr.startswith("castregin: error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("spec, message", [
    ("city=3,time=3", "--attribute-groups: the groups add up to 6 values but the matrix has 5"),
    ("city", "expected NAME=N,NAME=N,..."),
    ("city=3,city=2", "given twice"),
])
def test_bad_attribute_groups(cli, tmp_path, spec, message):
    result = cli("paradise", "kappa", matrix_csv(tmp_path / "avm.csv"), "--attribute-groups", spec)
    assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1


def test_attribute_groups_from_labels_need_adjacent_values():
    with pytest.raises(InputError, match="not adjacent"):
        paradise.parse_attribute_groups("labels", ["a:1", "b:1", "a:2"])
    with pytest.raises(InputError, match="not labelled ATTRIBUTE:VALUE"):
        paradise.parse_attribute_groups("labels", ["a:1", "b"])


# --- the performance function ------------------------------------------------------------------------------

KAPPA = [0.74, 0.93, 0.84, 0.46, 0.51, 0.91, 0.3, 0.87, 0.86, 0.63,
         0.51, 0.49, 0.48, 0.61, 0.65, 0.69, 1.0, 0.85, 0.74, 0.99]
TURNS = [18, 12, 26, 11, 26, 21, 10, 8, 17, 8, 11, 19, 29, 18, 25, 28, 26, 21, 17, 19]
SECONDS = [178, 151, 331, 116, 454, 267, 148, 173, 220, 113, 172, 289, 361, 275, 457, 327, 442, 322, 217, 405]
US = [21.4, 22.8, 17.2, 21.2, 12.7, 21.8, 18.5, 27.8, 24.7, 22.2,
      21.0, 15.5, 11.5, 15.9, 14.1, 13.9, 20.8, 22.0, 17.7, 20.8]
AGENT = ["A"] * 10 + ["B"] * 10


def dialogues_csv(path):
    lines = ["dialogue,agent,US,kappa,turns,seconds"]
    lines.extend(f"d{i + 1},{AGENT[i]},{US[i]},{KAPPA[i]},{TURNS[i]},{SECONDS[i]}" for i in range(len(US)))
    path.write_text("\n".join(lines) + "\n")
    return path


def reference_fit():
    """The PARADISE procedure done by hand with pandas, statsmodels and scipy."""
    import pandas as pd
    import statsmodels.api as sm
    from scipy import stats

    frame = pd.DataFrame({"US": US, "kappa": KAPPA, "turns": TURNS, "seconds": SECONDS})
    z = (frame - frame.mean()) / frame.std(ddof=1)
    full = sm.OLS(z["US"], sm.add_constant(z[["kappa", "turns", "seconds"]])).fit()
    kept = [name for name in ("kappa", "turns", "seconds") if full.pvalues[name] < 0.05]
    final = sm.OLS(z["US"], sm.add_constant(z[kept])).fit()
    performance = sum(final.params[name] * z[name] for name in kept)
    a, b = performance[:10], performance[10:]
    return {
        "full": full, "final": final, "kept": kept, "performance": performance.to_numpy(),
        "means": {"A": a.mean(), "B": b.mean()}, "t_test": stats.ttest_ind(a, b, equal_var=True),
    }


def test_fit_matches_statsmodels_and_scipy(cli, tmp_path):
    ref = reference_fit()
    assert ref["kept"] == ["kappa", "turns"]  # the data make the second regression drop a factor
    result = cli("paradise", "fit", dialogues_csv(tmp_path / "d.csv"), "--satisfaction", "US", "--success",
                 "kappa", "--cost", "turns", "--cost", "seconds", "--group", "agent", "--id", "dialogue",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data)[:4] == ["full", "final", "performance_by_group", "t_test"]
    for model in ("full", "final"):
        fitted = ref[model]
        names = list(fitted.params.index[1:])
        assert list(data[model]["coefficients"]) == names
        for name in names:
            assert data[model]["coefficients"][name] == pytest.approx(fitted.params[name], abs=1e-12)
            assert data[model]["p_values"][name] == pytest.approx(fitted.pvalues[name], rel=1e-9, abs=1e-15)
        assert data[model]["r_squared"] == pytest.approx(fitted.rsquared, abs=1e-12)
    assert data["full"]["coefficients"]["turns"] < 0  # a cost, signed as fitted
    assert data["performance_by_group"] == pytest.approx(ref["means"], abs=1e-12)
    assert list(data["performance_by_group"]) == ["A", "B"]
    assert data["t_test"]["statistic"] == pytest.approx(ref["t_test"].statistic, abs=1e-12)
    assert data["t_test"]["p_value"] == pytest.approx(ref["t_test"].pvalue, abs=1e-12)
    performance = [d["performance"] for d in data["performance"]]
    assert performance == pytest.approx(list(ref["performance"]), abs=1e-12)
    assert data["performance"][0]["dialogue"] == "d1" and data["performance"][0]["group"] == "A"
    b = ref["final"].params
    assert data["performance_function"]["formula"] == (
        f"Performance = {b['kappa']:.4f} N(kappa) - {-b['turns']:.4f} N(turns)")


def test_fit_table_output(cli, tmp_path):
    result = cli("paradise", "fit", dialogues_csv(tmp_path / "d.csv"), "--satisfaction", "US", "--success",
                 "kappa", "--cost", "turns", "--cost", "seconds", "--group", "agent")
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "Full model" in text and "Final model: the factors with p < 0.05" in text
    assert "Performance = " in text and "N(kappa) - " in text
    assert "Student's two-sample t-test (equal variances), A vs B: t(18) = " in text


def test_fit_without_group_and_with_three_groups():
    table = {"US": US, "kappa": KAPPA, "turns": TURNS, "seconds": SECONDS}
    fit = paradise.fit_performance(table, satisfaction="US", success="kappa", costs=["turns", "seconds"])
    assert fit.performance_by_group == {} and fit.t_test is None
    assert sum(fit.performance) == pytest.approx(0, abs=1e-12)  # z-scores average to 0
    groups = ["A"] * 7 + ["B"] * 7 + ["C"] * 6
    fit = paradise.fit_performance(table, satisfaction="US", success="kappa", costs=["turns"], groups=groups)
    assert list(fit.performance_by_group) == ["A", "B", "C"] and fit.t_test is None
    assert fit.performance_by_group["C"] == pytest.approx(np.mean(fit.performance[14:]), abs=1e-15)


def test_save_and_predict(cli, tmp_path):
    path = dialogues_csv(tmp_path / "d.csv")
    saved = tmp_path / "function.json"
    fit = cli("paradise", "fit", path, "--satisfaction", "US", "--success", "kappa", "--cost", "turns",
              "--cost", "seconds", "--save", saved, "--format", "json")
    fitted = json.loads(fit.stdout)
    function = json.loads(saved.read_text())
    assert function["coefficients"] == fitted["final"]["coefficients"]
    assert function["normalization"]["turns"]["mean"] == pytest.approx(np.mean(TURNS), abs=1e-12)
    assert function["normalization"]["turns"]["sd"] == pytest.approx(np.std(TURNS, ddof=1), abs=1e-12)
    # On the fitted dialogues both normalisations give the fitted performance.
    expected = [d["performance"] for d in fitted["performance"]]
    for normalize in ("fitted", "own"):
        result = cli("paradise", "predict", saved, path, "--normalize", normalize, "--format", "json")
        assert result.exit_code == 0, result.stderr
        got = [d["performance"] for d in json.loads(result.stdout)["performance"]]
        assert got == pytest.approx(expected, abs=1e-12)
    # A single new dialogue (only the columns the function uses), normalised as the fitted ones.
    new = tmp_path / "new.csv"
    new.write_text("id,turns,kappa\nx,15,0.8\n")
    result = cli("paradise", "predict", saved, new, "--id", "id", "--format", "csv")
    b = function["coefficients"]
    value = (b["kappa"] * (0.8 - np.mean(KAPPA)) / np.std(KAPPA, ddof=1)
             + b["turns"] * (15 - np.mean(TURNS)) / np.std(TURNS, ddof=1))
    lines = result.stdout.splitlines()
    assert lines[0] == "dialogue,performance" and lines[1].startswith("x,")
    assert float(lines[1].split(",")[1]) == pytest.approx(value, abs=1e-12)
    table = cli("paradise", "predict", saved, path, "--group", "agent").stdout
    assert table.startswith("Performance = ") and "mean performance" in table


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def one_line_error(result, message):
    assert result.exit_code == 1, result.stdout
    assert result.stderr.startswith("castregin: error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr, result.stderr


def test_fit_missing_column(cli, tmp_path):
    result = cli("paradise", "fit", dialogues_csv(tmp_path / "d.csv"), "--satisfaction", "US", "--success",
                 "kappa", "--cost", "repairs")
    one_line_error(result, "d.csv:1: no column 'repairs'; the header has: dialogue, agent, US, kappa, turns, seconds")


def test_fit_constant_column(cli, tmp_path):
    lines = ["US,kappa,turns,asr"] + [f"{US[i]},{KAPPA[i]},{TURNS[i]},0.9" for i in range(len(US))]
    path = write(tmp_path, "d.csv", "\n".join(lines) + "\n")
    result = cli("paradise", "fit", path, "--satisfaction", "US", "--success", "kappa", "--cost", "turns",
                 "--cost", "asr")
    one_line_error(result, "column 'asr' is constant (every value is 0.9), so it cannot be z-scored")


@pytest.mark.parametrize("text, args, message", [
    ("US,kappa,turns\n1,0.5,3\n2,high,4\n3,0.7,5\n", (),
     "d.csv:3: column 'kappa': expected a finite number, got 'high'"),
    ("US,kappa,turns\n1,0.5,3\n2,,4\n3,0.7,5\n", (), "d.csv:3: column 'kappa' is empty"),
    ("US,kappa,turns\n", (), "the file has a header but no dialogues"),
    ("US,kappa,turns\n1,0.5,3\n2,0.6,5\n3,0.9,4\n", (), "3 dialogues are too few for 2 factors"),
    ("US,kappa,turns\n1,0.5,3\n2,0.6,5\n3,0.9,4\n", ("--cost", "kappa"), "column 'kappa' is given twice"),
    ("US,kappa,turns,t2\n1,0.5,3,6\n2,0.6,5,10\n3,0.9,4,8\n4,0.1,7,14\n5,0.3,1,2\n", ("--cost", "t2"),
     "are collinear"),
    ("US,US,kappa\n1,2,3\n", (), "column 'US' appears twice in the header"),
])
def test_fit_bad_input(cli, tmp_path, text, args, message):
    path = write(tmp_path, "d.csv", text)
    result = cli("paradise", "fit", path, "--satisfaction", "US", "--success", "kappa", "--cost", "turns", *args)
    one_line_error(result, message)


def test_predict_bad_function_file(cli, tmp_path):
    data = dialogues_csv(tmp_path / "d.csv")
    one_line_error(cli("paradise", "predict", write(tmp_path, "f.json", "{\"coefficients\": 3}"), data),
                   "missing the key \"satisfaction\"")
    function = {"satisfaction": "US", "success": "kappa", "costs": ["turns"], "coefficients": {"kappa": 0.5},
                "normalization": {"kappa": {"mean": 0.5, "sd": 0}}}
    one_line_error(cli("paradise", "predict", write(tmp_path, "g.json", json.dumps(function)), data),
                   "normalization.kappa.sd: expected a number > 0, got 0")
    function["normalization"]["kappa"]["sd"] = 0.2
    function["coefficients"]["repairs"] = -0.3
    function["normalization"]["repairs"] = {"mean": 1, "sd": 1}
    one_line_error(cli("paradise", "predict", write(tmp_path, "h.json", json.dumps(function)), data),
                   "no column 'repairs'")


def test_help_has_examples(cli):
    for command in ("kappa", "fit", "predict"):
        result = cli("paradise", command, "--help")
        assert result.exit_code == 0 and "Examples:" in result.stdout


def test_the_command_module_imports_no_statsmodels_or_scipy():
    """`castregin --help` must stay cheap: the dialogue commands import their work inside the commands."""
    code = (
        "import sys\n"
        "import castregin.cli\n"
        "before = set(sys.modules)\n"
        "import castregin.cli.dialogue\n"
        "new = set(sys.modules) - before\n"
        "heavy = ('statsmodels', 'scipy', 'pandas', 'castregin.dialogue', 'castregin.formats.dialogue')\n"
        "print(','.join(sorted(m for m in new if m.startswith(heavy))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_no_significant_factor_gives_an_empty_function(cli, tmp_path):
    rows = zip([3, 5, 2, 4, 1, 5, 3, 2], [0.5, 0.6, 0.9, 0.2, 0.4, 0.7, 0.3, 0.8],
               [10, 12, 9, 14, 11, 8, 13, 12], strict=True)
    path = write(tmp_path, "d.csv", "US,kappa,turns\n" + "".join(f"{u},{k},{t}\n" for u, k, t in rows))
    result = cli("paradise", "fit", path, "--satisfaction", "US", "--success", "kappa", "--cost", "turns",
                 "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == ("castregin: warning: no factor is significant at 0.05; the performance function "
                             "is empty\n")
    data = json.loads(result.stdout)
    assert all(p >= 0.05 for p in data["full"]["p_values"].values())
    assert data["final"] == {"coefficients": {}, "p_values": {}, "r_squared": 0.0}
    assert data["performance_function"]["formula"] == "Performance = 0"
    assert {d["performance"] for d in data["performance"]} == {0.0}
