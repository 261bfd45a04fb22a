"""Every request class names its response twice, and the two agree: the ``Request[...]`` type
argument (what type checkers see, e.g. ``BrokerConnection.send``'s return type) and
``response_type`` (what the response frame is decoded with)."""

from __future__ import annotations

import sys
import typing

import pytest

from spark_kafka_py.protocol.messages import REQUEST_TYPES
from spark_kafka_py.protocol.schema import Request, Response


@pytest.mark.parametrize("cls", list(REQUEST_TYPES.values()), ids=lambda c: c.__name__)
def test_type_argument_is_the_response_type(cls: type[Request[Response]]) -> None:
    bases = [b for b in cls.__orig_bases__ if typing.get_origin(b) is Request]  # type: ignore[attr-defined]  # set by typing at class creation
    assert len(bases) == 1, f"{cls.__name__} does not subclass Request[<its response>]"
    (arg,) = typing.get_args(bases[0])
    if isinstance(arg, typing.ForwardRef):
        arg = vars(sys.modules[cls.__module__])[arg.__forward_arg__]
    assert arg is cls.response_type
    assert cls.response_type.API_KEY == cls.API_KEY


def test_response_of_returns_the_response_itself() -> None:
    cls = REQUEST_TYPES[3]
    request = cls()
    response = cls.response_type()
    assert request.response_of(response) is response
