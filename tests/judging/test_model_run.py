"""castregin.llm.session.model_run: the one run of every command that calls a model (judge, nuggets, play).

The commands' own tests check each refusal's text through the command; these check the order of the steps,
which every command now takes from this one function: a step's refusal comes before the next step's work.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from castregin.errors import InputError
from castregin.llm import EndpointSettings
from castregin.llm.session import model_run

KEY_ENV = "CASTREGIN_MODEL_RUN_KEY"


@dataclass
class Template:
    source: str
    builtin: bool = False


def settings(**changes) -> EndpointSettings:
    return EndpointSettings(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=KEY_ENV, **changes)


def run(steps: list, tmp_path, *, cache=None, prompts=(), outputs=(), inputs=(), out_dir=None, fail=None,
        endpoint=None):
    """model_run with each step saying it ran (and ``fail`` the step that raises)."""
    def step(name, value):
        steps.append(name)
        if name == fail:
            raise InputError(f"{name} refused")
        return value

    def work(client, loaded, data):
        steps.append("work")
        return client.settings.model, list(loaded), data

    return model_run(endpoint or settings(), cache or tmp_path / "run" / "cache.sqlite", work,
                     prompts=lambda: step("prompts", list(prompts)), read=lambda: step("read", "data"),
                     outputs=outputs, inputs=inputs, out_dir=out_dir, purpose="test")


def test_the_work_gets_the_client_the_prompts_and_the_inputs(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    steps: list = []
    prompts = [Template("builtin", builtin=True)]
    assert run(steps, tmp_path, prompts=prompts) == ("m", prompts, "data")
    assert steps == ["prompts", "read", "work"]
    assert (tmp_path / "run" / "cache.sqlite").exists()


def test_the_settings_are_refused_before_the_prompts_are_loaded(tmp_path):
    steps: list = []
    with pytest.raises(InputError, match="concurrency"):
        run(steps, tmp_path, endpoint=settings(concurrency=0))
    assert steps == []


def test_a_key_no_server_takes_is_refused_after_the_prompts_and_before_any_input_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-key\n")
    steps: list = []
    with pytest.raises(InputError, match="cannot carry"):
        run(steps, tmp_path)
    assert steps == ["prompts"]
    assert not (tmp_path / "run").exists()


def test_a_template_file_is_an_input_no_output_may_be(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    template = tmp_path / "prompt.j2"
    template.write_text("{{ item }}")
    steps: list = []
    with pytest.raises(InputError, match="refusing to overwrite the input file"):
        run(steps, tmp_path, cache=template, prompts=[Template(str(template))])
    assert steps == ["prompts"]
    # A built-in prompt's source names no file.
    run(steps, tmp_path, prompts=[Template(str(template), builtin=True)], outputs=[template])


def test_an_output_that_is_an_input_is_refused_before_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-key\n")
    given = tmp_path / "pool.txt"
    given.write_text("x")
    steps: list = []
    with pytest.raises(InputError, match="refusing to overwrite the input file"):
        run(steps, tmp_path, outputs=[given], inputs=[given])
    assert steps == ["prompts"]


def test_nothing_is_made_when_the_inputs_or_the_output_directory_are_refused(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    steps: list = []
    with pytest.raises(InputError, match="read refused"):
        run(steps, tmp_path, fail="read")
    assert steps == ["prompts", "read"]
    assert not (tmp_path / "run").exists()

    steps.clear()
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(InputError, match="not a directory; choose a directory for --out-dir"):
        run(steps, tmp_path, out_dir=str(a_file))
    assert steps == ["prompts", "read"]
    assert not (tmp_path / "run").exists()


def test_a_failed_work_leaves_no_directory_it_made(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)

    def work(client, loaded, data):
        raise InputError("work refused")

    with pytest.raises(InputError, match="work refused"):
        model_run(settings(), tmp_path / "a" / "b" / "cache.sqlite", work, purpose="test")
    assert list(tmp_path.iterdir()) == []
