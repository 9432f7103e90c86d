"""The package's layers: every import points down (README, Layout).

foundation (errors, limits, data, arrays, labels) < formats < stages (track, judging, evaluation, dialogue, ope,
nuggets) < render < cli < the public API (castregin/__init__). A stage imports no other stage, except evaluation,
which may use track (pools for reusability analyses). Imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "castregin"
FOUNDATION = {"errors", "limits", "data", "arrays", "labels", "statistics"}
STAGES = {"track", "judging", "evaluation", "dialogue", "ope", "nuggets"}
# llm (the model client) between formats and the stages; judging may use track too (the pool it judges).
RANKS = {"formats": 1, "llm": 1.5, "render": 3, "cli": 4}
ALLOWED_BETWEEN_STAGES = {("evaluation", "track"), ("judging", "track")}


def _part(module: str) -> str:
    """The top-level part of a module below castregin: 'evaluation' for castregin.evaluation.engine."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _rank(part: str) -> int:
    if part in FOUNDATION:
        return 0
    if part in STAGES:
        return 2
    return RANKS.get(part, 5)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path):
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target] if node.module or not node.level else [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            if target.startswith("castregin.") or target == "castregin":
                yield node.lineno, target


def layer_violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        here = _part(module)
        for line, target in _imports(path):
            there = _part(target)
            if there == here:
                continue
            upward = _rank(there) > _rank(here)
            sideways = (_rank(here) == _rank(there) == 2 and (here, there) not in ALLOWED_BETWEEN_STAGES)
            if upward or sideways:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line} {module} imports {target}")
    return found


def test_every_import_points_down():
    assert layer_violations() == []


def test_the_check_sees_a_violation(tmp_path, monkeypatch):
    # The walker itself: a formats module importing a stage is caught.
    fake = tmp_path / "castregin"
    (fake / "formats").mkdir(parents=True)
    (fake / "formats" / "x.py").write_text("from ..dialogue import paradise\n")
    (fake / "render").mkdir()
    (fake / "render" / "y.py").write_text("def f():\n    from ..cli import main\n")
    monkeypatch.setattr(f"{__name__}.PACKAGE", fake)
    assert layer_violations() == ["castregin/formats/x.py:1 castregin.formats.x imports castregin.dialogue",
                                  "castregin/render/y.py:2 castregin.render.y imports castregin.cli"]
