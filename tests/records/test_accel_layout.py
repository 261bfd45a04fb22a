"""The layout constants compiled into ``records/_accel.pyx`` equal those of ``records/format.py``.

The Cython decoder needs C compile-time constants in its loops, so it repeats the ones it uses
in one ``cdef enum Layout``. This test reads that enum from the source (no compiler or built
extension needed) and compares every member with the same-named constant of
:mod:`spark_kafka_py.records.format`, the one place where they are explained and cited.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from spark_kafka_py.records import format as fmt

PYX = Path(fmt.__file__).with_name("_accel.pyx")

_LAYOUT_ENUM = re.compile(r"^cdef enum Layout:\n((?:(?:[ ]{4}.*)?\n)+)", re.MULTILINE)
_MEMBER = re.compile(r"^[ ]{4}([A-Z][A-Z0-9_]*) = (-?(?:0x[0-9A-Fa-f]+|\d+))[ ]*(?:#.*)?$")


def pyx_layout_constants(source: str) -> dict[str, int]:
    """Members of the ``cdef enum Layout`` block of ``source``: name -> value."""
    match = _LAYOUT_ENUM.search(source)
    assert match, "_accel.pyx has no `cdef enum Layout:` block"
    members: dict[str, int] = {}
    for line in match.group(1).splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        member = _MEMBER.match(line)
        assert member, f"line of the Layout enum not understood: {line!r}"
        members[member.group(1)] = int(member.group(2), 0)
    return members


def drift(members: dict[str, int]) -> list[str]:
    """Every member missing from records/format.py or with another value there."""
    problems = []
    for name, value in members.items():
        if not hasattr(fmt, name):
            problems.append(f"{name} = {value} is not defined in records/format.py")
        elif getattr(fmt, name) != value:
            problems.append(f"{name} = {value} in _accel.pyx, {getattr(fmt, name)} in format.py")
    return problems


def test_every_layout_constant_of_the_pyx_equals_format_py():
    members = pyx_layout_constants(PYX.read_text(encoding="utf-8"))
    assert {"LOG_OVERHEAD", "RECORD_BATCH_OVERHEAD", "MIN_RECORD_BODY"} <= members.keys()
    assert drift(members) == []


def test_a_drifted_or_unknown_constant_is_reported():
    source = PYX.read_text(encoding="utf-8")
    drifted = pyx_layout_constants(
        source.replace("    MIN_RECORD_BODY = 6\n", "    MIN_RECORD_BODY = 7\n")
    )
    assert drift(drifted) == ["MIN_RECORD_BODY = 7 in _accel.pyx, 6 in format.py"]
    added = pyx_layout_constants(
        source.replace("cdef enum Layout:\n", "cdef enum Layout:\n    X = 1\n")
    )
    assert drift(added) == ["X = 1 is not defined in records/format.py"]


def test_named_v2_offsets_match_the_header_struct_the_reference_unpacks():
    # The pure decoder unpacks V2_PREFIX / V2_HEADER; the accelerated one reads at named offsets.
    assert fmt.V2_PREFIX.size == fmt.ATTRIBUTES_OFFSET
    assert struct.calcsize(">qii") == fmt.MAGIC_OFFSET
    assert struct.calcsize(">qiib") == fmt.CRC_OFFSET
    fields = fmt.V2_HEADER.format.lstrip(">")
    at = [fmt.ATTRIBUTES_OFFSET + struct.calcsize(">" + fields[:i]) for i in range(len(fields))]
    assert at[1:5] == [
        fmt.LAST_OFFSET_DELTA_OFFSET,
        fmt.BASE_TIMESTAMP_OFFSET,
        fmt.MAX_TIMESTAMP_OFFSET,
        fmt.PRODUCER_ID_OFFSET,
    ]
    assert at[-1] == fmt.RECORDS_COUNT_OFFSET
    assert fmt.ATTRIBUTES_OFFSET + fmt.V2_HEADER.size == fmt.RECORD_BATCH_OVERHEAD
