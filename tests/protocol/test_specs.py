"""Our message schemas checked against Kafka's own message specs.

Kafka's JSON specs (``common/message/<Name>.json``, JSON with ``//`` comments) are read from
the kafka-clients jar at test time, never copied into this repository. For every request and
response class of :data:`~spark_kafka_py.protocol.messages.REQUEST_TYPES` and
:data:`~spark_kafka_py.protocol.messages.RESPONSE_TYPES`:

* ``apiKey`` and ``type``; ``validVersions`` and ``flexibleVersions`` equal to ours; our
  supported range inside the valid versions, and below a latest version marked unstable;
* every field, recursively (structs, arrays of structs, ``commonStructs``), matched by name
  (ours is the snake_case of Kafka's PascalCase): the wire type, ``versions``,
  ``nullableVersions``, ``tag`` and ``taggedVersions``, ``ignorable``, ``default``, and the
  order of the fields (the order on the wire);
* a spec attribute this test does not know is reported, so a new kind of fact gets looked at.

Version sets are compared over the message's valid versions (the only ones on the wire);
nullable and tagged versions over the versions in which the field exists.

Where our schema differs on purpose, the difference is listed in :data:`DEVIATIONS` with its
reason; an entry that no longer matches a difference fails too, so the list stays true.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from spark_kafka_py.protocol.messages import REQUEST_TYPES, RESPONSE_TYPES
from spark_kafka_py.protocol.primitives import ZERO_UUID
from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Array,
    FieldSpec,
    Request,
    Struct,
    Versions,
    kafka_message,
    kfield,
    struct_fields,
)

#: Where the specs live inside the kafka-clients jar.
SPEC_PREFIX = "common/message/"

#: Spec types that are not structs (``[]<type>`` is an array of one of these or of a struct).
PRIMITIVE_TYPES = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "float64",
        "string",
        "bytes",
        "records",
        "uuid",
    }
)
INTEGER_TYPES = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})

#: Field attributes this test compares.
CHECKED_FIELD_ATTRIBUTES = frozenset(
    {
        "name",
        "type",
        "versions",
        "nullableVersions",
        "tag",
        "taggedVersions",
        "ignorable",
        "default",
        "fields",
    }
)
#: Field attributes that do not change the bytes on the wire: documentation (``about``) and
#: hints to Kafka's Java generator (``entityType``, ``mapKey``: a keyed collection;
#: ``zeroCopy``: share the receive buffer).
UNCHECKED_FIELD_ATTRIBUTES = frozenset({"about", "entityType", "mapKey", "zeroCopy"})
#: Top-level attributes: compared, or (``listeners``, ``deprecatedVersions``) which processes
#: serve the API and which versions Kafka plans to remove, neither of which changes the wire.
MESSAGE_ATTRIBUTES = frozenset(
    {
        "apiKey",
        "type",
        "name",
        "validVersions",
        "flexibleVersions",
        "latestVersionUnstable",
        "fields",
        "commonStructs",
        "listeners",
        "deprecatedVersions",
    }
)

_BOTH_FORMS = (
    "the older and the newer form of the request are both marked ignorable, so that a caller "
    "fills both and sends whichever version was negotiated (the module docstring says so)"
)

#: Differences from Kafka's specs that our schemas make on purpose:
#: ``(path in Kafka's names, kind of difference) -> reason``.
DEVIATIONS: dict[tuple[str, str], str] = {
    ("ListOffsetsRequest.ReplicaId", "default"): (
        "-1 (a consumer) instead of the spec's implicit 0: any other value makes the broker "
        "answer as to follower 0 (log end offset instead of the high watermark)"
    ),
    ("FindCoordinatorRequest.Key", "ignorable"): _BOTH_FORMS,
    ("FindCoordinatorRequest.CoordinatorKeys", "ignorable"): _BOTH_FORMS,
    ("LeaveGroupRequest.MemberId", "ignorable"): _BOTH_FORMS,
    ("LeaveGroupRequest.Members", "ignorable"): _BOTH_FORMS,
    ("OffsetFetchRequest.GroupId", "ignorable"): _BOTH_FORMS,
    ("OffsetFetchRequest.Topics", "ignorable"): _BOTH_FORMS,
    ("OffsetFetchRequest.Groups", "ignorable"): _BOTH_FORMS,
}

MESSAGES: list[type] = sorted(
    {*REQUEST_TYPES.values(), *RESPONSE_TYPES.values()},
    key=lambda cls: (cls.API_KEY, cls.__name__),
)

#: One difference: (path in Kafka's names, kind, details).
Difference = tuple[str, str, str]

_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')


def strip_comments(text: str) -> str:
    """Kafka's spec text without its ``//`` comments (a ``//`` inside a string is kept)."""
    return _COMMENT_OR_STRING.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)


def load_specs(jar: Path) -> dict[str, dict[str, Any]]:
    """Every ``common/message/*.json`` of ``jar``, parsed, by file name without ``.json``."""
    specs = {}
    with zipfile.ZipFile(jar) as zf:
        for entry in zf.namelist():
            if entry.startswith(SPEC_PREFIX) and entry.endswith(".json"):
                text = zf.read(entry).decode("utf-8")
                specs[entry[len(SPEC_PREFIX) : -len(".json")]] = json.loads(strip_comments(text))
    return specs


def snake_case(name: str) -> str:
    """Our field name for a Kafka field name: ``MaxWaitMs`` -> ``max_wait_ms``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _in(versions: Versions, within: frozenset[int]) -> frozenset[int]:
    return frozenset(v for v in within if v in versions)


def _spec_versions(text: str | None, within: frozenset[int]) -> frozenset[int]:
    return _in(Versions(text or "none"), within)


def _text(versions: frozenset[int]) -> str:
    """A version set for messages: ``{4, 5, 6}`` -> ``"4-6"``."""
    if not versions:
        return "none"
    runs: list[list[int]] = []
    for v in sorted(versions):
        if runs and runs[-1][1] == v - 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


_NO_DEFAULT = object()


def spec_default(field: dict[str, Any]) -> Any:
    """The Python value of a spec field's default (explicit, or Kafka's default for its type);
    ``_NO_DEFAULT`` for structs, whose defaults are their fields' defaults."""
    kind = field["type"]
    given = field.get("default")
    text = None if given is None else str(given)
    if kind.startswith("[]"):
        return None if text == "null" else ()
    if kind in INTEGER_TYPES:
        return 0 if text is None else int(text, 0)
    if kind == "bool":
        return text is not None and text.lower() == "true"
    if kind == "float64":
        return 0.0 if text is None else float(text)
    if kind == "string":
        return None if text == "null" else (text or "")
    if kind == "bytes":
        return None if text == "null" else b""
    if kind == "records":
        return None
    if kind == "uuid":
        return ZERO_UUID if text is None else text  # no spec we use sets one
    return _NO_DEFAULT


def _compare_type(
    ours: FieldSpec,
    field: dict[str, Any],
    where: str,
    valid: frozenset[int],
    structs: dict[str, list[dict[str, Any]]],
    out: list[Difference],
) -> None:
    kind: str = field["type"]
    ktype = ours.type
    if kind.startswith("[]"):
        if not isinstance(ktype, Array):
            out.append((where, "type", f"ours {ktype.name}, spec {kind}"))
            return
        ktype = ktype.item
        kind = kind[2:]
    if kind in PRIMITIVE_TYPES:
        if isinstance(ktype, (Array, Struct)) or ktype.name != kind:
            out.append((where, "type", f"ours {ours.type.name}, spec {field['type']}"))
        return
    if not isinstance(ktype, Struct):
        out.append((where, "type", f"ours {ours.type.name}, spec {field['type']}"))
        return
    sub = field.get("fields", structs.get(kind))
    if sub is None:
        out.append((where, "type", f"struct {kind} is neither inline nor a commonStruct"))
        return
    compare_struct(ktype.cls, sub, where, valid, structs, out)


def _compare_field(
    ours: FieldSpec,
    field: dict[str, Any],
    where: str,
    valid: frozenset[int],
    structs: dict[str, list[dict[str, Any]]],
    out: list[Difference],
) -> None:
    for attribute in sorted(field.keys() - CHECKED_FIELD_ATTRIBUTES - UNCHECKED_FIELD_ATTRIBUTES):
        out.append((where, f"attribute {attribute}", repr(field[attribute])))
    present = _spec_versions(field["versions"], valid)
    if _in(ours.versions, valid) != present:
        out.append(
            (where, "versions", f"ours {_text(_in(ours.versions, valid))}, spec {_text(present)}")
        )
    nullable = _spec_versions(field.get("nullableVersions"), present)
    if _in(ours.nullable_versions, present) != nullable:
        ours_text = _text(_in(ours.nullable_versions, present))
        out.append((where, "nullableVersions", f"ours {ours_text}, spec {_text(nullable)}"))
    if ours.tag != field.get("tag"):
        out.append((where, "tag", f"ours {ours.tag}, spec {field.get('tag')}"))
    tagged = _spec_versions(field.get("taggedVersions"), present)
    if _in(ours.tagged_versions, present) != tagged:
        ours_text = _text(_in(ours.tagged_versions, present))
        out.append((where, "taggedVersions", f"ours {ours_text}, spec {_text(tagged)}"))
    ignorable = bool(field.get("ignorable", False))
    if ours.ignorable != ignorable:
        out.append((where, "ignorable", f"ours {ours.ignorable}, spec {ignorable}"))
    default = spec_default(field)
    if default is not _NO_DEFAULT and (
        ours.default != default or type(ours.default) is not type(default)
    ):
        out.append((where, "default", f"ours {ours.default!r}, spec {default!r}"))
    _compare_type(ours, field, where, valid, structs, out)


def compare_struct(
    cls: type,
    fields: list[dict[str, Any]],
    path: str,
    valid: frozenset[int],
    structs: dict[str, list[dict[str, Any]]],
    out: list[Difference],
) -> None:
    """Append to ``out`` every difference between ``cls``'s fields and the spec's ``fields``."""
    ours = {f.name: f for f in struct_fields(cls)}
    theirs = {snake_case(f["name"]): f for f in fields}
    for name, field in theirs.items():
        where = f"{path}.{field['name']}"
        if name in ours:
            _compare_field(ours[name], field, where, valid, structs, out)
        else:
            out.append((where, "missing", f"{field['type']}, versions {field['versions']}"))
    for name in ours.keys() - theirs.keys():
        out.append((f"{path}.{name}", "extra", "not in the spec"))
    order_ours = [n for n in ours if n in theirs]
    order_theirs = [n for n in theirs if n in ours]
    if order_ours != order_theirs:
        out.append((path, "order", f"ours {order_ours}, spec {order_theirs}"))


def differences(cls: type, spec: dict[str, Any]) -> list[Difference]:
    """Every difference between the message class ``cls`` and Kafka's ``spec`` of it."""
    name = spec["name"]
    out: list[Difference] = []
    for attribute in sorted(spec.keys() - MESSAGE_ATTRIBUTES):
        out.append((name, f"attribute {attribute}", repr(spec[attribute])))
    api_key, low, high = cls.API_KEY, cls.MIN_VERSION, cls.MAX_VERSION
    if api_key != spec["apiKey"]:
        out.append((name, "apiKey", f"ours {api_key}, spec {spec['apiKey']}"))
    kind = "request" if issubclass(cls, Request) else "response"
    if kind != spec["type"]:
        out.append((name, "type", f"ours {kind}, spec {spec['type']}"))
    valid_range = Versions(spec["validVersions"])
    ours_valid = (cls.VALID_VERSIONS.low, cls.VALID_VERSIONS.high)
    if ours_valid != (valid_range.low, valid_range.high):
        out.append((name, "validVersions", f"ours {ours_valid}, spec {spec['validVersions']}"))
    valid = frozenset(range(valid_range.low, valid_range.high + 1))
    flexible = _spec_versions(spec["flexibleVersions"], valid)
    if _in(cls.FLEXIBLE_VERSIONS, valid) != flexible:
        out.append(
            (
                name,
                "flexibleVersions",
                f"ours {cls.FLEXIBLE_VERSIONS.text}, spec {spec['flexibleVersions']}",
            )
        )
    if not valid_range.low <= low <= high <= valid_range.high:
        out.append((name, "supported", f"ours {low}-{high}, spec {spec['validVersions']}"))
    if spec.get("latestVersionUnstable") and high >= valid_range.high:
        out.append((name, "supported", f"ours {low}-{high} includes unstable v{valid_range.high}"))
    structs = {s["name"]: s["fields"] for s in spec.get("commonStructs", ())}
    compare_struct(cls, spec["fields"], name, valid, structs, out)
    return out


@pytest.fixture(scope="module")
def kafka_specs(kafka_clients_jar: Path) -> dict[str, dict[str, Any]]:
    specs = load_specs(kafka_clients_jar)
    assert "FetchRequest" in specs, f"no message specs under {SPEC_PREFIX} in {kafka_clients_jar}"
    return specs


@pytest.fixture(scope="module")
def all_differences(kafka_specs: dict[str, dict[str, Any]]) -> dict[str, list[Difference]]:
    found = {}
    for cls in MESSAGES:
        spec = kafka_specs.get(cls.__name__)
        assert spec is not None, f"no spec {SPEC_PREFIX}{cls.__name__}.json in the jar"
        found[cls.__name__] = differences(cls, spec)
    return found


def _report(found: list[Difference]) -> str:
    return "\n".join(f"{path} [{kind}]: {detail}" for path, kind, detail in found)


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda cls: cls.__name__)
def test_schema_matches_kafka_spec(cls: type, all_differences: dict[str, list[Difference]]):
    unexpected = [d for d in all_differences[cls.__name__] if (d[0], d[1]) not in DEVIATIONS]
    assert not unexpected, (
        f"{cls.__name__} differs from Kafka's spec (fix the schema, or list a deliberate "
        f"difference in DEVIATIONS with its reason):\n{_report(unexpected)}"
    )


def test_every_deviation_is_still_a_difference(all_differences: dict[str, list[Difference]]):
    found = {(path, kind) for diffs in all_differences.values() for path, kind, _ in diffs}
    stale = sorted(DEVIATIONS.keys() - found)
    assert not stale, f"DEVIATIONS entries that match no difference any more: {stale}"


def test_strip_comments_keeps_slashes_in_strings() -> None:
    text = '{ // c\n "a": "http://x", // d\n "b": "q\\"//" }'
    assert json.loads(strip_comments(text)) == {"a": "http://x", "b": 'q"//'}


def test_snake_case() -> None:
    assert snake_case("MaxWaitMs") == "max_wait_ms"
    assert snake_case("TopicId") == "topic_id"
    assert snake_case("ISRNodes") == "isr_nodes"
    assert snake_case("Name") == "name"


@kafka_message(api_key=12, valid="0-4", flexible="3+", supported=(0, 4))
class _WrongHeartbeatRequest(Request):
    """HeartbeatRequest with one mistake of each kind, to show that the check sees them."""

    group_id: str = kfield(STRING, "0+", ignorable=True)
    member_id: str = kfield(STRING, "0+")
    generation_id: int = kfield(INT16, "1+", default=-1)
    group_instance_id: str | None = kfield(STRING, "3+", tag=0)
    extra: tuple[int, ...] = kfield(Array(INT32), "0+")


def test_check_reports_each_kind_of_difference(kafka_specs: dict[str, dict[str, Any]]):
    found = {
        (path, kind)
        for path, kind, _ in differences(_WrongHeartbeatRequest, kafka_specs["HeartbeatRequest"])
    }
    assert found == {
        ("HeartbeatRequest", "flexibleVersions"),
        ("HeartbeatRequest.GroupId", "ignorable"),
        ("HeartbeatRequest.GenerationId", "type"),
        ("HeartbeatRequest.GenerationId", "versions"),
        ("HeartbeatRequest.GenerationId", "default"),
        ("HeartbeatRequest.GroupInstanceId", "nullableVersions"),
        ("HeartbeatRequest.GroupInstanceId", "tag"),
        ("HeartbeatRequest.GroupInstanceId", "taggedVersions"),
        ("HeartbeatRequest.GroupInstanceId", "default"),
        ("HeartbeatRequest.extra", "extra"),
        ("HeartbeatRequest", "order"),
    }
