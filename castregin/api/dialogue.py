"""Dialogue: clembench's privateshared game played against a model (``castregin play privateshared``)."""

from __future__ import annotations

from .inputs import cache_path

# --- playing clembench's privateshared game -----------------------------------------------------------------------


def play_privateshared(game_dir, *, model: str, base_url: str, cache, instances=None, experiments=(),
                       rules: str = "2.0", api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.0,
                       max_tokens: int | None = None, concurrency: int = 4, timeout: float = 120.0,
                       max_retries: int = 5, retry_wait: float = 1.0, max_requests: int | None = None,
                       price_in: float = 0.0, price_out: float = 0.0):
    """Play clembench's privateshared game against a model, as ``castregin play privateshared`` does.

    One implementation with the command (:func:`castregin.dialogue.privateshared_play.play_privateshared`): the same
    game master, prompts, cache, retries, budget and scores; nothing is written but the cache, and every
    instance is played (a second call asks nothing again: the answers come from the cache).

    ``game_dir``: clembench's ``privateshared/`` folder or one ``--generate`` wrote; ``instances`` (default
    ``DIR/in/instances.json``), ``experiments`` (names; default all) and ``rules`` (``"2.0"``, ``"1.0"``)
    as the command's ``--instances``, ``--experiment``, ``--rules``; ``cache`` the SQLite answer cache's
    path; the endpoint's settings as the options of those names (the key only from ``api_key_env``).

    Returns a :class:`castregin.dialogue.privateshared_play.PlayRun`: ``outcomes`` (per instance, its
    ``plan.directory`` in clembench's results layout and its ``records``, or its ``status`` and ``error``
    when it could not be played) and ``log``. An episode's files are
    ``castregin.formats.privateshared.episode_files(records, rules)``, its scores
    ``records.scores["episode scores"]``. Errors a user can cause are :class:`InputError`.

    >>> run = play_privateshared("clembench/privateshared", model="llama3.1:8b",  # doctest: +SKIP
    ...                          base_url="http://localhost:11434/v1", cache="play-cache.sqlite")
    >>> run.played[0].records.scores["episode scores"]["Main Score"]  # doctest: +SKIP
    100.0
    """
    from ..dialogue.privateshared_play import play_privateshared as play
    from ..llm import EndpointSettings

    settings = EndpointSettings(model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                                max_tokens=max_tokens, concurrency=concurrency, timeout=timeout,
                                max_retries=max_retries, retry_wait=retry_wait, max_requests=max_requests,
                                price_in=price_in, price_out=price_out)
    names = [experiments] if isinstance(experiments, str) else list(experiments)
    return play(game_dir, settings, cache_path(cache), instances=instances, experiments=names, rules=rules)
