"""TREC text read by pyarrow's CSV parser, and the checks that it reads what the line readers read.

Millions of lines parsed into Python strings and floats cost seconds and gigabytes; pyarrow's CSV
parser reads the common shape of TREC files (ASCII, one separator kind: tabs or single spaces)
straight into arrays. It splits at that one separator only, where the line readers (trec_eval's
rules in :mod:`castregin.formats.trec`, and gdeval.pl's and ndeval.c's) split with ``str.split()``,
at any whitespace. The parsed fields are therefore taken only where the bytes hold no other
whitespace, no NUL and nothing but ASCII: :func:`scan` looks before a whole file is parsed,
:func:`same_tokens` checks fields parsed already (the streaming reader,
:mod:`castregin.formats.turn_stream`). Whatever they cannot vouch for is left to the line reader,
which either names the line of its error or reads the file.

pyarrow's ``to_numpy`` imports pandas (a quarter of a second), so primitive columns are viewed
through their buffers instead (:func:`castregin.arrays.to_numpy`, :func:`offsets`).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..arrays import THREADS, arrow, read_csv_bytes, to_numpy
from . import trec
from .common import open_input, plain_number_text

# Bytes that Python's str.split()/splitlines() treat as separators but a CSV parser keeps inside
# a field; a file holding any of them is left to the line-by-line reader. So is one holding a NUL byte,
# which the line reader refuses (no trec_eval id holds one), naming its line.
_OTHER_SEPARATORS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: Bytes of a file the parser cannot vouch for, wherever they are.
_NOT_IN_FILES = (*_OTHER_SEPARATORS, b"\x00")
#: Bytes of a field the parser cannot vouch for: those, and the separators themselves (the other kind may
#: be in a field, where ``str.split()`` would split it).
_NOT_IN_FIELDS = (b" ", b"\t", *_NOT_IN_FILES)
#: Bytes per block of pyarrow's CSV parser (the unit of its threads).
_BLOCK_SIZE = 1 << 20
#: Bytes read at a time by the scan that decides whether the fast path applies: small enough to
#: stay in the processor's cache through its several passes.
_SCAN_SIZE = 1 << 20


def _ascii_without(data: bytes | bytearray, refused: tuple[bytes, ...]) -> bool:
    """Whether ``data`` is ASCII and holds none of the bytes ``refused`` (each a search in C, ``memchr``)."""
    return data.isascii() and not any(byte in data for byte in refused)


def token_bytes(data: bytes) -> bool:
    """Whether ``data`` (fields' bytes put together) could be tokens of ``str.split()``: ASCII, no whitespace
    it splits at, no NUL (which the line reader refuses with its line)."""
    return _ascii_without(data, _NOT_IN_FIELDS)


class Shape:
    """What a scan of the bytes found: whether the fast parser can read them, with which separator.

    ``x`` records whether an ``x`` or ``X`` occurs: pyarrow's integer parser reads ``0x10`` as
    hexadecimal, where Python's ``float`` refuses it.
    """

    def __init__(self):
        self.ok = True
        self.tab = self.space = self.x = False

    def scan_chunk(self, chunk: bytes | bytearray) -> None:
        if not self.ok:
            return
        if not _ascii_without(chunk, _NOT_IN_FILES):
            self.ok = False
            return
        self.tab = self.tab or b"\t" in chunk
        self.space = self.space or b" " in chunk
        self.x = self.x or b"x" in chunk or b"X" in chunk


class LineShape(Shape):
    """:class:`Shape`, and whether a carriage return occurs: the originals' line readers (:func:`split_lines`)
    delete it, where the parser would end a line there."""

    def __init__(self):
        super().__init__()
        self.cr = False

    def scan_chunk(self, chunk: bytes | bytearray) -> None:
        super().scan_chunk(chunk)
        self.cr = self.cr or b"\r" in chunk


def scan(path: str | os.PathLike, data: bytes | None = None, shape: Shape | None = None) -> tuple[Shape, bytes | None]:
    """Scan a file in blocks (no copy of it in memory), for pyarrow to parse it again by its path.

    What cannot be read twice or by path (standard input, a pipe, a compressed file) is read whole,
    decompressed, and returned: the parser then reads those bytes, so the numbers are the same.
    ``data``: the file's bytes, read already; they are scanned instead. ``shape``: what records the scan.
    """
    shape = Shape() if shape is None else shape
    if data is not None:
        shape.scan_chunk(data)
        return shape, data
    with open_input(path) as opened:
        if not opened.in_place:
            data = opened.read()
            shape.scan_chunk(data)
            return shape, data
        # One buffer, filled again and again: a new megabyte object per read would be new memory
        # (page faults) every time.
        block = bytearray(_SCAN_SIZE)
        while shape.ok:
            size = opened.readinto(block)
            if not size:
                break
            shape.scan_chunk(block if size == len(block) else block[:size])
    return shape, None


def csv_options(names: list[str], types: dict, delimiter: str, block_size: int, threads: bool,
                empty_lines: bool = True) -> dict:
    """pyarrow's CSV options for TREC text: the columns ``types`` names, no quoting, no missing values (an empty
    line skipped, or with ``empty_lines=False`` an error)."""
    pa_csv = arrow()[2]
    return {
        "read_options": pa_csv.ReadOptions(column_names=names, block_size=block_size, use_threads=threads),
        "parse_options": pa_csv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False,
                                             ignore_empty_lines=empty_lines),
        "convert_options": pa_csv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                                 true_values=[], false_values=[], strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False),
    }


def parse_table(path, data: bytes | None, shape: Shape, names: list[str], types: dict,
                threads: int = THREADS, empty_lines: bool = True) -> dict | None:
    """The columns named in ``types`` as pyarrow chunked arrays, or None when the fast path cannot vouch for the file.

    Text columns are parsed as binary and then viewed as strings: the scan found only ASCII, so
    the parser's UTF-8 validation would be wasted work. With ``threads=1`` the parser keeps to
    the calling thread: it spends a third less processor time than spread over the cores, which
    is what counts when other threads parse other files meanwhile.
    """
    if not shape.ok or (shape.tab and shape.space):
        return None
    pa, _, pa_csv = arrow()
    parse_types = {name: pa.binary() if kind == pa.string() else kind for name, kind in types.items()}
    source = None
    try:
        # Not by its path: pyarrow would decompress a name ending in .gz, and the scan found the file plain.
        options = csv_options(names, parse_types, "\t" if shape.tab else " ", _BLOCK_SIZE, threads > 1, empty_lines)
        if data is not None:
            table = read_csv_bytes(data, **options)  # returns once pyarrow has let go of the bytes
        else:
            source = pa.input_stream(str(path), compression=None)
            table = pa_csv.read_csv(source, **options)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None
    finally:
        if data is None and source is not None:
            source.close()
    columns = {}
    for name, kind in types.items():
        column = table.column(name)
        if kind == pa.string():
            column = pa.chunked_array([chunk.view(kind) for chunk in column.chunks], type=kind)
        columns[name] = column
    return columns


def encode(column):
    """(distinct values, int32 codes) of a string array or chunked array, codes in order of first appearance.

    Hashing is cache-bound: a few tens of nanoseconds a value while the distinct values number tens
    of thousands, several hundred beyond a million (hence the batches of whole turns).
    """
    pc = arrow()[1]
    encoded = pc.dictionary_encode(column)
    if not hasattr(encoded, "chunks"):
        return encoded.dictionary, to_numpy(encoded.indices, np.int32)
    # One memo table serves all chunks, so each chunk carries the same, final dictionary.
    chunks = encoded.chunks
    if not chunks:
        return pc.unique(column), np.zeros(0, dtype=np.int32)
    codes = [to_numpy(chunk.indices, np.int32) for chunk in chunks]
    return chunks[-1].dictionary, codes[0] if len(codes) == 1 else np.concatenate(codes)


def release() -> None:
    # pyarrow's allocator keeps freed pages for reuse; the parsed text columns are gone for good
    # now, and numpy (another allocator) needs the memory next, so hand the pages back.
    arrow()[0].default_memory_pool().release_unused()


def all_finite(column) -> bool:
    pa, pc, _ = arrow()
    if pa.types.is_integer(column.type):
        return True
    return bool(pc.all(pc.is_finite(column)).as_py())


def no_empty_field(columns: dict, names) -> bool:
    # An empty field (two separators in a row, or one at either end of a line) reaches the
    # parser as an empty string where the line reader sees one column fewer. Chunk by chunk,
    # the lengths stay small enough to be computed in the processor's cache.
    pc = arrow()[1]
    return all(pc.min(pc.binary_length(chunk)).as_py() > 0 for name in names for chunk in columns[name].chunks)


def same_tokens(column) -> bool:
    """Whether the parser's fields of a binary column are the tokens the line reader's ``str.split()`` finds.

    The parser splits at one separator only and reads any other byte as part of a field, where
    ``str.split()`` (the line reader) also splits at the other separator, at the ASCII controls
    0x0b, 0x0c and 0x1c-0x1f and at Unicode spaces, and refuses bytes that are not UTF-8; an empty
    field is a separator doubled (or one at either end of a line), which ``split()`` would merge,
    shifting the fields after it. So a field must be non-empty, ASCII, and free of those bytes (and of
    NUL, which the line reader refuses with its line).
    The bytes of a column are checked at once, with the byte searches of ``bytes`` (``memchr``):
    a few milliseconds for a file of 200 MB. ``column`` may be a list of arrays (the record batches of
    a group, see :meth:`castregin.formats.turn_stream.TurnStream._pieces`), each checked in turn.
    """
    if isinstance(column, list):
        return bool(column) and all(same_tokens(chunk) for chunk in column)
    if not len(column):
        return False
    bounds = offsets(column)
    if (bounds[1:] == bounds[:-1]).any():
        return False
    return token_bytes(column.buffers()[2][int(bounds[0]):int(bounds[-1])].to_pybytes())


_DIGITS = b"0123456789-"


def label_values(column) -> np.ndarray | None:
    """The labels of a column of label texts as int64, or None where the line reader would refuse one.

    Texts of digits and minus signs only are cast by pyarrow, which then reads them as Python's
    ``int()`` does (or refuses them: ``--5``, beyond 64 bits). Otherwise the few distinct texts are
    each read by ``int()`` as the line reader reads them (pyarrow alone would take ``0x10`` and
    refuse ``+5``); one beyond 64 bits is left to the line reader, which names its line.
    """
    pa, pc, _ = arrow()
    if not hasattr(column, "chunks") and len(column):
        bounds = offsets(column)
        text = column.buffers()[2][int(bounds[0]):int(bounds[-1])].to_pybytes()
        if not text.translate(None, _DIGITS):
            with contextlib.suppress(pa.ArrowInvalid):
                return to_numpy(pc.cast(column.view(pa.string()), pa.int64()), np.int64)
    texts, codes = encode(column)
    values = []
    for raw in texts.to_pylist():
        text = raw.decode() if isinstance(raw, bytes) else raw
        try:
            if not plain_number_text(text):  # "1_0", "٢": the line reader refuses them, naming the line
                return None
            values.append(int(text))
        except ValueError:
            return None
    if any(not trec.LABEL_RANGE[0] <= v <= trec.LABEL_RANGE[1] for v in values):
        return None
    return np.array(values, dtype=np.int64)[codes]


def split_lines(path: str | os.PathLike, names: list[str], digits: tuple[str, ...] = (),
                decimals: tuple[str, ...] = ()) -> tuple[dict | None, bytes | None]:
    """The fields of a file's lines as columns named ``names`` (a line's fields as ``str.split`` gives them,
    lines cut at ``\n`` only), or None where the fast parser cannot vouch for that: non-ASCII bytes,
    other whitespace than single tabs or single spaces (one kind), a carriage return, an empty line or
    field, another number of fields (the originals' line readers, gdeval.pl's and ndeval.c's, then read
    the bytes). Columns are pyarrow string arrays, except ``digits`` (fields of ASCII digits only, else
    None: uint64 numpy arrays) and ``decimals`` (decimal numbers, ``[+-]?(d+.?d*|.d+)([eE][+-]?d+)?``,
    else None: float64 numpy arrays, every one finite). Also returns the file's bytes when they had to be
    read whole (standard input, a compressed file), for that reader."""
    pa, pc, _ = arrow()
    shape = LineShape()
    _, data = scan(path, shape=shape)
    if not shape.ok or shape.cr:
        return None, data
    # Every column as text: pyarrow's parser is faster so than converting as it goes, and the conversions
    # below check what they read.
    columns = parse_table(path, data, shape, names, dict.fromkeys(names, pa.string()), empty_lines=False)
    if columns is None or len(columns[names[0]]) == 0 or not no_empty_field(columns, names):
        return None, data
    for name in digits:
        column = columns[name]
        if not pc.all(pc.ascii_is_decimal(column)).as_py() or pc.max(pc.binary_length(column)).as_py() > 19:
            return None, data  # not digits, or too many for 64 bits
        columns[name] = to_numpy(pc.cast(column, pa.uint64()), np.uint64)
    for name in decimals:
        # pyarrow reads exactly those decimal numbers (as Python does, to the same double), and inf, nan.
        try:
            columns[name] = to_numpy(pc.cast(columns[name], pa.float64()), np.float64)
        except pa.ArrowInvalid:
            return None, data
        if not np.isfinite(columns[name]).all():
            return None, data
    return columns, data


def offsets(strings) -> np.ndarray:
    """The int32 offsets of a pyarrow string (or binary) array, from its buffer: string ``i`` is the bytes
    ``offsets[i]:offsets[i + 1]`` of its data buffer."""
    return np.frombuffer(strings.buffers()[1], np.int32, len(strings) + 1, strings.offset * 4)


def chunks(strings) -> list:
    """The arrays of a pyarrow array or chunked array."""
    return strings.chunks if hasattr(strings, "chunks") else [strings]


def one_array(arrays: list):
    """Arrays of one type as one array."""
    return arrays[0] if len(arrays) == 1 else arrow()[0].concat_arrays(arrays)


def arrays_of(column) -> list:
    """The arrays of a column given as an array or a list of arrays."""
    return column if isinstance(column, list) else [column]
