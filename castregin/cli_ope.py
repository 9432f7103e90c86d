"""Commands of the castregin CLI for the ope stage (registered on `castregin.cli.main`)."""

from __future__ import annotations

import click  # noqa: F401

from .cli import main  # noqa: F401
