"""The floor: pyarrow's CSV reader, tuned, reading the three columns of a run that evaluation needs.

    python pyarrow_floor.py RUN

Turn, item and score only (``include_columns``), the text columns as bytes (no UTF-8 validation),
no quoting, every core, jemalloc: what any tool built on pyarrow spends reading the file before it
evaluates anything. Prints the number of lines.
"""

import contextlib
import sys

import pyarrow as pa
from pyarrow import csv


def main():
    with contextlib.suppress(NotImplementedError):
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    path = sys.argv[1]
    with open(path, "rb") as handle:
        delimiter = "\t" if b"\t" in handle.read(1 << 16) else " "
    types = {"turn": pa.binary(), "item": pa.binary(), "score": pa.float64()}
    table = csv.read_csv(
        pa.input_stream(path, compression=None),
        read_options=csv.ReadOptions(column_names=["turn", "q0", "item", "rank", "score", "tag"], block_size=1 << 20),
        parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False,
                                       newlines_in_values=False),
        convert_options=csv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                           strings_can_be_null=False),
    )
    print(path, table.num_rows)


if __name__ == "__main__":
    main()
