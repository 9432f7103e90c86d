"""Outputs never destroy a file: special files are written through, inputs are never overwritten however
they are spelled, multi-file outputs are all or nothing, and every failure is one line with no temporary
file left behind, SIGTERM and SIGINT included."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from castregin.errors import InputError
from castregin.formats import output as output_module
from castregin.formats.output import OutputSet, replace_directory

REPO = Path(__file__).resolve().parents[2]
CASTREGIN = str(Path(sys.executable).parent / "castregin")
QRELS = "t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q5 3\n"
RUN = "t1 Q0 Q1 1 2.0 alpha\nt1 Q0 Q2 2 1.0 alpha\nt2 Q0 Q5 1 1.0 alpha\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "q.qrel").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    return tmp_path


def _temporaries(directory: Path) -> list[Path]:
    return list(directory.rglob("*.castregin-*.tmp*"))


def _run(*args, cwd=None, **kwargs):
    return subprocess.run([CASTREGIN, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False, **kwargs)


def _evaluate_args(d):
    return ["evaluate", d / "a.run", "--qrels", d / "q.qrel", "-m", "P@1"]


# --- special files are written through, never replaced ---------------------------------------------------


def test_a_symlink_to_a_file_keeps_the_link_and_replaces_the_target(cli, files):
    target = files / "real.txt"
    target.write_text("old\n")
    os.chmod(target, 0o600)
    link = files / "link.txt"
    link.symlink_to(target)
    assert cli(*_evaluate_args(files), "-o", link).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "alpha" in target.read_text() and stat.S_IMODE(target.stat().st_mode) == 0o600  # mode kept
    assert _temporaries(files) == []


def test_a_dangling_symlink_is_followed(cli, files):
    link = files / "dangling.txt"
    link.symlink_to(files / "new.txt")
    assert cli(*_evaluate_args(files), "-o", link).exit_code == 0
    assert link.is_symlink() and "alpha" in (files / "new.txt").read_text()


def test_a_fifo_is_written_through(cli, files):
    fifo = files / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(Path(fifo).read_text()))
    reader.start()
    assert cli(*_evaluate_args(files), "-o", fifo).exit_code == 0
    reader.join(10)
    assert "alpha" in received[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_character_devices_and_links_to_them_stay(cli, files):
    link = files / "null-link"
    link.symlink_to("/dev/null")
    for target in ("/dev/null", link):
        assert cli(*_evaluate_args(files), "-o", target).exit_code == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and link.is_symlink()
    assert _temporaries(files) == []


def test_dev_stdout_writes_to_the_shells_redirection_and_appends(files):
    out = files / "out.txt"
    out.write_text("kept\n")
    before = os.lstat("/dev/stdout")
    with open(out, "a") as handle:  # `>> out.txt`
        result = subprocess.run([CASTREGIN, *map(str, _evaluate_args(files)), "-o", "/dev/stdout"],
                                stdout=handle, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.startswith("kept\n") and "alpha" in text
    assert stat.S_ISLNK(os.lstat("/dev/stdout").st_mode) == stat.S_ISLNK(before.st_mode)


def test_process_substitution(files):
    if shutil.which("bash") is None:
        pytest.skip("bash is needed for a process substitution")
    out = files / "sub.txt"
    command = f"{CASTREGIN} evaluate a.run --qrels q.qrel -m P@1 -o >(cat > {out}); wait"
    result = subprocess.run(["bash", "-c", command], cwd=files, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    for _ in range(100):
        if out.exists() and "alpha" in out.read_text():
            break
        time.sleep(0.05)
    assert "alpha" in out.read_text()


def test_a_directory_or_a_block_device_is_refused(cli, files):
    result = cli(*_evaluate_args(files), "-o", files)
    assert result.exit_code == 1 and result.stderr == f"castregin: error: {files}: is a directory; give a file name\n"
    # A node of an unassigned device number (240: "local/experimental use"): no disk behind it, should the
    # refusal ever break. Making one needs root.
    block = files / "block"
    try:
        os.mknod(block, 0o600 | stat.S_IFBLK, os.makedev(240, 0))
    except PermissionError:
        pytest.skip("making a block device node needs root")
    result = cli(*_evaluate_args(files), "-o", block)
    assert result.exit_code == 1 and "is a block device" in result.stderr


# --- an input is never an output, however it is spelled ----------------------------------------------------


def test_inputs_by_another_path_are_refused(cli, files, monkeypatch):
    monkeypatch.chdir(files)
    os.link(files / "a.run", files / "hard.run")
    (files / "soft.run").symlink_to(files / "a.run")
    for spelled in ("./a.run", "a.run", "hard.run", "soft.run", f"{files}/../{files.name}/a.run"):
        before = (files / "a.run").read_bytes()
        result = cli("evaluate", "a.run", "--qrels", "q.qrel", "-o", spelled)
        assert result.exit_code == 1 and "refusing to overwrite the input file" in result.stderr, spelled
        assert (files / "a.run").read_bytes() == before
    result = cli("qrels", "subset", "q.qrel", "--turns", "a.run", "-o", "./q.qrel")
    assert result.exit_code == 1 and "refusing to overwrite the input file" in result.stderr


def _episode(clembench, tmp_path):
    source = next(clembench.glob("v1.0/gpt*/privateshared/1_job-interview/episode_0"))
    episode = tmp_path / "ep"
    shutil.copytree(source, episode)
    return episode


def test_scorekeeping_outputs_that_are_inputs_or_each_other(cli, clembench, tmp_path):
    episode = _episode(clembench, tmp_path)
    interactions = (episode / "interactions.json").read_bytes()
    result = cli("scorekeeping", "score", episode, "-o", episode / "interactions.json")
    assert result.exit_code == 1 and "refusing to overwrite the input file" in result.stderr
    result = cli("scorekeeping", "score", episode, "--write", "-o", episode / "scores.json")
    assert result.exit_code == 1 and "is the same file as the output" in result.stderr
    assert (episode / "interactions.json").read_bytes() == interactions


def test_paradise_save_and_output_the_same_file(cli, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("US,kappa,turns\n" + "".join(f"{i % 5},{i / 10},{20 - i}\n" for i in range(10)))
    result = cli("paradise", "fit", data, "--satisfaction", "US", "--success", "kappa", "--cost", "turns",
                 "--save", tmp_path / "f.json", "-o", tmp_path / "./f.json")
    assert result.exit_code == 1 and "is the same file as the output" in result.stderr
    assert not (tmp_path / "f.json").exists()


def test_bank_out_through_a_symlink_to_an_input_bank(cli, tmp_path):
    bank = REPO / "data" / "question_bank.json"
    link = tmp_path / "bank-link.json"
    link.symlink_to(bank)
    result = cli("convert", "questions", REPO / "data/runs/alpha.json", "--bank", bank, "--bank-out", link,
                 "-o", tmp_path / "a.run")
    assert result.exit_code == 1 and "refusing to overwrite the input file" in result.stderr
    assert not (tmp_path / "a.run").exists()


# --- never outside the directory asked for -----------------------------------------------------------------


def test_aggregate_prefix_is_a_name_not_a_path(cli, tmp_path):
    out = tmp_path / "deep" / "out"
    for prefix in ("../../x", "a/b", ".hidden", "x\\y"):
        result = cli("aggregate", REPO / "data/crowd/judgments.csv", "--criteria", "relevance",
                     "--prefix", prefix, "--out-dir", out)
        assert result.exit_code == 2 and "not a plain name" in result.stderr, prefix
    assert list(tmp_path.rglob("*")) == []


# --- all or nothing ------------------------------------------------------------------------------------------


def _aggregate(cli, out, *extra):
    return cli("aggregate", REPO / "data/crowd/judgments.csv", "--criteria", "relevance,novelty",
               "--out-dir", out, *extra)


def test_aggregate_failing_part_way_keeps_the_old_outputs(cli, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert _aggregate(cli, out).exit_code == 0
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    for p in out.iterdir():
        p.write_bytes(b"old " + p.name.encode())
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    real_replace = os.replace
    calls = []

    def failing_replace(source, target):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_replace(source, target)

    monkeypatch.setattr(output_module.os, "replace", failing_replace)
    result = _aggregate(cli, out, "--min-label", "1")
    monkeypatch.undo()
    assert result.exit_code == 1 and result.stderr.endswith(": cannot write: the disk is full\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old  # exactly as they were
    assert _temporaries(tmp_path) == []


def test_aggregate_into_a_new_directory_that_fails_leaves_no_directory(cli, tmp_path, monkeypatch):
    out = tmp_path / "new" / "out"

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output_module.os, "replace", no_space)
    result = _aggregate(cli, out)
    assert result.exit_code == 1 and "disk is full" in result.stderr
    assert not (tmp_path / "new").exists()


def test_aggregate_output_name_taken_by_a_directory(cli, tmp_path):
    out = tmp_path / "out"
    (out / "question_relevance.qrel").mkdir(parents=True)
    result = _aggregate(cli, out)
    assert result.exit_code == 1 and "is a directory" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["question_relevance.qrel"]


def test_a_device_that_fails_takes_the_files_back(tmp_path, capsys):
    # The files were committed before the streams: a failing /dev/full left them in place.
    kept = tmp_path / "kept.json"
    kept.write_text("old\n")
    with pytest.raises(InputError, match="/dev/full: cannot write: the disk is full"), \
            OutputSet() as outputs:  # noqa: PT012 - the error comes at the commit, when the block ends
        outputs.write_text(kept, "new\n")
        outputs.write_text(tmp_path / "fresh.json", "new\n")
        outputs.write_text("-", "a table\n")
        outputs.write_text("/dev/full", "a figure\n")
    assert kept.read_text() == "old\n" and not (tmp_path / "fresh.json").exists()
    assert capsys.readouterr().out == ""  # the device is written before standard output
    assert _temporaries(tmp_path) == []


def test_qrels_merge_and_agreement_commit_every_output_or_none(tmp_path):
    (tmp_path / "a.qrel").write_text(QRELS)
    (tmp_path / "b.qrel").write_text("t1 0 Q1 1\nt1 0 Q2 2\nt2 0 Q5 0\nt3 0 Q7 1\n")
    for before in (None, "old\n"):
        if before is not None:
            (tmp_path / "p.json").write_text(before)
        result = _run("qrels", "merge", "a.qrel", "b.qrel", "--provenance", "p.json", "-o", "/dev/full",
                      cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert result.stderr == "castregin: error: /dev/full: cannot write: the disk is full\n"
        assert (tmp_path / "p.json").exists() == (before is not None)
        assert before is None or (tmp_path / "p.json").read_text() == before
    result = _run("agreement", "a.qrel", "b.qrel", "--samples", "0", "--plot", "/dev/full", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""  # the table was printed, then the plot failed
    assert result.stderr == "castregin: error: /dev/full: cannot write: the disk is full\n"
    assert _temporaries(tmp_path) == []


def test_convert_out_dir_is_all_or_nothing(cli, tmp_path):
    out = tmp_path / "converted"
    good = REPO / "data/runs/alpha.json"
    bad = tmp_path / "bad.json"
    bad.write_text('{"run_name": "x", "turns": [{"turn_id": "1_1-1", "questions": [{"question": 3}]}]}')
    result = cli("convert", "questions", good, bad, "--bank", REPO / "data/question_bank.json",
                 "--bank-out", tmp_path / "bank.json", "--out-dir", out)
    assert result.exit_code == 1
    assert not out.exists() and not (tmp_path / "bank.json").exists()
    assert _temporaries(tmp_path) == []


def test_report_directory_holds_only_the_current_report(cli, files, tmp_path):
    out = tmp_path / "report"
    assert cli("report", files / "a.run", "--qrels", files / "q.qrel", "-m", "P@1", "--out", out).exit_code == 0
    first = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert any("P_1" in str(p) for p in first)
    assert cli("report", files / "a.run", "--qrels", files / "q.qrel", "-m", "nDCG@3", "--out", out).exit_code == 0
    now = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert now != first
    assert all("P_1" not in str(p) for p in now)  # the previous report's per-turn figure is gone
    assert _temporaries(tmp_path) == []


@pytest.mark.parametrize("planted", ["figures/mine.png", "figures/notes.txt", "runs/deep/mine.html", ".hidden"])
def test_report_refuses_to_delete_a_file_it_did_not_write_anywhere_in_its_tree(cli, files, tmp_path, planted):
    out = tmp_path / "report"
    assert cli("report", files / "a.run", "--qrels", files / "q.qrel", "-m", "P@1", "--out", out).exit_code == 0
    (out / planted).parent.mkdir(parents=True, exist_ok=True)
    (out / planted).write_bytes(b"a user's file")
    result = cli("report", files / "a.run", "--qrels", files / "q.qrel", "-m", "P@1", "--out", out)
    assert result.exit_code == 1
    assert f"holds files that are not castregin's report ({planted})" in result.stderr
    assert (out / planted).read_bytes() == b"a user's file"


def test_a_report_of_an_older_castregin_is_replaced_if_every_file_is_one_a_report_has(cli, files, tmp_path):
    out = tmp_path / "report"
    (out / "figures").mkdir(parents=True)
    (out / ".castregin-output").write_text("castregin report\n")  # the marker before it listed the files
    (out / "index.html").write_text("old")
    (out / "figures/old.png").write_bytes(b"old")
    assert cli("report", files / "a.run", "--qrels", files / "q.qrel", "-m", "P@1", "--out", out).exit_code == 0
    assert not (out / "figures/old.png").exists()
    (out / ".castregin-output").write_text("castregin report\n")
    (out / "figures/notes.txt").write_text("mine")
    result = cli("report", files / "a.run", "--qrels", files / "q.qrel", "-m", "P@1", "--out", out)
    assert result.exit_code == 1 and "(figures/notes.txt)" in result.stderr


def test_report_refuses_a_directory_that_is_not_a_report(cli, files, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes\n")
    result = cli("report", files / "a.run", "--qrels", files / "q.qrel", "--out", out)
    assert result.exit_code == 1 and "holds files that are not castregin's report (notes.txt)" in result.stderr
    assert (out / "notes.txt").read_text() == "my notes\n"
    result = cli("report", files / "a.run", "--qrels", files / "q.qrel", "--out", files / "a.run")
    assert result.exit_code == 1 and "exists and is not a directory" in result.stderr


def test_replace_directory_failing_keeps_the_old_one(tmp_path, monkeypatch):
    out = tmp_path / "r"
    replace_directory(out, {"index.html": b"old"}, kind="report")
    real_rename = os.rename

    def failing(source, target):
        if Path(target) == out and "-old-" not in str(source):  # the new report cannot move in
            raise OSError(errno.EACCES, "Permission denied")
        return real_rename(source, target)

    monkeypatch.setattr(output_module.os, "rename", failing)
    with pytest.raises(InputError, match="permission denied"):
        replace_directory(out, {"index.html": b"new"}, kind="report")
    monkeypatch.undo()
    assert (out / "index.html").read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["r"]


def test_output_set_commits_all_or_none(tmp_path):
    (tmp_path / "keep.txt").write_text("old")
    with pytest.raises(RuntimeError), OutputSet() as outputs:  # noqa: PT012 - the failure must come inside the output's block
        outputs.write_text(tmp_path / "keep.txt", "new")
        outputs.write_text(tmp_path / "other.txt", "new")
        raise RuntimeError("a failure after staging")
    assert (tmp_path / "keep.txt").read_text() == "old" and not (tmp_path / "other.txt").exists()
    assert _temporaries(tmp_path) == []


# --- failures are one line -------------------------------------------------------------------------------------


def test_disk_full(files):
    result = _run(*_evaluate_args(files), "-o", "/dev/full")
    assert result.returncode == 1 and result.stderr == "castregin: error: /dev/full: cannot write: the disk is full\n"
    with open("/dev/full", "w") as full:
        result = subprocess.run([CASTREGIN, *map(str, _evaluate_args(files))], stdout=full, stderr=subprocess.PIPE,
                                text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert result.stderr == "castregin: error: <stdout>: cannot write: the disk is full\n"


@pytest.mark.parametrize("command", ["trec_eval", "evaluate"])
def test_a_reader_that_leaves_ends_castregin_quietly_as_sigpipe_ends_unix_tools(files, command):
    # `castregin trec_eval ... | head -1`: the output is far larger than a pipe's buffer, so the write meets the
    # closed pipe. trec_eval, cat and every Unix tool die of SIGPIPE there: exit 141 in the shell, nothing said.
    turns = 3000
    (files / "big.qrel").write_text("".join(f"t{t} 0 Q1 1\n" for t in range(turns)))
    (files / "big.run").write_text("".join(f"t{t} Q0 Q{i} {i} {10 - i} alpha\n" for t in range(turns)
                                           for i in range(1, 4)))
    args = {"trec_eval": ["trec_eval", "-q", "-m", "all_trec", "big.qrel", "big.run"],
            "evaluate": ["evaluate", "big.run", "--qrels", "big.qrel", "-q", "--format", "tsv"]}[command]
    pipeline = f"{CASTREGIN} {' '.join(args)} | head -1; echo \"status ${{PIPESTATUS[0]}}\" >&2"
    done = subprocess.run(["bash", "-c", pipeline],
                          cwd=files, capture_output=True, text=True, timeout=300, check=False)
    assert done.stdout.count("\n") == 1
    assert done.stderr == "status 141\n"  # quiet: no "cannot write: Broken pipe", no Python traceback


def test_disk_full_while_writing_a_file_leaves_nothing(cli, files, monkeypatch):
    def no_space(self, *args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output_module._Unclosable, "write", no_space)
    result = cli(*_evaluate_args(files), "-o", files / "out.txt")
    assert result.exit_code == 1 and result.stderr.endswith("cannot write: the disk is full\n")
    assert not (files / "out.txt").exists() and _temporaries(files) == []


def test_standard_output_closed(files):
    result = subprocess.run(["bash", "-c", f"{CASTREGIN} evaluate a.run --qrels q.qrel -m P@1 >&-"], cwd=files,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert result.stderr == "castregin: error: standard output is closed; give -o FILE\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_permission_denied(cli, files):
    locked = files / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        result = cli(*_evaluate_args(files), "-o", locked / "out.txt")
    finally:
        os.chmod(locked, 0o700)
    assert result.exit_code == 1 and "permission denied" in result.stderr


def test_a_closed_pipe_is_not_an_error(files):
    result = subprocess.run(["bash", "-c", f"{CASTREGIN} evaluate a.run --qrels q.qrel -m P@1 --per-turn | head -c1"],
                            cwd=files, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0 and "Traceback" not in result.stderr


# --- signals -------------------------------------------------------------------------------------------------


def _ignoring(*numbers):
    """A preexec_fn starting the child with these signals ignored, as a shell starts `cmd &` (SIGINT) or nohup
    (SIGHUP)."""
    return lambda: [signal.signal(number, signal.SIG_IGN) for number in numbers]


def _defaulting(*numbers):
    """A preexec_fn starting the child with these signals' default actions (SIG_IGN is inherited across exec)."""
    return lambda: [signal.signal(number, signal.SIG_DFL) for number in numbers]


def _staged_convert(tmp_path, preexec_fn=None) -> subprocess.Popen:
    """convert waiting, with the first output's temporary file open: the first run is converted and staged,
    the second input is a FIFO nobody writes."""
    fifo = tmp_path / "second.json"
    os.mkfifo(fifo)
    process = subprocess.Popen([CASTREGIN, "convert", "questions", str(REPO / "data/runs/alpha.json"), str(fifo),
                                "--bank", str(REPO / "data/question_bank.json"), "--out-dir", str(tmp_path / "out")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=preexec_fn)  # noqa: PLW1509 - how a shell starts `cmd &`, the point here
    for _ in range(600):
        if _temporaries(tmp_path) or process.poll() is not None:
            break
        time.sleep(0.05)
    assert _temporaries(tmp_path), "the first output was never staged"
    return process


@pytest.mark.parametrize(("signal_number", "code", "says", "ignored"), [
    (signal.SIGTERM, 143, "stopped by SIGTERM", False),
    (signal.SIGHUP, 129, "stopped by SIGHUP", False),
    (signal.SIGINT, 130, "interrupted", False),
    # A background job of a script (`castregin ... &`) starts with SIGINT ignored; kill -INT still ends it.
    (signal.SIGINT, 130, "interrupted", True),
], ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGINT-ignored-by-the-parent"])
def test_a_signal_mid_convert_leaves_no_temporary_file(tmp_path, signal_number, code, says, ignored):
    # Not ignored: the child starts with the signal's default action, whatever the test run inherited (under
    # `nohup make test` SIGHUP comes ignored, and castregin rightly keeps it so: the test then waited 60 s).
    process = _staged_convert(tmp_path, _ignoring(signal_number) if ignored else _defaulting(signal_number))
    try:
        process.send_signal(signal_number)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code, stderr
    assert stderr.strip().splitlines()[-1] == f"castregin: {says}; no output was written"
    assert _temporaries(tmp_path) == [] and not (tmp_path / "out").exists()


def test_nohup_keeps_sighup_ignored(tmp_path):
    process = _staged_convert(tmp_path, _ignoring(signal.SIGHUP))
    try:
        process.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 143 and _temporaries(tmp_path) == []


def test_json_outputs_are_written_through_the_safe_writer(cli, tmp_path):
    # ope simulate: the experience file and the summary; the summary goes to stdout when the file is named.
    out = tmp_path / "exp.jsonl"
    result = cli("ope", "simulate", "--dialogues", "5", "-o", out, "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["dialogues"] == 5
    assert len(out.read_text().splitlines()) == 5


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the child's CPU time in /proc")
def test_sigint_stops_glad_promptly_though_the_parent_ignored_it(tmp_path):
    # GLAD's EM loop over 600,000 labels takes seconds (from about 0.7 to 7.5 CPU seconds into the command;
    # over 210,000 it ended at 2.6, so that under load the signal could come after it); SIGINT (ignored by
    # the parent, as for `cmd &`) must end it at once, with no output and no temporary file.
    rng = np.random.default_rng(0)
    items = np.repeat(np.arange(200_000), 3)
    workers = (items * 7 + np.tile([0, 100, 200], 200_000)) % 300  # three workers an item, never one twice
    rows = [f"W{w},t{u // 40},d{u},{label}"
            for u, w, label in zip(items, workers, rng.integers(0, 4, len(items)), strict=True)]
    (tmp_path / "crowd.csv").write_text("worker_id,turn_id,item_id,relevance\n" + "\n".join(rows) + "\n")
    process = subprocess.Popen([CASTREGIN, "aggregate", "crowd.csv", "--criteria", "relevance", "--method", "glad",
                                "--out-dir", "out"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "TMPDIR": str(tmp_path)},
                               preexec_fn=_ignoring(signal.SIGINT))  # noqa: PLW1509 - as a shell starts `cmd &`
    try:
        while process.poll() is None and _cpu_seconds(process.pid) < 2.5:  # read, and well into the model
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, stderr = process.communicate(timeout=60)
        waited = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert waited < 10, f"SIGINT took {waited:.1f} s to end the command"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crowd.csv"]


# --- disk full while a command streams into its outputs ------------------------------------------------------


def _big_json_run(path: Path) -> Path:
    turns = [{"turn_id": f"{100 + t}_1-{i}", "questions": [{"question": f"Q{q:04d}", "score": 10.0 - q % 10}
                                                           for q in range(1, 7)]}
             for t in range(40) for i in range(1, 30)]
    path.write_text(json.dumps({"run_name": "big", "turns": turns}))
    return path


def test_disk_full_while_convert_streams_into_out_dir_is_one_line(cli, tmp_path, monkeypatch):
    class Full(io.BufferedWriter):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output_module, "open", lambda fd, mode: Full(io.FileIO(fd, mode)), raising=False)
    out = tmp_path / "out"
    result = cli("convert", "questions", _big_json_run(tmp_path / "big.json"),
                 "--bank", REPO / "data/question_bank.json",
                 "--out-dir", out)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == f"castregin: error: {out / 'big.run'}: cannot write: the disk is full"
    assert not out.exists() and _temporaries(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a tmpfs needs root")
def test_disk_full_on_a_real_tiny_file_system(tmp_path):
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(tiny)], capture_output=True,
                      check=False).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        result = _run("convert", "questions", _big_json_run(tmp_path / "big.json"), "--bank",
                      REPO / "data/question_bank.json", "--out-dir", tiny / "out")
        left = sorted(p.name for p in tiny.rglob("*"))
    finally:
        subprocess.run(["umount", str(tiny)], check=True)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1].endswith("cannot write: the disk is full")
    assert left == []


@pytest.mark.parametrize("binary", [False, True])
def test_standard_output_is_prepared_in_memory_then_on_disk(binary, monkeypatch, capfdbinary):
    """What goes to standard output is held in full first: in memory up to a bound, past it in a temporary file
    (tempfile's, made then), the bytes the same either way and nothing out before the commit."""
    monkeypatch.setattr(output_module, "_SPOOL_BYTES", 1000)
    chunks = [f"line {i} é\n" for i in range(300)]  # about 3,300 bytes: past the bound
    with OutputSet() as outputs:
        handle = outputs.open("-", "wb" if binary else "w")
        spool = handle._handle if binary else handle._handle.buffer
        for chunk in chunks[:50]:
            handle.write(chunk.encode() if binary else chunk)
        handle.flush()
        assert spool._in_memory
        for chunk in chunks[50:]:
            handle.write(chunk.encode() if binary else chunk)
        handle.flush()
        assert not spool._in_memory
        assert capfdbinary.readouterr().out == b""
    assert capfdbinary.readouterr().out == "".join(chunks).encode()
