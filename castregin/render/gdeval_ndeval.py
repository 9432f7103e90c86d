"""gdeval.pl's and ndeval's output, byte for byte: CSV lines, per topic then ``amean``."""

from __future__ import annotations

import math
from collections.abc import Sequence


def gdeval_text(runid: str, k: int, rows: Sequence[tuple[str, float, float]], mean: tuple[float, float]) -> str:
    """``runid,topic,ndcg@K,err@K``, a line per topic and the ``amean`` line, five decimals (Perl's %.5f)."""
    lines = [f"runid,topic,ndcg@{k},err@{k}\n"]
    lines.extend(f"{runid},{topic},{ndcg:.5f},{err:.5f}\n" for topic, ndcg, err in rows)
    lines.append(f"{runid},amean,{mean[0]:.5f},{mean[1]:.5f}\n")
    return "".join(lines)


def _c_float(value: float) -> str:
    # glibc prints the NaN of 0.0/0.0 (x86's default NaN has its sign bit set) as -nan.
    return "-nan" if math.isnan(value) else f"{value:.6f}"


def ndeval_text(runid: str, columns: Sequence[str], rows: Sequence[tuple[str, Sequence[float]]],
                mean: Sequence[float]) -> str:
    """ndeval's header, a line per run topic and the ``amean`` line, six decimals (C's %.6f)."""
    lines = ["runid,topic," + ",".join(columns) + "\n"]
    lines.extend(f"{runid},{topic}," + ",".join(map(_c_float, row)) + "\n" for topic, row in rows)
    lines.append(f"{runid},amean," + ",".join(map(_c_float, mean)) + "\n")
    return "".join(lines)
