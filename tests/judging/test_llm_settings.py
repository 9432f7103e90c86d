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


@pytest.mark.parametrize("model", ["truth\nful", "a\x1b[31mred", "tab\there", " ", ""])
def test_a_model_name_with_a_control_character_is_refused(model):
    """play names its results MODEL-tT: `--model $'truth\\nful'` made a directory with a newline (and an escape
    code) in its name. No model is named so: refused before anything starts, by the settings' check."""
    with pytest.raises(InputError, match="model: expected a") as refused:
        EndpointSettings(model=model, base_url="http://localhost:8000/v1").check()
    assert refused.value.argument == "model"
    EndpointSettings(model="org/llama-3.1:8b Instruct", base_url="http://localhost:8000/v1").check()


@pytest.mark.parametrize("command", [
    ["judge", "pool.txt", "--bank", "bank.json", "--topics", "topics.json", "--criteria", "relevance"],
    ["nuggets", "assign", "nuggets.jsonl", "answers.jsonl"], ["nuggets", "cite", "answers.jsonl", "--passages", "p"],
    ["nuggets", "create", "--qrels", "q", "--passages", "p", "--queries", "q"],
    ["play", "privateshared", "--game-dir", "game"]], ids=lambda command: " ".join(command[:2]))
def test_every_command_that_calls_a_model_refuses_it_in_one_line(cli, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    result = cli(*command, "--model", "truth\nful", "--base-url", "http://127.0.0.1:9/v1", "--out-dir", "out")
    assert result.exit_code in (1, 2) and result.stderr.count("\n") == 1, result.stderr
    assert "--model: expected a model's name without control characters" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("url", "host"), [
    ("http://example.org/v1", "example.org"),
    ("http://10.0.0.7:8000/v1", "10.0.0.7"),
    ("HTTP://Example.ORG./v1", "example.org"),
    ("https://example.org/v1", None),
    ("http://localhost:11434/v1", None),
    ("http://api.localhost/v1", None),
    ("http://127.0.0.1:8000/v1", None),
    ("http://127.1.2.3/v1", None),
    ("http://[::1]:8000/v1", None),
])
def test_a_key_over_plain_http_to_another_host_is_said(url, host, tmp_path, monkeypatch):
    # OPENAI_API_KEY, the default --api-key-env, is often set for another purpose than the endpoint asked.
    import warnings

    from castregin.errors import InputWarning
    from castregin.llm.session import check_run

    monkeypatch.setenv("CASTREGIN_TEST_KEY", "sk-0123456789abcdef")
    settings = EndpointSettings(model="m", base_url=url, api_key_env="CASTREGIN_TEST_KEY")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_run(settings, tmp_path / "cache.sqlite")
    said = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    if host is None:
        assert said == []
    else:
        assert said == [(f"the API key in CASTREGIN_TEST_KEY is sent to {host} over plain http://, readable on the "
                         "way; use https://, or name an unset variable in --api-key-env if the endpoint needs no key")]
    monkeypatch.delenv("CASTREGIN_TEST_KEY")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_run(settings, tmp_path / "cache.sqlite")
    assert [w for w in caught if issubclass(w.category, InputWarning)] == []
