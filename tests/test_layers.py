"""The package's layers: every import points down (README, Layout), and no import closes a circle.

foundation (errors, limits, data, arrays, labels) < formats < stages (track, judging, evaluation, dialogue, ope,
nuggets) < render < cli < the public API (castregin/__init__). A stage imports no other stage, except evaluation,
which may use track (pools for reusability analyses), and judging, which may use track (the pool it judges),
evaluation and nuggets (the agreement of label sources on the ranking of runs). Inside a package, the modules
import each other without a cycle: the module graph of castregin has none. Every import statement counts,
wherever it is: at the top, inside a function (a lazy import still depends on its module), under ``if
TYPE_CHECKING``, a package's ``__init__`` as a module of its own, and importing ``a.b.c`` imports ``a.b`` first. What
castregin imports from other libraries is not this test's business: heavy libraries are imported where
they are used, on purpose (ruff's PLC0415 is off; tests/cli/test_startup.py checks what a command loads).
"""

from __future__ import annotations

import ast
import graphlib
from itertools import pairwise
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "castregin"
FOUNDATION = {"errors", "limits", "data", "arrays", "labels", "statistics"}
STAGES = {"track", "judging", "evaluation", "dialogue", "ope", "nuggets"}
# llm (the model client) between formats and the stages; judging may use track too (the pool it judges), and
# evaluation and nuggets (how far label sources agree on the ranking of runs: scored runs, nugget scores).
RANKS = {"formats": 1, "llm": 1.5, "render": 3, "cli": 4}
ALLOWED_BETWEEN_STAGES = {("evaluation", "track"), ("judging", "track"), ("judging", "evaluation"),
                          ("judging", "nuggets")}


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


def _imported(path: Path):
    """Each import of a castregin module in ``path``: ``(line, module, names, bare)``, where ``names`` are those a
    ``from module import ...`` takes (empty for ``import module``) and ``bare`` says a ``from . import names``,
    whose names are modules of the package ``module``."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found = [".".join(base + ([node.module] if node.module else []))]
            else:
                found = [node.module or ""]
            names, bare = [alias.name for alias in node.names], bool(node.level and not node.module)
        elif isinstance(node, ast.Import):
            found, names, bare = [alias.name for alias in node.names], [], False
        else:
            continue
        for target in found:
            if target.startswith("castregin.") or target == "castregin":
                yield node.lineno, target, names, bare


def _imports(path: Path):
    """Each ``(line, module)`` imported in ``path``: the package's modules of a ``from . import``, else the module
    named."""
    for line, target, names, bare in _imported(path):
        for imported in [f"{target}.{name}" for name in names] if bare else [target]:
            yield line, imported


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def import_graph() -> dict[str, dict[str, int]]:
    """Per module of castregin, the modules of castregin it imports and the line of the first import of each.

    ``from a import b`` imports the module ``a.b`` where there is one, else (a name defined in ``a``) the
    module or package ``a``. Importing ``a.b.c`` runs the packages ``a`` and ``a.b`` first, except those
    the importing module is inside of (they run before it).
    """
    modules = _modules()
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for line, target, names, _ in _imported(path):
            targets = [f"{target}.{name}" if f"{target}.{name}" in modules else target for name in names] or [target]
            for found in targets:
                parts = found.split(".")
                for depth in range(2, len(parts) + 1):
                    imported = ".".join(parts[:depth])
                    inside = module == imported or module.startswith(imported + ".")
                    if imported in modules and not inside:
                        edges.setdefault(imported, line)
    return graph


def import_cycle() -> list[str]:
    """A cycle of imports among castregin's modules, each step as ``file:line module imports module``; [] if none."""
    graph = import_graph()
    try:
        graphlib.TopologicalSorter({module: set(edges) for module, edges in graph.items()}).prepare()
    except graphlib.CycleError as error:
        cycle = error.args[1]  # [a, b, ..., a], each imported by the one after it
        modules = _modules()
        return [f"{modules[importer].relative_to(PACKAGE.parent)}:{graph[importer][imported]} {importer} imports "
                f"{imported}" for imported, importer in pairwise(cycle)]
    return []


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


def test_no_import_closes_a_circle():
    assert import_cycle() == []


def test_the_check_sees_a_cycle(tmp_path, monkeypatch):
    # A cycle through an import inside a function, and one through a package's __init__, in a tmp package.
    fake = tmp_path / "castregin"
    (fake / "evaluation" / "measures").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "evaluation" / "__init__.py").write_text("")
    (fake / "evaluation" / "engine.py").write_text("from .measures import gain\n")
    (fake / "evaluation" / "kernels.py").write_text("import math\n")
    (fake / "evaluation" / "measures" / "__init__.py").write_text("from . import gain\n")
    (fake / "evaluation" / "measures" / "gain.py").write_text(
        "from ..kernels import ratio\n\n\ndef arrays():\n    from ..engine import segment_starts\n")
    monkeypatch.setattr(f"{__name__}.PACKAGE", fake)
    assert layer_violations() == []  # one package: the direction of packages sees nothing wrong
    engine, gain = "castregin/evaluation/engine.py:1 castregin.evaluation.engine", \
        "castregin/evaluation/measures/gain.py:5 castregin.evaluation.measures.gain"
    assert sorted(import_cycle()) == [f"{engine} imports castregin.evaluation.measures.gain",
                                      f"{gain} imports castregin.evaluation.engine"]
    # The function-level import moved to the module below both: no cycle.
    (fake / "evaluation" / "measures" / "gain.py").write_text("from ..kernels import ratio, segment_starts\n")
    assert import_cycle() == []
    # A module outside a package importing one of its modules runs the package's __init__ first.
    (fake / "evaluation" / "measures" / "__init__.py").write_text("from . import gain\nfrom ..engine import x\n")
    package = "castregin/evaluation/measures/__init__.py:2 castregin.evaluation.measures"
    assert sorted(import_cycle()) == [f"{engine} imports castregin.evaluation.measures",
                                      f"{package} imports castregin.evaluation.engine"]
