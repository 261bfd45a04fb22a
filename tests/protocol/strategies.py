"""Hypothesis strategies generated from the message schemas (tests only)."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from hypothesis import strategies as st

from spark_kafka_py.protocol import schema as s
from spark_kafka_py.protocol.schema import Array, KafkaType, Struct, struct_fields

_INTS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def value_strategy(ktype: KafkaType, version: int, nullable: bool) -> st.SearchStrategy[Any]:
    """Values of ``ktype`` that can be encoded at ``version``."""
    if ktype.name in _INTS:
        low, high = _INTS[ktype.name]
        base: st.SearchStrategy[Any] = st.integers(low, high)
    elif ktype is s.BOOL:
        base = st.booleans()
    elif ktype is s.FLOAT64:
        base = st.floats(allow_nan=False)
    elif ktype is s.UUID:
        base = st.builds(uuid.UUID, int=st.integers(0, 2**128 - 1))
    elif ktype is s.STRING:
        base = st.text(max_size=8)
    elif ktype in (s.BYTES, s.RECORDS):
        base = st.binary(max_size=16)
    elif isinstance(ktype, Array):
        base = st.lists(value_strategy(ktype.item, version, False), max_size=3).map(tuple)
    elif isinstance(ktype, Struct):
        base = struct_strategy(ktype.cls, version)
    else:  # pragma: no cover
        raise AssertionError(ktype)
    return st.one_of(st.none(), base) if nullable else base


def struct_strategy(cls: type, version: int) -> st.SearchStrategy[Any]:
    """Instances of ``cls`` whose fields absent at ``version`` keep their defaults."""
    kwargs = {
        spec.name: value_strategy(spec.type, version, version in spec.nullable_versions)
        for spec in struct_fields(cls)
        if version in spec.versions
    }
    return st.builds(cls, **kwargs)


def project(obj: Any, version: int) -> Any:
    """``obj`` as it reads back after a round trip at ``version`` (absent fields -> default)."""
    if isinstance(obj, tuple):
        return tuple(project(item, version) for item in obj)
    if not dataclasses.is_dataclass(obj) or not hasattr(type(obj), "_kafka_fields"):
        return obj
    changes = {}
    for spec in struct_fields(type(obj)):
        value = getattr(obj, spec.name)
        if version not in spec.versions:
            changes[spec.name] = spec.type.cls() if isinstance(spec.type, Struct) else spec.default
        else:
            changes[spec.name] = project(value, version)
    return dataclasses.replace(obj, **changes)
