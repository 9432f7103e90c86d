"""The endpoint settings' ranges are stated once (castregin.limits.ENDPOINT_BOUNDS): the settings' check and
every command option read that table, so the two refuse the same values."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from castregin.cli.endpoint import endpoint_options, endpoint_settings
from castregin.errors import InputError
from castregin.limits import ENDPOINT_BOUNDS
from castregin.llm import EndpointSettings


@click.command()
@endpoint_options
def probe(**params):
    click.echo(repr(EndpointSettings(**endpoint_settings(params)).check()))


def _values(name: str) -> tuple[list, list]:
    """Values just inside and just outside the range of ``name``."""
    low, high, whole = ENDPOINT_BOUNDS[name]
    step = 1 if whole else 0.001
    inside = [low, *([high] if high is not None else [low + 1000])]
    outside = [low - step, *([high + step] if high is not None else [])]
    return inside, outside


@pytest.mark.parametrize("name", list(ENDPOINT_BOUNDS))
def test_the_option_and_the_check_take_and_refuse_the_same_values(name):
    inside, outside = _values(name)
    base = ["--model", "m", "--base-url", "http://localhost:8000/v1"]
    flag = "--" + name.replace("_", "-")
    for value in inside:
        result = CliRunner().invoke(probe, [*base, flag, str(value)])
        assert result.exit_code == 0, (name, value, result.output)
        EndpointSettings(model="m", base_url="http://localhost:8000/v1", **{name: value}).check()
    for value in outside:
        result = CliRunner().invoke(probe, [*base, flag, str(value)])
        assert result.exit_code == 2, (name, value, result.output)
        with pytest.raises(InputError, match=rf"^{name}: expected "):
            EndpointSettings(model="m", base_url="http://localhost:8000/v1", **{name: value}).check()


def test_every_endpoint_option_is_there_with_the_settings_defaults():
    result = CliRunner().invoke(probe, ["--model", "m", "--base-url", "http://localhost:8000/v1"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == repr(EndpointSettings(model="m", base_url="http://localhost:8000/v1"))
