"""trec_eval's per-query lines written a block of columns at a time are the lines written one by one, and their
numbers are glibc printf's ``%6.4f`` (the C library's own snprintf, through ctypes: trec_eval's formatting)."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import random
import struct

import numpy as np
import pytest

from castregin.render.trec import trec_eval_columns_text, trec_eval_text

LIBC = ctypes.util.find_library("c")


def printf_6_4f(value: float) -> str:
    """``%6.4f`` as the C library prints it."""
    buffer = ctypes.create_string_buffer(512)
    ctypes.CDLL(LIBC).snprintf(buffer, len(buffer), b"%6.4f", ctypes.c_double(value))
    return buffer.value.decode()


def awkward_values(seed: int, count: int) -> list[float]:
    """Values printf rounds delicately: ties at the fourth decimal that a double holds exactly (k/32...), values
    a hair either side of one, negatives rounding to -0.0000, -0.0, NaN of either sign, infinities, large and
    tiny values, and the usual measure values in [0, 1]."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kind = rng.randrange(9)
        if kind == 0:
            out.append(rng.randrange(-64, 65) / 32)  # 0.03125: the fourth decimal's exact tie
        elif kind == 1:
            tie = (2 * rng.randrange(0, 20000) + 1) / 20000
            out.append(math.nextafter(tie, rng.choice([math.inf, -math.inf])))
        elif kind == 2:
            out.append(-rng.random() * 1e-5)  # -0.0000
        elif kind == 3:
            out.append(rng.choice([0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf]))
        elif kind == 4:
            out.append(rng.uniform(-1e7, 1e7))
        elif kind == 5:
            out.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])  # any double at all
        else:
            out.append(rng.random())
    return out


@pytest.mark.skipif(LIBC is None, reason="no C library to call")
@pytest.mark.parametrize("seed", range(5))
def test_a_column_of_floats_is_printed_as_printf_prints_each(seed):
    values = awkward_values(seed, 4000)
    text = trec_eval_columns_text(["q"] * len(values), [("map", np.array(values), "float")])
    printed = [line.split("\t")[2] for line in text.splitlines()]
    assert printed == [printf_6_4f(value) for value in values]


def test_columns_give_the_lines_written_one_by_one():
    rng = random.Random(3)
    topics = [f"{101 + t}_{t % 7}-{t % 3}" for t in range(300)] + ["\u00e9t\u00e9"]
    floats = np.array(awkward_values(7, len(topics)))
    counts = np.array([float(rng.randrange(0, 5000)) for _ in topics])
    texts = np.array(["".join(rng.choice("0123-.>") for _ in range(rng.randrange(0, 12))) for _ in topics],
                     dtype=object)
    columns = [("num_ret", counts, "integer"), ("relstring", texts, "text"), ("P_5", floats, "float"),
               ("ndcg_cut_1000", floats[::-1].copy(), "float")]
    lines = [(name, topic, int(values[t]) if kind == "integer" else f"'{values[t]}'" if kind == "text"
              else float(values[t]))
             for t, topic in enumerate(topics) for name, values, kind in columns]
    assert trec_eval_columns_text(topics, columns) == trec_eval_text(lines)
    assert trec_eval_columns_text([], columns) == ""
