"""Write tests/nuggets/data/cone_rag_model/ again (see cone_rag_model.py): ``castregin nuggets assign`` against the
rule server, on the stand-in answers of the CONE-RAG slice.

    PYTHONPATH=tests python -m nuggets.make_cone_rag_model
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from click.testing import CliRunner

from castregin.cli import main

from .cone_rag_model import MODEL, assign_every_run
from .nugget_server import serve_nuggets


def run() -> None:
    os.environ["CASTREGIN_TEST_KEY"] = "sk-test-not-a-secret"
    server = serve_nuggets(faults=False)
    runner = CliRunner()
    try:
        with tempfile.TemporaryDirectory() as work:
            written = assign_every_run(lambda *args: runner.invoke(main, [str(a) for a in args]), server.base_url,
                                       Path(work))
    finally:
        server.shutdown()
    MODEL.mkdir(exist_ok=True)
    for name, text in written.items():
        (MODEL / f"{name}.jsonl").write_text(text)


if __name__ == "__main__":
    run()
