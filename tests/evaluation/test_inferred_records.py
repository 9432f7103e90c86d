"""The inferred measures' results are frozen records that behave as the frozen dataclasses they were (made without
dataclasses, so that a ten-line ``castregin sample_eval`` does not import it): the oracle is a frozen dataclass of the
same fields."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from castregin.evaluation.inferred import SampleEvalTopic


@dataclasses.dataclass(frozen=True)
class Oracle:
    topic: str
    estimates: object
    num_ret: int


def test_a_record_is_made_compared_hashed_and_shown_as_a_frozen_dataclass():
    for args, named in [(("1", None, 3), {}), (("1",), {"estimates": (1.0,), "num_ret": 3}),
                        ((), {"num_ret": 3, "topic": "1", "estimates": None})]:
        record, oracle = SampleEvalTopic(*args, **named), Oracle(*args, **named)
        assert repr(record) == repr(oracle).replace("Oracle", "SampleEvalTopic")
        assert record == SampleEvalTopic(*args, **named) and hash(record) == hash(SampleEvalTopic(*args, **named))
        assert record != SampleEvalTopic("2", None, 3) and record != oracle
        assert copy.copy(record) == record == pickle.loads(pickle.dumps(record))  # noqa: S301 - its own bytes
        with pytest.raises(AttributeError):
            record.topic = "2"  # type: ignore[misc]
        with pytest.raises(AttributeError):
            del record.num_ret  # type: ignore[misc]


@pytest.mark.parametrize(("args", "named"), [
    ((1, 2), {}), ((1, 2, 3, 4), {}), ((1,), {"topic": 1, "estimates": 2, "num_ret": 3}),
    ((), {"topic": 1, "estimates": 2, "num_ret": 3, "x": 1}), ((), {"topic": 1}),
])
def test_a_record_takes_each_field_once_as_a_dataclass_does(args, named):
    with pytest.raises(TypeError):
        Oracle(*args, **named)
    with pytest.raises(TypeError):
        SampleEvalTopic(*args, **named)
