"""The report opens in a real browser: headless Chromium renders it offline, without console errors,
and the screenshot shows the embedded figures; with 30 runs of long names, no table cell overflows.
Skipped when Chromium is not installed (``make test`` installs Debian's ``chromium`` when it can); the
30-run test drives it with Playwright, and is skipped when the playwright package is absent."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image
from reference_runs import write_reference_runs

from castregin import formats
from castregin.render.plots import INTERVAL_COLOUR, NEGATIVE, POSITIVE

from .test_report import SIMULATED_RUNS, write_report

WIDTH, HEIGHT = 1280, 4000


def _chromium() -> str | None:
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


# Every flag that could make the browser reach the network is off: the page must stand alone.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _headless(page: Path, profile: Path, *action: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *action,
               page.as_uri()]
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
    assert "Significance matrix" in dom.stdout and dom.stdout.count('src="data:image/png;base64,') == 10
    for run in runs:
        assert run.tag in dom.stdout


#: Runs in the page: every cell of the leaderboards and significance matrices whose content is wider than
#: the cell (scrollWidth > clientWidth) or pokes out of it, and every header cell not as wide as its column.
OVERFLOW_CHECK = """() => {
  const bad = [];
  const tables = [...document.querySelectorAll("table.matrix, table.leaderboard")];
  for (const table of tables) {
    for (const cell of table.querySelectorAll("th, td")) {
      const box = cell.getBoundingClientRect();
      if (cell.scrollWidth > cell.clientWidth + 1 || cell.scrollHeight > cell.clientHeight + 1)
        bad.push(["overflows", table.className, cell.textContent.slice(0, 50), cell.scrollWidth, cell.clientWidth]);
      for (const part of cell.querySelectorAll("span, strong, small, sup, em")) {
        const inner = part.getBoundingClientRect();
        if (inner.left < box.left - 1 || inner.right > box.right + 1 || inner.top < box.top - 1
            || inner.bottom > box.bottom + 1)
          bad.push(["pokes out", table.className, part.textContent.slice(0, 50)]);
      }
    }
    const header = table.tHead.rows[0].cells, first = table.tBodies[0].rows[0].cells;
    for (let i = 0; i < header.length; i++) {
      const width = header[i].getBoundingClientRect().width, column = first[i].getBoundingClientRect().width;
      if (Math.abs(width - column) > 1)
        bad.push(["header wider", table.className, header[i].textContent, width, column]);
    }
  }
  const rotated = [...document.querySelectorAll("table.matrix th.rot span")]
    .filter(s => s.textContent.length >= 8).map(s => s.getBoundingClientRect());
  return {bad, matrices: document.querySelectorAll("table.matrix").length,
          leaderboardRows: document.querySelector("table.leaderboard").tBodies[0].rows.length,
          upright: rotated.filter(r => r.width > r.height).length, rotated: rotated.length,
          pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth};
}"""


def test_thirty_runs_with_long_names_fit_their_cells(tmp_path, simulated):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    out, _ = simulated
    problems, shot, matrix_shot = [], tmp_path / "report-30-runs.png", tmp_path / "report-30-runs-matrix.png"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 2400})
            page.route(re.compile(r"^https?://"), lambda route: (problems.append(route.request.url), route.abort()))
            page.on("pageerror", lambda error: problems.append(f"error: {error}"))
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            page.goto((out / "index.html").as_uri())
            page.screenshot(path=str(shot))
            page.locator("table.matrix").first.screenshot(path=str(matrix_shot))
            layout = page.evaluate(OVERFLOW_CHECK)
        finally:
            browser.close()
    assert problems == []
    assert layout["bad"] == []
    assert layout["matrices"] == 3 and layout["leaderboardRows"] == SIMULATED_RUNS
    assert layout["rotated"] > 2 * SIMULATED_RUNS and layout["upright"] == 0  # long names read bottom to top
    assert layout["pageWidth"] <= layout["viewport"]  # wide tables scroll inside their own box
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (2400, WIDTH) and pixels[..., :3].std() > 0.05  # not blank
    assert _has_colour(pixels, INTERVAL_COLOUR)  # the leaderboard's figure decoded and drawn
    matrix = image.imread(matrix_shot)
    assert _has_colour(matrix, "#d3f9d8") and _has_colour(matrix, "#ffe3e3")  # significant wins and losses
