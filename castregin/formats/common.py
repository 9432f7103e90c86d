"""Reading files, and the JSON castregin writes: the pieces every format shares.

Readers raise :class:`~castregin.errors.InputError` naming the file and line of the first problem.
Every input is opened by :func:`open_input`, which recognises gzip, bzip2, xz and zstd by their
first bytes and decompresses as it reads; line numbers are those of the decompressed text. ``-``
means standard input. Writing is :mod:`castregin.formats.output`'s (atomic, safe; ``-`` standard output).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import math
import os
import stat
import sys

from .. import limits
from ..errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import json
    import re
    from collections.abc import Iterable

STDIO = "-"


def without_cyclic_gc(function):
    """``function`` run with Python's cyclic garbage collector paused (and on again after, however it ends).

    Reading and aggregating millions of labels, or converting a run of millions of questions, make
    millions of strings, tuples, lists and dicts, none in a cycle; the collector, set off by every few
    hundred of them, would walk them all again and again (a third of the time spent building qrels
    dicts; 15% of `convert questions` on docs/speed.md's 467 MB run). Memory is freed by reference
    counts all the same.
    """
    @functools.wraps(function)
    def paused(*args, **kwargs):
        import gc  # here: this module is imported by every command, most of which read little

        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused


def display_name(path: str | os.PathLike) -> str:
    """How a file is named in messages (``<stdin>`` for ``-``)."""
    return "<stdin>" if str(path) == STDIO else str(path)


#: The name endings of compressed files, and the format each usually holds. Formats are recognised by
#: their magic bytes; the ending only names files (:func:`stem`) and chooses how an output is written.
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}


def stem(path: str | os.PathLike) -> str:
    """A file's name without directory, compression ending and suffix (``runs/bm25.run.gz`` -> ``bm25``)."""
    if str(path) == STDIO:
        return "stdin"
    name = _name(os.fspath(path))
    suffix = _suffix(name).lower()
    if suffix in COMPRESSION_SUFFIXES and len(name) > len(suffix):
        name = name[: -len(suffix)]
    return name[: len(name) - len(_suffix(name))]


# The last part of a path and its ending, as pathlib's PurePosixPath has them (name, suffix), without loading pathlib
# (a few milliseconds, a tenth of a 10-line trec_eval's own time): tests/formats/test_stem.py compares them.
def _name(path: str) -> str:
    parts = [part for part in path.replace(os.sep, "/").split("/") if part and part != "."]
    return parts[-1] if parts else ""


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def split_named(value: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> (NAME, PATH); a plain path (even one holding ``=``, or one that exists as written) ->
    (None, PATH). How every ``[NAME=]PATH`` argument is read (``--qrels``, the sources of ``agreement``)."""
    if "=" in value and not os.path.exists(value):
        name, path = value.split("=", 1)
        if name:
            return name, path
    return None, value


# --- reading: every input is opened here, compressed or not ------------------------------------------------

_GZIP = b"\x1f\x8b\x08"  # the magic and deflate, the one method gzip defines
_XZ = b"\xfd7zXZ\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"
# "BZh" and a block size could begin a text file; the block (or end-of-stream) magic after it could not. A pattern,
# compiled (and kept by re) on its first use: by a file that begins with "BZh".
_BZIP2 = rb"BZh[1-9](\x31\x41\x59\x26\x53\x59|\x17\x72\x45\x38\x50\x90)"
#: Bytes enough to recognise every format above.
_HEAD_SIZE = 10
#: Decompressed bytes read at a time by a whole read, each piece counted against the bounds.
_WHOLE_READ_PIECE = 1 << 20


def compression_of(head: bytes) -> str | None:
    """The compression (``gzip``, ``bzip2``, ``xz``, ``zstd``) a file's first bytes announce, or None."""
    for name, magic in (("gzip", _GZIP), ("xz", _XZ), ("zstd", _ZSTD)):
        if head.startswith(magic):
            return name
    if not head.startswith(b"BZh"):
        return None
    import re  # here, as in the other functions that need it: reading a plain file needs no regular expression

    return "bzip2" if re.match(_BZIP2, head) else None


class StreamDigest:
    """The SHA-256 of an input that can be read only once (standard input, a pipe, a FIFO), of the bytes as they
    came (compressed ones as stored), and whether they were read to their end."""

    def __init__(self):
        import hashlib  # here: it loads OpenSSL's library, which a command reading files by their paths does without

        self._hash = hashlib.sha256()
        self.complete = False

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


#: The digests of the once-only inputs read so far, by path as given (``-``: standard input): the process's, unless
#: a block has a registry of its own (:func:`stream_digests`: the command line gives one to each command).
_PROCESS_DIGESTS: dict[str, StreamDigest] = {}
_STREAM_DIGESTS: contextvars.ContextVar[dict[str, StreamDigest] | None] = contextvars.ContextVar(
    "castregin_stream_digests", default=None)


def _digests() -> dict[str, StreamDigest]:
    registry = _STREAM_DIGESTS.get()
    return _PROCESS_DIGESTS if registry is None else registry


@contextlib.contextmanager
def stream_digests():
    """A registry of its own for the once-only inputs read inside the block (one command's)."""
    token = _STREAM_DIGESTS.set({})
    try:
        yield
    finally:
        _STREAM_DIGESTS.reset(token)


def stream_digest(path: str | os.PathLike) -> StreamDigest | None:
    """The digest of the once-only input ``path`` as it was read, None when it was not read."""
    return _digests().get(str(path))


class _Rewound(io.RawIOBase):
    """A stream that cannot seek back (standard input, a pipe), the bytes already read put back in front.

    ``consumed`` counts the bytes handed on (a pipe has no position to ask); ``digest`` hashes them, the
    head included, so that the provenance of what was parsed needs no second read (there is none).
    """

    def __init__(self, head: bytes, rest, digest: StreamDigest):
        self._head = head
        self._rest = rest
        self.consumed = 0
        self._digest = digest
        digest.update(head)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            data = self._head[: len(buffer)]
            self._head = self._head[len(data):]
        else:
            data = self._rest.read(len(buffer))
            self._digest.update(data)
            if not data and len(buffer):
                self._digest.complete = True
        buffer[: len(data)] = data
        self.consumed += len(data)
        return len(data)


class _ArrowReader(io.RawIOBase):
    """pyarrow's zstd decompressor as a Python stream (pyarrow's wheels always hold zstd)."""

    def __init__(self, stream):
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        return self._stream.read()


def _zstd_reader(raw, source: str):
    try:
        import zstandard
    except ImportError:
        from ..arrays import arrow

        pa = arrow()[0]
        if not pa.Codec.is_available("zstd"):
            raise InputError("is zstd-compressed; install zstandard (pip install zstandard) to read it, or "
                             "decompress it first (zstd -d)", source=source) from None
        return io.BufferedReader(_ArrowReader(pa.CompressedInputStream(pa.PythonFile(raw, mode="r"), "zstd")),
                                 1 << 20)
    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=False)


def _decompressing(raw, compression: str, source: str):
    """A stream of the decompressed bytes of ``raw`` (which it does not close)."""
    if compression == "gzip":
        import gzip  # here: a plain input needs none of the decompressors

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bzip2":
        import bz2  # here: the plain inputs of a short call need neither

        return bz2.BZ2File(raw, "rb")
    if compression == "xz":
        import lzma

        return lzma.LZMAFile(raw, "rb")
    return _zstd_reader(raw, source)


def _open_file(path: str | os.PathLike):
    """(binary stream, whether it is a regular file); a file that cannot be opened is an InputError."""
    if str(path) == STDIO:
        return sys.stdin.buffer, False
    try:
        raw = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by Input.close
    except FileNotFoundError:
        raise InputError("no such file; check the path", source=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=str(path)) from None
    except PermissionError:
        raise InputError("permission denied", source=str(path)) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", source=str(path)) from None
    return raw, stat.S_ISREG(os.fstat(raw.fileno()).st_mode)


def _read_head(raw, size: int = _HEAD_SIZE) -> bytes:
    # A pipe may hand over fewer bytes than asked for before its end.
    head = b""
    while len(head) < size:
        more = raw.read(size - len(head))
        if not more:
            break
        head += more
    return head


# --- bounds on what a compressed input may decompress to ---------------------------------------------------

#: The environment variables that raise the bounds of :mod:`castregin.limits`, for every command and the API.
SIZE_VARIABLE = "CASTREGIN_MAX_DECOMPRESSED"
RATIO_VARIABLE = "CASTREGIN_MAX_COMPRESSION_RATIO"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = r"(?i)\s*([0-9]+)\s*([KMGT]?)(?:I?B)?\s*"  # compiled on first use: only a bound set in the environment
_NO_BOUND = ("none", "unlimited")


def _from_environment(name: str, default: int, parse) -> int | None:
    text = os.environ.get(name, "")
    if not text.strip():
        return default
    if text.strip().lower() in _NO_BOUND:
        return None
    value = parse(text)
    if not value:
        example = "4G" if name == SIZE_VARIABLE else "1000"
        raise InputError(f"{name}: expected a positive number such as {example}, or none, got {text!r}")
    return value


def _parse_size(text: str) -> int | None:
    import re

    match = re.fullmatch(_SIZE, text)
    return int(match.group(1)) * _UNITS[match.group(2).upper()] if match else None


def decompression_bounds() -> tuple[int | None, int | None]:
    """(bytes, ratio) a compressed input held whole may decompress to (None: unbounded).

    :data:`castregin.limits.MAX_DECOMPRESSED` and :data:`~castregin.limits.MAX_COMPRESSION_RATIO`,
    unless the environment variables ``CASTREGIN_MAX_DECOMPRESSED`` (a size: ``4G``, ``512M``) and
    ``CASTREGIN_MAX_COMPRESSION_RATIO`` raise (or lower) them; ``none`` lifts a bound.
    """
    return (_from_environment(SIZE_VARIABLE, limits.MAX_DECOMPRESSED, _parse_size),
            _from_environment(RATIO_VARIABLE, limits.MAX_COMPRESSION_RATIO,
                              lambda text: int(text) if text.strip().isascii() and text.strip().isdigit() else None))


def format_size(size: int) -> str:
    """``size`` bytes for people: ``1 MiB``, ``1.5 GiB``, ``300 bytes``."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.4g} {unit}"
    return f"{size} bytes"


def _size_example(size: int) -> str:
    """A size as the environment takes it, rounded up: ``4G``, ``12M``."""
    for unit in "TGMK":
        if size >= _UNITS[unit]:
            return f"{-(-size // _UNITS[unit])}{unit}"
    return str(size)


def _raise_hint(variable: str, example: str) -> str:
    return (f"if the file is genuine, raise the bound ({variable}={example} in the environment) or decompress "
            "the file first")


class Input:
    """An input file (``-``: standard input) opened for reading, decompressed as it is read.

    ``compression`` is the format its first bytes announce (None: plain text), whatever its name.
    ``in_place`` says that it is an uncompressed regular file, which a reader may open again by its
    path. Reading a corrupt or truncated compressed file, failing to read at all, or running out of
    memory raises one :class:`InputError` line. Use as a context manager (:func:`open_input`).

    A compressed input read whole (:meth:`read` without a size) is bounded, against decompression
    bombs (:func:`decompression_bounds`); a reader that holds part of a stream says so with
    :meth:`holding`. Reading in pieces is not bounded: streams may be of any size.
    """

    def __init__(self, path: str | os.PathLike):
        self.source = display_name(path)
        self._raw, regular = _open_file(path)
        self._own = str(path) != STDIO  # standard input is not ours to close
        self.stream = self._raw
        self.compression = None
        self._rewound = None
        #: Decompressed bytes read so far.
        self.decompressed = 0
        try:
            with self._reading():
                head = _read_head(self._raw)
                if regular:
                    self._raw.seek(0)
                else:
                    digest = _digests()[str(path)] = StreamDigest()
                    self._rewound = _Rewound(head, self._raw, digest)
                    self.stream = io.BufferedReader(self._rewound, 1 << 20)
            self.compression = compression_of(head)
            if self.compression is not None:
                self._bounds = decompression_bounds()  # a bad value in the environment fails here, at once
                self.stream = _decompressing(self.stream, self.compression, self.source)
        except BaseException:
            self.close()
            raise
        self.in_place = regular and self.compression is None

    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` bytes of the (decompressed) content; all of the rest by default (bounded when
        compressed, see the class)."""
        with self._reading():
            if size is None or size < 0:
                return self._read_rest()
            data = self.stream.read(size)
            self.decompressed += len(data)
            return data

    def readinto(self, buffer) -> int:
        """Fill ``buffer`` with the next (decompressed) bytes; the number read, 0 at the end."""
        with self._reading():
            size = self.stream.readinto(buffer)
            self.decompressed += size
            return size

    def _read_rest(self) -> bytes:
        if self.compression is None:
            data = self.stream.read()
            self.decompressed += len(data)
            return data
        # In pieces, each counted against the bounds; BytesIO hands its buffer over without a copy.
        held = io.BytesIO()
        while True:
            data = self.stream.read(_WHOLE_READ_PIECE)
            if not data:
                return held.getvalue()
            self.decompressed += len(data)
            held.write(data)
            self.holding(held.tell())

    def holding(self, size: int) -> None:
        """Refuse (one :class:`InputError` line) to hold ``size`` decompressed bytes of a compressed input
        beyond the bounds of :func:`decompression_bounds`; nothing for a plain input."""
        if self.compression is None:
            return
        max_size, max_ratio = self._bounds
        if max_size is not None and size > max_size:
            raise InputError(f"decompresses to more than {format_size(max_size)}, castregin's bound on a "
                             f"compressed file read whole (against decompression bombs); "
                             + _raise_hint(SIZE_VARIABLE, _size_example(max_size * 4)),
                             source=self.source)
        if max_ratio is not None and size > limits.RATIO_CHECKED_FROM:
            consumed = self._consumed()
            if consumed and self.decompressed > max_ratio * consumed:
                raise InputError(f"decompresses to more than {max_ratio} times its compressed size "
                                 f"({format_size(self.decompressed)} from {format_size(consumed)}), castregin's "
                                 f"bound on a compressed file read whole (against decompression bombs); "
                                 + _raise_hint(RATIO_VARIABLE, str(max_ratio * 10)), source=self.source)

    def _consumed(self) -> int:
        """Compressed bytes read so far (0 when unknown)."""
        if self._rewound is not None:
            return self._rewound.consumed
        try:
            return self._raw.tell()
        except (OSError, ValueError):
            return 0

    @contextlib.contextmanager
    def _reading(self):
        try:
            yield
        except InputError:
            raise
        except MemoryError:
            raise InputError(f"not enough memory to read it ({format_size(self.decompressed)} read so far); "
                             "free memory, or give a smaller file", source=self.source) from None
        except Exception as err:
            # Each decompressor reports bad data its own way (OSError, EOFError, zlib.error, LZMAError,
            # zstandard.ZstdError): any error while decompressing is a bad stream.
            if self.compression is None and not isinstance(err, OSError):
                raise
            detail = " ".join(str(err).split()) or type(err).__name__
            if self.compression is None:
                raise InputError(f"cannot read: {detail}", source=self.source) from None
            raise InputError(f"not a valid {self.compression} stream ({detail}): the file is corrupt or "
                             "truncated; compress it again, or give the uncompressed file",
                             source=self.source) from None

    def close(self) -> None:
        """Close the decompressor and the file (never standard input)."""
        if self.stream is not self._raw:
            with contextlib.suppress(Exception):
                self.stream.close()
        if self._own:
            self._raw.close()

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_input(path: str | os.PathLike) -> Input:
    """Open an input file (``-``: standard input), plain or gzip, bzip2, xz, zstd (see :class:`Input`).

    The format is recognised by the file's first bytes, not by its name.
    """
    return Input(path)


def read_bytes(path: str | os.PathLike) -> bytes:
    """The (decompressed) bytes of a file, or of standard input for ``-``; a missing file is an InputError."""
    with open_input(path) as opened:
        return opened.read()


def expand_run_paths(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Runs as given, each directory replaced by the regular files in it (not below it), sorted by name.

    Names are sorted in byte order and hidden files (a name beginning with ``.``) skipped; a
    directory without a run in it is an InputError. ``-`` and files stay as they are.
    """
    expanded: list[str] = []
    for given in paths:
        path = os.fspath(given)
        if path == STDIO or not os.path.isdir(path):
            expanded.append(path)
            continue
        try:
            names = sorted(os.listdir(os.fsencode(path)))
        except OSError as err:
            raise InputError(f"cannot list the directory: {err.strerror or err}", source=path) from None
        files = [os.path.join(path, os.fsdecode(name)) for name in names if not name.startswith(b".")]
        files = [file for file in files if os.path.isfile(file)]
        if not files:
            raise InputError("the directory holds no run file (hidden files and subdirectories are skipped); "
                             "give run files or a directory of them", source=path)
        expanded.extend(files)
    return expanded


#: UTF-8's byte-order mark, which every reader of castregin skips (Windows editors write it).
BYTE_ORDER_MARK = b"\xef\xbb\xbf"


def note_byte_order_mark(data: bytes, source: str, original: str) -> None:
    """For the drop-ins (``trec_eval``, ``gdeval``, ``ndeval``): an input starting with a byte-order mark, which
    castregin skips and the original does not (``original``: what it does instead), is a warning naming the
    difference, so that a drop-in never differs from its original in silence."""
    if data.startswith(BYTE_ORDER_MARK):
        import warnings

        from ..errors import InputWarning

        warnings.warn(InputWarning(f"{source}: starts with a UTF-8 byte-order mark, which castregin skips and "
                                   f"{original}; remove it to have both agree"), stacklevel=2)


def plain_number_text(text: str) -> bool:
    """Whether ``text`` may go to Python's ``int()`` or ``float()``: ASCII, without ``_``.

    Python reads every script's digits (``int("٢") == 2``, the full-width 2 too) and ``1_000``; trec_eval (C's ``atol``
    reads ``٢`` as 0), pyarrow, the crowd readers and the drop-ins' originals read the ASCII digits only. One rule
    for every reader of numbers and every numeric option: the ASCII ones only; anything else is refused.
    """
    return text.isascii() and "_" not in text


def decode(data: bytes, source: str) -> str:
    """Decode UTF-8 (with or without BOM); undecodable bytes name their line."""
    try:
        # As the utf-8-sig codec decodes, without loading its module: utf-8 decodes without a lookup.
        return data.removeprefix(BYTE_ORDER_MARK).decode("utf-8")
    except UnicodeDecodeError as err:
        # err.object, not data: with a BOM, positions are in the bytes after it.
        raise not_utf8(err.object[err.start], err.object.count(b"\n", 0, err.start) + 1, source) from None


def not_utf8(byte: int, line: int, source: str) -> InputError:
    """The error for a byte that is not UTF-8 (shared by :func:`decode` and the streaming JSON reader)."""
    return InputError(f"byte 0x{byte:02x} is not valid UTF-8; save the file as UTF-8", source=source, line=line)


def read_text(path: str | os.PathLike) -> str:
    """The text of a UTF-8 file (or standard input for ``-``)."""
    return decode(read_bytes(path), display_name(path))


#: Integers beyond this magnitude would overflow a float: they are read as infinities, which every
#: reader of numbers refuses with its JSON path ("not a finite number").
FLOAT_LIMIT = 1 << 1023


class TooLarge(float):
    """An integer in a JSON file too large for a float: an infinity that says what it was."""

    digits: int

    def __new__(cls, text: str):
        value = super().__new__(cls, -math.inf if text.startswith("-") else math.inf)
        value.digits = len(text.lstrip("-"))
        return value

    def describe(self) -> str:
        return f"an integer of {self.digits} digits, too large for a number (at most about 1.8e308)"


def _json_int(text: str):
    if len(text) > 320:  # beyond any float, and beyond Python's default limit on digits
        return TooLarge(text)
    value = int(text)
    return value if abs(value) < FLOAT_LIMIT else TooLarge(text)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def parse_json_text(text: str, source: str, line: int | None = None, *, unique_keys: bool = False):
    """Parse JSON text (a file, or one line of a JSONL file when ``line`` is given).

    A syntax error names its line and column; nesting deeper than Python's recursion allows is one
    error line, not a RecursionError; integers too large for a float become infinities
    (:class:`TooLarge`). With ``unique_keys`` (banks, episodes: small files where a key given twice
    is a mistake that JSON would settle silently by keeping the last) a repeated key is an error.
    """
    import json  # here, as in the other JSON functions: a command reading TREC files only does without it

    try:
        value = json.loads(text, parse_int=_json_int, object_pairs_hook=_unique_keys if unique_keys else None)
    except _DuplicateKey as err:
        raise InputError(f"the key {err.args[0]!r} appears twice in one JSON object; keep one", source=source,
                         line=line) from None
    except json.JSONDecodeError as err:
        raise invalid_json(err.msg, err.colno, source, line if line is not None else err.lineno) from None
    except RecursionError:
        raise nested_too_deeply(source, line) from None
    if lone_surrogate_escape().search(text):  # the only way a decoded text holds a lone surrogate: an escape
        _refuse_lone_surrogates(value, source, line)
    return value


@functools.cache
def lone_surrogate_escape() -> re.Pattern[str]:
    """An escape of a lone surrogate (a high one not followed by a low one, a low one not after a high one), or
    of what looks like one (an escaped backslash before it): a text without a match holds no lone surrogate.
    Both branches begin with the literal ``\\u``, which re scans for quickly (a branch that began with the
    lookbehind was tried at every character: 8 s of a 467 MB run's 22). Compiled on first use: by JSON inputs."""
    import re

    return re.compile(r"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
                      r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD])[c-fC-F][0-9a-fA-F]{2})")


def lone_surrogate(value, path: str = "") -> str | None:
    """What is wrong with the first string (or key) of JSON ``value`` that holds a lone surrogate, named by its
    JSON path under ``path`` (each object's keys before its values, values in order), else None."""
    pending = [(path, value)]
    while pending:
        where, node = pending.pop()
        if type(node) is str:
            problem = _surrogate_in(node, where or "the value")
        elif type(node) is dict:
            problem = next((found for found in (_surrogate_in(key, f"{where or 'the object'}: a key") for key in node)
                            if found), None)
            pending.extend((f"{where}.{key}" if where else str(key), child) for key, child in reversed(node.items()))
        elif type(node) is list:
            problem = None
            pending.extend((f"{where}[{index}]", child) for index, child in reversed(list(enumerate(node))))
        else:
            problem = None
        if problem is not None:
            return problem
    return None


def _surrogate_in(text: str, where: str) -> str | None:
    try:
        check_unicode(text, where.encode("utf-8", "backslashreplace").decode(), "")
    except InputError as err:
        return err.problem
    return None


def _refuse_lone_surrogates(value, source: str, line: int | None) -> None:
    """Refuse a JSON value with a string (or key) holding a lone surrogate, naming its JSON path: no file can
    hold such a string, and an output or a prompt would fail on it later (a traceback, not a line)."""
    problem = lone_surrogate(value)
    if problem is not None:
        raise InputError(problem, source=source, line=line)


def check_unicode(text: str, where: str, source: str) -> None:
    """Refuse a string holding a lone surrogate (half of a UTF-16 pair: JSON's ``\\ud800`` escape makes one),
    which is no Unicode text: no file can hold it, and a prompt or an output would fail on it later."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(f"{where}: character {err.start + 1} is a lone surrogate (\\u{ord(text[err.start]):04x}, "
                         "half of a UTF-16 pair), which is no Unicode text; fix the escape", source=source) from None


@functools.cache
def json_decoder() -> json.JSONDecoder:
    """The decoder of :func:`parse_json_text` without ``unique_keys``, for readers that take a document
    apart themselves (``JSONDecoder.raw_decode``), such as the streaming reader of JSON runs."""
    import json

    return json.JSONDecoder(parse_int=_json_int)


def invalid_json(message: str, column: int, source: str, line: int | None) -> InputError:
    """The error for a JSON syntax error (``message`` as Python's json gives it)."""
    return InputError(f"invalid JSON at column {column}: {message}", source=source, line=line)


def nested_too_deeply(source: str | None, line: int | None = None, path: str = "") -> InputError:
    """The error for JSON nested deeper than :data:`castregin.limits.MAX_JSON_DEPTH` (or than Python's
    recursion allows); ``path``: the JSON path of the value."""
    return InputError(f"{path + ': ' if path else ''}JSON nested too deeply (more than {limits.MAX_JSON_DEPTH} "
                      "levels; castregin's formats nest a few)", source=source, line=line)


def deeper_than(value, levels: int) -> bool:
    """Whether JSON ``value`` nests more than ``levels`` arrays and objects deep (a scalar: 0). Level by
    level, iteratively: no depth reaches Python's recursion limit."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > levels:
            return True
        level = [child for node in level for child in (node.values() if type(node) is dict else node)
                 if type(child) is dict or type(child) is list]
    return False


def read_json(path: str | os.PathLike, *, unique_keys: bool = True):
    """Parse a JSON file (``-``: standard input); see :func:`parse_json_text`."""
    return parse_json_text(read_text(path), display_name(path), unique_keys=unique_keys)


# --- writing JSON ----------------------------------------------------------------------------------------


def json_value(value, *, digits: int | None = None):
    """``value`` for JSON: NaN and infinities as None, numpy numbers as Python's, recursively.

    ``digits`` rounds floats (``ope``'s estimates are rounded to 1e-9, so that the last bits of BLAS
    arithmetic never reach a file).
    """
    if isinstance(value, dict):
        return {key: json_value(v, digits=digits) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v, digits=digits) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "item") and not isinstance(value, (int, float)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return round(value, digits) if digits is not None else value
    return value


def json_text(data, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``data`` as the JSON text castregin writes: UTF-8, no NaN, a newline at the end."""
    import json

    return json.dumps(json_value(data), indent=indent, ensure_ascii=False, sort_keys=sort_keys,
                      allow_nan=False) + "\n"
