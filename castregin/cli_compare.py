"""Commands of the castregin CLI for the compare stage (registered on `castregin.cli.main`)."""

from __future__ import annotations

import click  # noqa: F401

from .cli import main  # noqa: F401
