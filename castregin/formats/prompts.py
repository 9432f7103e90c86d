"""A prompt template file (``judge --prompt FILE``): UTF-8 text, read as every input is."""

from __future__ import annotations

import os

from ..errors import InputError
from .common import read_bytes


def read_prompt_file(path: str | os.PathLike) -> str:
    """The text of a template file (``-``: standard input; compressed files too); a missing file, a directory
    or bytes that are not UTF-8 are one line."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text; a prompt template is a Jinja text file", source=os.fspath(path)) from None
