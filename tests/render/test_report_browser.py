"""The report opens in a real browser: headless Chromium renders it offline, without console errors,
and the screenshot shows the embedded figures. Skipped when Chromium is not installed (``make test``
installs Debian's ``chromium`` when it can)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image
from reference_runs import write_reference_runs

from castregin import formats
from castregin.render.plots import NEGATIVE, POSITIVE
from castregin.render.report import write_report

WIDTH, HEIGHT = 1280, 4000


def _chromium() -> str | None:
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def _headless(page: Path, profile: Path, *action: str) -> subprocess.CompletedProcess:
    # Every flag that could make the browser reach the network is off: the page must stand alone.
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *action, page.as_uri()]
    return subprocess.run(command, check=False, capture_output=True, text=True, timeout=180,
                          cwd=profile.parent)


def _console_messages(log: str) -> list[str]:
    # Chromium logs every console message of the page, errors included, as INFO:CONSOLE; the report has
    # no script, so any such line (an uncaught exception, a blocked resource) is a failure.
    return [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def _screenshot(page: Path, tmp_path: Path, name: str) -> tuple[Path, subprocess.CompletedProcess]:
    shot = tmp_path / name
    result = _headless(page, tmp_path / f"profile-{name}", f"--screenshot={shot}",
                       f"--window-size={WIDTH},{HEIGHT}")
    return shot, result


def _has_colour(pixels: np.ndarray, hex_colour: str, minimum: int = 200) -> bool:
    target = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    close = np.all(np.abs(pixels[..., :3] - target) < 6 / 255, axis=-1)
    return int(close.sum()) >= minimum


def test_detector_catches_a_broken_page(tmp_path):
    # Proves the console check below is not vacuous on this Chromium.
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>")
    _, result = _screenshot(page, tmp_path, "broken.png")
    assert any("Uncaught ReferenceError" in line for line in _console_messages(result.stderr))


def test_report_renders_in_headless_chromium(cast2022, tmp_path):
    runs = [formats.read_run(p) for p in write_reference_runs(cast2022, tmp_path)]
    qrels = [formats.read_qrels(cast2022 / "regin/qrels/question_relevance_all.qrel")]
    index = write_report(runs, qrels, tmp_path / "report", baseline="bm25_baseline_mi_run")

    shot, result = _screenshot(index, tmp_path, "report-screenshot.png")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _console_messages(result.stderr) == []
    assert shot.is_file() and shot.stat().st_size > 50_000
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (HEIGHT, WIDTH)
    # The bars of the per-turn plot are drawn only inside the embedded PNGs: seeing their colours in
    # the screenshot means the images decoded and rendered, not only the text.
    assert _has_colour(pixels, POSITIVE) and _has_colour(pixels, NEGATIVE)

    dom = _headless(index, tmp_path / "profile-dom", "--dump-dom")
    assert dom.returncode == 0
    assert "Significance matrix" in dom.stdout and dom.stdout.count('src="data:image/png;base64,') == 9
    for run in runs:
        assert run.tag in dom.stdout
