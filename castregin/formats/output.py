"""Writing outputs: whole or not at all, through special files, never over an input, never outside.

Every file castregin writes goes through here. The rules:

- A regular file is replaced atomically: the content goes to a temporary file beside it
  (``.NAME.castregin-XXXXXXXX.tmp``), which is renamed over it at the end; its mode is kept. A
  symbolic link to a regular file is followed: the file it points to is replaced, the link stays
  (a dangling link is followed too, creating its target).
- Anything else is written *through*, never replaced: standard output (``-``), FIFOs and process
  substitutions, character devices (``/dev/null``), and the paths of the process's own descriptors
  (``/dev/stdout``, ``/dev/fd/N``), which are written to that descriptor, as the shell set it up
  (a file opened for appending stays appended to). The content is still prepared in full first,
  so an error writes nothing there either. A directory or a block device is refused.
- An output that is one of the inputs, however it is spelled (``./x`` and ``x``, a symbolic or a
  hard link), is an error: files are compared by device and inode. So are two outputs that are
  the same file. The inputs are those a writer is given and, on the command line, every file any
  parameter of the command names as an input (:func:`declared_inputs`).
- A name ending in ``/`` names a directory: it is refused as a file to write.
- Several outputs of one command are one :class:`OutputSet`: all are committed, or, on any error,
  none, the old files staying exactly as they were and a directory created for them removed.
- A regular file whose name ends in ``.gz``, ``.bz2`` or ``.xz`` is written compressed, reproducibly
  (gzip's header holds no time and no name), so the same content gives the same bytes. Standard
  output and special files are written plain.
- Disk full, permission denied, a closed standard output: one :class:`~castregin.errors.InputError`
  line. A reader that has gone (``castregin ... | head -1``: EPIPE) is no error to report: a
  :class:`BrokenPipeError`, on which the command line ends quietly, as Unix tools do (exit 141).
  Temporary files are removed on every error, and on SIGTERM and SIGINT, which the command line
  turns into exceptions (:mod:`castregin.cli`).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import io
import os
import stat
import sys

from ..errors import InputError

TYPE_CHECKING = False  # neither typing nor dataclasses here: every command that writes imports this module
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path
    from typing import IO, Any, Literal

STDIO = "-"
#: Paths naming this process's own descriptors: written through the descriptor, never reopened or replaced.
_DESCRIPTOR_PATHS = {"/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_DIRS = ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/")
#: Standard output and special files are prepared in memory up to this size, then on disk.
_SPOOL_BYTES = 16 << 20

_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied; choose a place you can write to",
    errno.EPERM: "permission denied; choose a place you can write to",
    errno.EROFS: "the file system is read-only",
    errno.EISDIR: "is a directory; give a file name",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.ENOENT: "no such directory",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EBADF: "is closed",
}


#: The inputs of the running command (see :func:`declared_inputs`).
_DECLARED_INPUTS: contextvars.ContextVar[tuple] = contextvars.ContextVar("castregin_declared_inputs", default=())


@contextlib.contextmanager
def declared_inputs(paths: Iterable[str | os.PathLike | None]) -> Iterator[None]:
    """Inside the block, every output is also checked against ``paths``: the command line declares every
    file its parameters name as inputs, so that no writer can forget one."""
    token = _DECLARED_INPUTS.set(tuple(p for p in paths if p is not None))
    try:
        yield
    finally:
        _DECLARED_INPUTS.reset(token)


def _all_inputs(inputs: Iterable[str | os.PathLike | None]) -> list:
    return [*(p for p in inputs if p is not None), *_DECLARED_INPUTS.get()]


def write_error(err: OSError, where: str) -> InputError | BrokenPipeError:
    """An OSError while writing ``where`` as one line saying what happened; EPIPE (the reader of a pipe has
    had enough) stays a :class:`BrokenPipeError`, which the command line ends quietly on."""
    if err.errno == errno.EPIPE:
        return BrokenPipeError(err.errno, err.strerror or "Broken pipe")
    return InputError(f"cannot write: {_hint(err, err.strerror or str(err))}", source=where)


def _hint(err: OSError, default: str | None) -> str | None:
    """What to tell about ``err``: a hint for the errors a user can fix, else ``default``."""
    return default if err.errno is None else _HINTS.get(err.errno, default)


def display(path: str | os.PathLike) -> str:
    return "<stdout>" if str(path) == STDIO else str(path)


def descriptor_of(path: str) -> int | None:
    """The descriptor number a path like ``/dev/stdout`` or ``/dev/fd/3`` stands for, else None."""
    absolute = os.path.abspath(path)
    if absolute in _DESCRIPTOR_PATHS:
        return _DESCRIPTOR_PATHS[absolute]
    for directory in _DESCRIPTOR_DIRS:
        number = absolute[len(directory):]
        if absolute.startswith(directory) and number.isascii() and number.isdigit():
            return int(number)
    return None


def identity(path: str | os.PathLike) -> tuple[int, int] | None:
    """``(device, inode)`` of the file ``path`` names (links followed), None when there is none."""
    if str(path) == STDIO:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


class Target:
    """Where an output goes: ``stdout``, ``through`` (a special file), or ``file`` (the real path)."""

    __slots__ = ("given", "kind", "path")

    def __init__(self, kind: str, path: str, given: str):
        self.kind, self.path, self.given = kind, path, given


def resolve(path: str | os.PathLike) -> Target:
    """Decide how ``path`` is written; a directory or block device is an :class:`InputError`."""
    given = os.fspath(path)
    if given == STDIO:
        return Target("stdout", STDIO, STDIO)
    if not given or "\0" in given:
        raise InputError("not a usable file name", source=repr(given))
    if given.endswith(os.sep) or (os.altsep and given.endswith(os.altsep)):
        raise InputError("ends in '/', which names a directory; give a file name", source=given)
    try:
        st = os.stat(given)
    except FileNotFoundError:
        return Target("file", os.path.realpath(given), given)
    except OSError as err:
        raise write_error(err, given) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("is a directory; give a file name", source=given)
    if stat.S_ISBLK(st.st_mode):
        raise InputError("is a block device; castregin writes files, FIFOs and character devices only",
                         source=given)
    if stat.S_ISREG(st.st_mode) and descriptor_of(given) is None:
        return Target("file", os.path.realpath(given), given)
    return Target("through", given, given)


def check_outputs(outputs: Iterable[str | os.PathLike | None], inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Refuse, before any work, outputs that are inputs or each other, directories and block devices."""
    inputs = _all_inputs(inputs)
    outputs = list(outputs)
    if sum(output is not None and str(output) == STDIO for output in outputs) > 1:
        raise InputError("two outputs go to standard output ('-'), one after the other; give all but one a file")
    read = {identity(p): p for p in inputs}
    read.pop(None, None)
    seen: dict = {}
    for output in outputs:
        if output is None or str(output) == STDIO:
            continue
        target = resolve(output)
        same = identity(output)
        if same in read:
            spelled = "" if str(read[same]) == str(output) else " (the same file by another path)"
            raise InputError(f"refusing to overwrite the input file {read[same]}{spelled}; choose another output",
                             source=str(output))
        key = same or target.path
        if target.kind == "file" and key in seen:
            raise InputError(f"is the same file as the output {seen[key]}; give each output its own file",
                             source=str(output))
        seen[key] = output


def make_directories(directory: Path, given: str) -> list[Path]:
    """Create ``directory`` and its missing parents; return those created, outermost first."""
    missing = []
    probe = directory
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create the directory {directory}: {_hint(err, err.strerror)}",
                         source=given) from None
    return list(reversed(missing))


def remove_empty(directories: list[Path]) -> None:
    """Remove the directories castregin created (innermost first), where they are still empty: a failed
    output leaves no new directory, and never removes anything castregin did not write."""
    for directory in reversed(directories):
        with contextlib.suppress(OSError):
            directory.rmdir()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _new_file_mode() -> int:
    return 0o666 & ~_umask()


class _Staged:
    __slots__ = ("binary", "file", "handle", "target", "temporary")

    def __init__(self, target: Target, handle: IO[Any], temporary: str | None = None, binary: bool = False,
                 file: IO[bytes] | None = None):
        self.target, self.handle, self.binary = target, handle, binary
        self.temporary = temporary  # for files: the temporary file beside the target
        self.file = file  # under a compressor: the temporary file, which closing the compressor leaves open

    def close(self) -> None:
        try:
            self.handle.close()
        finally:
            if self.file is not None:
                self.file.close()


def _compressor(file: IO[bytes], given: str) -> io.BufferedIOBase | None:
    """A stream compressing into ``file`` when the name ``given`` ends in ``.gz``, ``.bz2``, ``.xz``; else None."""
    suffix = os.path.splitext(given)[1].lower()
    if suffix == ".gz":
        import gzip  # here: an uncompressed output needs none of the compressors

        # No name and no time in the header: the same content gives the same bytes. Level 6 is gzip's own.
        return gzip.GzipFile(filename="", mode="wb", fileobj=file, compresslevel=6, mtime=0)
    if suffix == ".bz2":
        import bz2  # here: an uncompressed output needs neither

        return bz2.BZ2File(file, "wb")
    if suffix == ".xz":
        import lzma

        return lzma.LZMAFile(file, "wb")
    return None


class OutputSet:
    """Outputs committed together, all of them or none. Use as a context manager::

        with OutputSet(inputs=[run_path]) as outputs:
            outputs.write_text("a.qrel", text)
            with outputs.open("b.run") as handle:   # stream into it
                ...
        # here every file is in place; on an exception inside the block, none is changed

    ``inputs`` are refused as outputs (compared by identity); two outputs that are the same file
    are refused too.
    """

    def __init__(self, inputs: Iterable[str | os.PathLike] = ()):
        self.inputs = _all_inputs(inputs)
        self._staged: list[_Staged] = []
        self._created: list[Path] = []

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()

    def open(self, path: str | os.PathLike, mode: str = "w") -> _Unclosable:
        """A handle to write ``path``'s new content into (text: UTF-8, ``\\n`` line ends)."""
        check_outputs([*(s.target.given for s in self._staged), path], self.inputs)
        target = resolve(path)
        binary = "b" in mode
        if target.kind != "file":
            # typeshed has the spool, an io.BufferedIOBase, as no typing.IO: a binary file all the same.
            spool: IO[bytes] = _Spool()  # type: ignore[assignment]
            handle: IO[Any] = spool if binary else io.TextIOWrapper(spool, encoding="utf-8", newline="\n")
            self._staged.append(_Staged(target, handle, binary=binary))
            return _Unclosable(handle, display(path))
        from pathlib import Path  # here, as in the directory functions: standard output needs no path

        directory = Path(target.path).parent
        self._make_directory(directory, target.given)
        name = Path(target.path).name
        import tempfile  # here: standard output needs no temporary file

        try:
            fd, temporary = tempfile.mkstemp(prefix=f".{name}.castregin-", suffix=".tmp", dir=directory)
        except OSError as err:
            raise write_error(err, target.given) from None
        file = None
        try:
            file = open(fd, "wb")  # noqa: SIM115 - closed at commit or discard
            compressor = _compressor(file, target.given)
            # typeshed has the compressors as io.BufferedIOBase, not typing.IO: binary files all the same.
            raw: IO[bytes] = compressor if compressor is not None else file  # type: ignore[assignment]
            handle = raw if binary else io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
            self._staged.append(_Staged(target, handle, temporary, binary, file if compressor else None))
        except BaseException:
            # Not staged yet (a signal, an import failing): discard would not know of it.
            with contextlib.suppress(OSError):
                file.close() if file is not None else os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        return _Unclosable(handle, display(path))

    def write_text(self, path: str | os.PathLike, text: str) -> None:
        handle = self.open(path, "w")
        self._write(handle, text, path)

    def write_bytes(self, path: str | os.PathLike, data: bytes) -> None:
        handle = self.open(path, "wb")
        self._write(handle, data, path)

    @staticmethod
    def _write(handle, content, path) -> None:
        try:
            handle.write(content)
        except OSError as err:
            raise write_error(err, display(path)) from None

    def _make_directory(self, directory: Path, given: str) -> None:
        self._created.extend(make_directories(directory, given))

    def commit(self) -> None:
        """Put every staged output in place, all or none: files first, their old versions kept aside, then the
        streams (special files such as ``/dev/full`` before standard output); a stream that fails puts the old
        files back. A stream already written cannot be taken back: standard output, written last, is the one
        most often read, and ``/dev/full`` fails before it is touched."""
        backups: list[tuple[str, str | None]] = []
        try:
            for staged in self._staged:
                try:
                    # Closed, not flushed first: a flush would put a sync mark into a gzip stream.
                    if staged.temporary is not None:
                        staged.close()
                    else:
                        staged.handle.flush()
                except OSError as err:
                    raise write_error(err, display(staged.target.given)) from None
            self._replace_files([s for s in self._staged if s.target.kind == "file"], backups)
            streams = [s for s in self._staged if s.target.kind == "through"]
            streams += [s for s in self._staged if s.target.kind == "stdout"]
            for staged in streams:
                self._copy_out(staged)
        except BaseException:
            _restore(backups)
            self.discard()
            raise
        finally:
            _drop(backups)
        self._staged.clear()
        self._created.clear()

    @staticmethod
    def _replace_files(staged: list[_Staged], backups: list[tuple[str, str | None]]) -> None:
        # Each old file is kept as a hard link (listed in ``backups``) until the whole set is committed: an error
        # part way puts the old ones back, and removes the new ones that had no old one (:func:`_restore`).
        current: _Staged | None = None
        try:
            for current in staged:
                target, temporary = current.target.path, current.temporary
                if temporary is None:
                    raise ValueError(f"{target}: a file output is staged without its temporary file")
                mode = _new_file_mode()
                backup = None
                if os.path.lexists(target):
                    mode = stat.S_IMODE(os.stat(target).st_mode)
                    backup = f"{temporary}.old"
                    os.link(target, backup)
                os.chmod(temporary, mode)
                backups.append((target, backup))
                os.replace(temporary, target)
                current.temporary = None
        except OSError as err:
            if current is not None:
                raise write_error(err, current.target.given) from None
            raise

    def _copy_out(self, staged: _Staged) -> None:
        handle = staged.handle
        raw = handle.buffer if isinstance(handle, io.TextIOWrapper) else handle
        raw.seek(0)
        where = display(staged.target.given)
        try:
            if staged.target.kind == "stdout":
                _copy_to_stdout(raw, where)
            elif (fd := descriptor_of(staged.target.path)) is not None:
                _copy_to_descriptor(raw, fd)
            else:
                import shutil

                with open(staged.target.path, "wb") as out:
                    shutil.copyfileobj(raw, out, 1 << 20)
        except OSError as err:
            raise write_error(err, where) from None
        finally:
            handle.close()

    def discard(self) -> None:
        """Forget every staged output: temporary files removed, directories this set created removed."""
        for staged in self._staged:
            with contextlib.suppress(Exception):
                staged.close()
            if staged.temporary is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(staged.temporary)
        self._staged.clear()
        remove_empty(self._created)
        self._created.clear()


class _Spool(io.BufferedIOBase):
    """Where the content of standard output or a special file is prepared in full before any of it goes out:
    memory up to :data:`_SPOOL_BYTES`, then a temporary file, as :class:`tempfile.SpooledTemporaryFile` keeps
    it. Written here so that :mod:`tempfile` (and the :mod:`shutil`, :mod:`bz2` and :mod:`lzma` it loads, a
    tenth of a ten-line ``castregin trec_eval``'s time) is imported only by an output that grows that large."""

    def __init__(self):
        super().__init__()
        #: The content while it is held in memory (then None); ``_file``, where it is, in memory or on disk.
        self._memory: io.BytesIO | None = io.BytesIO()
        self._file: IO[bytes] = self._memory

    @property
    def _in_memory(self) -> bool:
        return self._memory is not None

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        written = self._file.write(data)
        memory = self._memory
        if memory is not None and memory.tell() > _SPOOL_BYTES:
            import tempfile

            at = memory.tell()
            on_disk = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the spool
            on_disk.write(memory.getbuffer())
            on_disk.seek(at)
            memory.close()
            self._file, self._memory = on_disk, None
        return written

    def read(self, size: int | None = -1) -> bytes:
        return self._file.read(-1 if size is None else size)

    def read1(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        super().close()  # flushes first
        self._file.close()


def _restore(backups: list[tuple[str, str | None]]) -> None:
    """Put the old files back (newest first), removing the new ones that had none. A backup still there after
    (the target was never replaced: renaming a hard link over its own file does nothing) goes with :func:`_drop`."""
    for target, backup in reversed(backups):
        with contextlib.suppress(OSError):
            if backup is not None:
                os.replace(backup, target)
            else:
                os.unlink(target)


def _drop(backups: list[tuple[str, str | None]]) -> None:
    """Remove the old files kept aside, where they are still there (the new ones stay); the list is emptied."""
    for _, backup in backups:
        if backup is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(backup)
    backups.clear()


class _Unclosable:
    """A staged handle the caller may use in ``with`` without closing it before the commit; an OSError
    while writing (the disk full) is one :class:`InputError` line naming the output."""

    def __init__(self, handle: IO[Any], where: str):
        self._handle = handle
        self._where = where

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def write(self, data: Any) -> int:
        try:
            return self._handle.write(data)
        except OSError as err:
            raise write_error(err, self._where) from None

    def flush(self) -> None:
        try:
            self._handle.flush()
        except OSError as err:
            raise write_error(err, self._where) from None

    def __enter__(self) -> _Unclosable:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    def close(self) -> None:
        pass


def _copy_to_stdout(raw, where: str) -> None:
    stream = sys.stdout
    if stream is None:
        raise InputError("standard output is closed; give -o FILE")
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        fd = None  # a stream without a descriptor (a test runner's capture): write through Python
    if fd is None:
        buffer = getattr(stream, "buffer", None)
        for chunk in iter(lambda: raw.read(1 << 20), b""):
            if buffer is not None:
                buffer.write(chunk)
            else:
                stream.write(chunk.decode("utf-8"))
        stream.flush()
        return
    # Straight to the descriptor: a failed write (disk full) leaves nothing in Python's buffer that
    # the interpreter would try, and fail, to flush again at exit.
    stream.flush()
    _copy_to_descriptor(raw, fd)


def _copy_to_descriptor(raw, fd: int) -> None:
    for chunk in iter(lambda: raw.read(1 << 20), b""):
        view = memoryview(chunk)
        while view:
            written = os.write(fd, view)
            view = view[written:]


# --- the common cases --------------------------------------------------------------------------------------


def write_text(path: str | os.PathLike, text: str, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Write ``text`` (UTF-8) to ``path`` by the rules above; ``-`` is standard output."""
    with OutputSet(inputs) as outputs:
        outputs.write_text(path, text)


def ensure_not_input(output: str | os.PathLike | None, inputs: Iterable[str | os.PathLike]) -> None:
    """:func:`check_outputs` of one output: refuse it when it is an input however it is spelled."""
    check_outputs([output], inputs)


def write_bytes(path: str | os.PathLike, data: bytes, inputs: Iterable[str | os.PathLike] = ()) -> None:
    with OutputSet(inputs) as outputs:
        outputs.write_bytes(path, data)


@contextlib.contextmanager
def open_output(path: str | os.PathLike, mode: str = "w",
                inputs: Iterable[str | os.PathLike] = ()) -> Iterator[_Unclosable]:
    """Stream into ``path``; it appears whole when the block ends without an error, else not at all."""
    with OutputSet(inputs) as outputs:
        yield outputs.open(path, mode)


# --- a directory that is one output ----------------------------------------------------------------------------

#: The file that marks a directory as castregin's own output, safe to replace as a whole.
MARKER = ".castregin-output"


def replace_directory(out_dir: str | os.PathLike, files: dict[str, bytes], *, kind: str,
                      inputs: Iterable[str | os.PathLike] = (), allowed: Iterable[str] = ()) -> Path:
    """Make ``out_dir`` hold exactly ``files`` (relative path -> bytes), replacing it as a whole.

    The new directory is built beside it and swapped in with two renames, so it never holds a
    mix of two versions. An existing directory is replaced only if it is empty or every file in its
    tree is one castregin wrote there: one the marker file lists, or, for outputs older than the
    list, a name matching ``allowed`` (glob patterns such as ``figures/*.png``). Anything else is
    refused, never deleted. Inputs inside it are refused too.
    """
    import shutil
    import tempfile
    from pathlib import Path

    target = Path(out_dir)
    check_replaceable_directory(out_dir, kind=kind, inputs=inputs, allowed=allowed)
    parent = target.absolute().parent
    created = make_directories(parent, str(out_dir))
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.castregin-", suffix=".tmp", dir=parent))
    except OSError as err:
        raise write_error(err, str(out_dir)) from None
    old = None
    try:
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it private; a report is for reading
        for name, data in {**files, MARKER: _marker(kind, files)}.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.castregin-old-", suffix=".tmp", dir=parent))
            os.rename(target, old / "d")
        try:
            os.rename(staging, target)
        except BaseException:
            if old is not None:
                os.rename(old / "d", target)
            raise
    except OSError as err:
        raise write_error(err, str(out_dir)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if not target.exists():
            remove_empty(created)
    return target


def check_replaceable_directory(out_dir: str | os.PathLike, *, kind: str, inputs: Iterable[str | os.PathLike] = (),
                                allowed: Iterable[str] = ()) -> None:
    """Refuse an ``out_dir`` that :func:`replace_directory` must not replace (see there)."""
    from pathlib import Path

    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise InputError("exists and is not a directory; choose a directory for the output", source=str(out_dir))
    if target.is_dir():
        _check_replaceable(target, kind, list(allowed))
        real = target.resolve()
        for path in _all_inputs(inputs):
            if path is not None and str(path) != STDIO and Path(path).resolve().is_relative_to(real):
                raise InputError(f"holds the input {path}, which replacing it would delete; choose another "
                                 "directory", source=str(out_dir))


def _marker(kind: str, files: Iterable[str]) -> bytes:
    """The marker's text: ``castregin KIND``, then each file written, one JSON string a line."""
    import json  # here, as below: only outputs that are directories need it

    return "".join([f"castregin {kind}\n", *(json.dumps(str(name)) + "\n" for name in sorted(files))]).encode()


def _written(directory: Path) -> set[str] | None:
    """The files the marker in ``directory`` lists, None where there is no marker or it lists none (older)."""
    import json

    try:
        lines = (directory / MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    try:
        names = {json.loads(line) for line in lines[1:]}
    except (ValueError, RecursionError):
        return None
    return names if names and all(isinstance(name, str) for name in names) else None


def _check_replaceable(directory: Path, kind: str, allowed: list[str]) -> None:
    # Every entry that is not a directory (files, links, FIFOs), however deep: replacing the directory
    # deletes them all.
    entries = [p for p in directory.rglob("*") if p.is_symlink() or not p.is_dir()]
    written = _written(directory)
    for entry in entries:
        name = entry.relative_to(directory)
        if name.as_posix() == MARKER:
            continue
        ours = (name.as_posix() in written if written is not None
                else any(name.match(pattern) for pattern in allowed))
        if not ours:
            raise InputError(f"holds files that are not castregin's {kind} ({name}); choose a new or empty "
                             "directory, or move the file out", source=str(directory))
