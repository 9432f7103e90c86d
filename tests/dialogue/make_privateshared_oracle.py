"""Make the oracle of castregin's privateshared game master: clembench's own game master, scripted players.

Not run by the tests (CI has no network and clemcore's dependencies are heavy); its output is kept in
``tests/data/privateshared/oracle-2.0.tar.xz``, which ``test_privateshared_game.py`` compares with what
castregin plays. To make it again::

    python -m venv /tmp/clem && /tmp/clem/bin/pip install clemcore==3.4.2 scikit-learn "pyarrow<18" "datasets<4"
    git clone https://github.com/clp-research/clembench /tmp/clembench   # the oracle: commit a717f23
    python tests/dialogue/make_privateshared_oracle.py /tmp/clembench /tmp/clem/bin/clem /tmp/oracle
    (cd /tmp/oracle/results && find . -path "*instance_*" -name "*.json" | sort | tar -cf - -T - | xz -9) \
        > tests/data/privateshared/oracle-2.0.tar.xz

clemcore 3.4.2 is the last release whose ``DialogueGameMaster`` still plays clembench's privateshared
(3.5.0 starts rounds at -1 and privateshared's first probing round fails with ``KeyError: '-1'``); the
pins of pyarrow and datasets keep its numpy 1.26 importable.

The game is clembench's ``privateshared/`` with ``in/instances.json`` replaced by the instances kept in
``tests/data/privateshared/clembench/in/instances.json``; every player of
:mod:`privateshared_players` plays them through a clemcore backend (``scripted_api.py``, written into the
work directory, where ``clem`` looks for backends) whose models are those players.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSTANCES = HERE.parent / "data" / "privateshared" / "clembench" / "in" / "instances.json"

BACKEND = '''"""A clemcore backend whose models are castregin's scripted privateshared players."""
import sys
from pathlib import Path

sys.path.insert(0, {players!r})
from privateshared_players import make_players  # noqa: E402

import clemcore.backends as backends  # noqa: E402

PLAYERS = make_players(Path(__file__).parent / "privateshared")


class Scripted(backends.Backend):
    def get_model_for(self, model_spec):
        return ScriptedModel(model_spec)


class ScriptedModel(backends.Model):
    def generate_response(self, messages):
        text = PLAYERS[self.model_spec.model_name.removeprefix("scripted-")](messages)
        return messages, {{"scripted": text}}, text.strip()
'''


def main(clembench: Path, clem: str, work: Path) -> None:
    sys.path.insert(0, str(HERE))
    from privateshared_players import make_players

    work.mkdir(parents=True)
    shutil.copytree(clembench / "privateshared", work / "privateshared")
    shutil.copy(INSTANCES, work / "privateshared" / "in" / "instances.json")
    (work / "scripted_api.py").write_text(BACKEND.format(players=str(HERE)))
    names = list(make_players(work / "privateshared"))
    (work / "model_registry.json").write_text(json.dumps(
        [{"model_name": f"scripted-{n}", "model_id": f"scripted-{n}", "backend": "scripted"} for n in names]))
    for name in names:
        subprocess.run([clem, "run", "-g", "privateshared", "-m", f"scripted-{name}", "-r", "results"],
                       cwd=work, check=True)
    subprocess.run([clem, "score", "-g", "privateshared", "-r", "results"], cwd=work, check=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
