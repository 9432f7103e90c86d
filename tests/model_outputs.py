"""What a model command wrote, for comparing a disturbed run with an undisturbed one."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path


def outputs(out: Path) -> dict[str, str]:
    """Every output in ``out`` but the cache, the run log's per-invocation part (``this_run``, the endpoint's
    address, which changes with the server's port) left out."""
    found = {}
    for path in sorted(out.iterdir()):
        if path.name.startswith(("cache.sqlite", ".")):
            continue
        text = path.read_text()
        if path.name == "run_log.json":
            log = json.loads(text)
            del log["this_run"], log["endpoint"]
            text = json.dumps(log, sort_keys=True)
        found[path.name] = text
    return found


def stopped_by_sigterm(command: list[str], env: dict, server, answered: int) -> str:
    """Run ``command`` in a process, send it a real SIGTERM once ``server`` has answered ``answered`` calls, and
    return its standard error once it has ended (exit code 143, the line saying what the cache kept) and the
    calls it left in flight at the server are done."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while sum(server.answered.values()) < answered and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 143, stderr
    assert "answers received so far are kept" in stderr
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    return stderr


def only_the_cache(out: Path) -> bool:
    """Whether ``out`` holds the answer cache and nothing else (SQLite's side files aside)."""
    return {p.name for p in out.iterdir()} - {"cache.sqlite-wal", "cache.sqlite-shm"} == {"cache.sqlite"}
