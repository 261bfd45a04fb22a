"""``valueFormat=protobuf`` / ``keyFormat=protobuf`` options, checked without a broker or Spark:
what ``parse_payload_options`` accepts and refuses, each refusal a ``ConfigError`` naming the
option; then ``resolve_read``'s Spark type (spark-protobuf's mapping, written out) and
``decode_column`` on plain messages under FAILFAST and PERMISSIVE. Descriptor sets are compiled
by protoc itself (PyPI's grpcio-tools) and messages serialized by the protobuf package, not by
our code. Rows read through a broker are compared in
``tests/integration/test_protobuf_source.py``."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from spark_kafka_py.errors import ConfigError, RecordFormatError
from spark_kafka_py.spark.payload import (
    PayloadOptions,
    decode_column,
    parse_payload_options,
    resolve_read,
)

PROTO = """
syntax = "proto3";
package opts.v1;
message Order { string id = 1; int64 qty = 2; }
message Other { bool ok = 1; }
"""


@pytest.fixture(scope="module")
def desc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``protoc --include_imports --descriptor_set_out`` of :data:`PROTO`."""
    root = tmp_path_factory.mktemp("proto")
    (root / "order.proto").write_text(PROTO, encoding="utf-8")
    out = root / "order.desc"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{root}",
            f"--descriptor_set_out={out}",
            "--include_imports",
            "order.proto",
        ],
        cwd=root,
        check=True,
    )
    return out


def _parse(*, writing: bool = False, **opts: str) -> PayloadOptions:
    return parse_payload_options({k.lower(): v for k, v in opts.items()}, writing=writing)


def _refused(match: str, *, writing: bool = False, **opts: str) -> str:
    with pytest.raises(ConfigError, match=match) as info:
        _parse(writing=writing, **opts)
    return str(info.value)


def test_descriptor_file_and_message(desc_file: Path) -> None:
    options = _parse(
        valueFormat="protobuf", messageName="opts.v1.Order", descFilePath=str(desc_file)
    )
    col = options.value
    assert col is not None and col.format == "protobuf"
    assert col.message_name == "opts.v1.Order"
    assert col.descriptor_set == desc_file.read_bytes()
    assert col.protobuf is not None and col.protobuf.mode == "FAILFAST"
    assert not options.permissive_for(col)
    assert col.schema_option == "descFilePath"


def test_inline_base64_set_and_spark_protobuf_options(desc_file: Path) -> None:
    encoded = base64.b64encode(desc_file.read_bytes()).decode()
    options = _parse(
        keyFormat="protobuf",
        **{
            "key.messageName": "Other",  # without the package, as spark-protobuf allows
            "key.descriptorSet": encoded,
            "mode": "PERMISSIVE",
            "enums.as.ints": "true",
            "emit.default.values": "TRUE",
            "upcast.unsigned.ints": "true",
            "unwrap.primitive.wrapper.types": "true",
            "retain.empty.message.types": "true",
            "recursive.fields.max.depth": "3",
        },
    )
    col = options.key
    assert col is not None and options.value is None
    assert col.descriptor_set == desc_file.read_bytes()
    pb = col.protobuf
    assert pb is not None
    assert (pb.mode, pb.enums_as_ints, pb.emit_default_values, pb.upcast_unsigned_ints) == (
        "PERMISSIVE",
        True,
        True,
        True,
    )
    assert pb.unwrap_primitive_wrapper_types and pb.retain_empty_message_types
    assert pb.recursive_fields_max_depth == 3
    assert options.permissive_for(col)
    assert col.schema_option == "key.descriptorSet"  # messages name the option given


def test_registry_needs_no_message_name_nor_descriptor() -> None:
    options = _parse(valueFormat="protobuf", **{"schema.registry.url": "http://127.0.0.1:1"})
    col = options.value
    assert col is not None and col.message_name is None and col.descriptor_set is None
    pinned = _parse(
        valueFormat="protobuf",
        messageName="opts.v1.Other",
        **{"schema.registry.url": "http://127.0.0.1:1", "value.schema.version": "2"},
    )
    assert pinned.value is not None and pinned.value.schema_version == 2


def test_write_side_parses_the_same_column(desc_file: Path) -> None:
    options = _parse(
        writing=True,
        valueFormat="protobuf",
        messageName="opts.v1.Order",
        descFilePath=str(desc_file),
    )
    assert options.value is not None and options.value.message_name == "opts.v1.Order"
    assert options.value.descriptor_set == desc_file.read_bytes()


def test_missing_message_name_without_registry(desc_file: Path) -> None:
    _refused("'messageName'", valueFormat="protobuf", descFilePath=str(desc_file))
    _refused("'key.messageName'", keyFormat="protobuf", **{"key.descFilePath": str(desc_file)})


def test_missing_descriptor_without_registry() -> None:
    text = _refused("'descFilePath'", valueFormat="protobuf", messageName="opts.v1.Order")
    assert "descriptorSet" in text


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.desc"
    text = _refused(
        "'descFilePath'", valueFormat="protobuf", messageName="M", descFilePath=str(missing)
    )
    assert "nope.desc" in text


def test_not_a_descriptor_set(tmp_path: Path) -> None:
    junk = tmp_path / "junk.desc"
    junk.write_bytes(b"\xff\xff\xff\xff not a descriptor set")
    _refused(
        "'descFilePath'.*FileDescriptorSet",
        valueFormat="protobuf",
        messageName="M",
        descFilePath=str(junk),
    )


def test_bad_base64() -> None:
    _refused(
        "'descriptorSet' is not base64",
        valueFormat="protobuf",
        messageName="M",
        descriptorSet="not*base64!",
    )


def test_message_not_in_the_set(desc_file: Path) -> None:
    text = _refused(
        "'descFilePath'",
        valueFormat="protobuf",
        messageName="opts.v1.Missing",
        descFilePath=str(desc_file),
    )
    assert "opts.v1.Missing" in text
    encoded = base64.b64encode(desc_file.read_bytes()).decode()
    _refused(
        "'key.descriptorSet'.*Nope",
        keyFormat="protobuf",
        **{"key.messageName": "Nope", "key.descriptorSet": encoded},
    )


def test_both_file_and_inline(desc_file: Path) -> None:
    encoded = base64.b64encode(desc_file.read_bytes()).decode()
    _refused(
        "'descFilePath' and 'descriptorSet'",
        valueFormat="protobuf",
        messageName="opts.v1.Order",
        descFilePath=str(desc_file),
        descriptorSet=encoded,
    )


def test_descriptor_and_pinned_id(desc_file: Path) -> None:
    _refused(
        "'descFilePath' and 'value.schema.id'",
        valueFormat="protobuf",
        descFilePath=str(desc_file),
        **{"schema.registry.url": "http://127.0.0.1:1", "value.schema.id": "3"},
    )
    _refused(
        "'value.schema.id' needs 'schema.registry.url'",
        valueFormat="protobuf",
        messageName="opts.v1.Order",
        descFilePath=str(desc_file),
        **{"value.schema.id": "3"},
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [("avroSchema", '{"type": "string"}'), ("valueSchema", "a INT")],
)
def test_avro_and_json_options_refused_with_protobuf(
    desc_file: Path, name: str, value: str
) -> None:
    _refused(
        f"'{name}' is not for 'valueFormat'='protobuf'",
        valueFormat="protobuf",
        messageName="opts.v1.Order",
        descFilePath=str(desc_file),
        **{name: value},
    )


@pytest.mark.parametrize("fmt", ["avro", "json", "binary"])
def test_protobuf_options_refused_with_other_formats(desc_file: Path, fmt: str) -> None:
    extra = {"avro": {"avroSchema": '"string"'}, "json": {"valueSchema": "a INT"}, "binary": {}}
    _refused(
        "'messageName' needs 'valueFormat'='protobuf'",
        valueFormat=fmt,
        messageName="opts.v1.Order",
        **extra[fmt],
    )
    _refused(
        "'descFilePath' needs 'valueFormat'='protobuf'",
        valueFormat=fmt,
        descFilePath=str(desc_file),
        **extra[fmt],
    )
    _refused(
        "'enums.as.ints' is spark-protobuf's",
        valueFormat=fmt,
        **{"enums.as.ints": "true"},
        **extra[fmt],
    )


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("enums.as.ints", "yes", "'enums.as.ints' must be 'true' or 'false'"),
        ("recursive.fields.max.depth", "two", "'recursive.fields.max.depth' must be an integer"),
        ("recursive.fields.max.depth", "11", "'recursive.fields.max.depth' must be -1, 0"),
        ("recursive.fields.max.depth", "-2", "'recursive.fields.max.depth' must be at least -1"),
        ("mode", "LENIENT", "'mode' must be"),
    ],
)
def test_bad_spark_protobuf_option_values(
    desc_file: Path, name: str, value: str, match: str
) -> None:
    _refused(
        match,
        valueFormat="protobuf",
        messageName="opts.v1.Order",
        descFilePath=str(desc_file),
        **{name: value},
    )


# -- planning and decoding without a broker: resolve_read and decode_column ------------------

RECURSIVE = """
syntax = "proto3";
package rec;
message Node { string name = 1; Node next = 2; }
"""


def _compiled(tmp_path: Path, text: str, name: str) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    out = tmp_path / (name + ".desc")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{tmp_path}",
            f"--descriptor_set_out={out}",
            "--include_imports",
            name,
        ],
        cwd=tmp_path,
        check=True,
    )
    return out


def test_resolve_read_gives_spark_protobufs_struct(desc_file: Path) -> None:
    options = _parse(valueFormat="protobuf", messageName="Order", descFilePath=str(desc_file))
    reader = resolve_read(options, ["t"]).reader("value")
    assert reader is not None and reader.format == "protobuf" and reader.schema_id is None
    # string -> string, int64 -> long, both nullable (proto3 fields without `required`)
    assert reader.spark_type == {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "string", "nullable": True, "metadata": {}},
            {"name": "qty", "type": "long", "nullable": True, "metadata": {}},
        ],
    }
    assert reader.field().dataType.simpleString() == "struct<id:string,qty:bigint>"


def test_recursive_message_refused_unless_depth_given(tmp_path: Path) -> None:
    desc = _compiled(tmp_path, RECURSIVE, "rec.proto")
    refused = _parse(valueFormat="protobuf", messageName="rec.Node", descFilePath=str(desc))
    with pytest.raises(ConfigError, match=r"value's Protobuf message rec\.Node .*recursive"):
        resolve_read(refused, ["t"])
    kept = _parse(
        valueFormat="protobuf",
        messageName="rec.Node",
        descFilePath=str(desc),
        **{"recursive.fields.max.depth": "2"},
    )
    reader = resolve_read(kept, ["t"]).reader("value")
    assert reader is not None
    assert reader.field().dataType.simpleString() == (
        "struct<name:string,next:struct<name:string>>"
    )


def test_decode_column_plain_failfast_and_permissive(desc_file: Path) -> None:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fds = descriptor_pb2.FileDescriptorSet.FromString(desc_file.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    order = message_factory.GetMessageClass(pool.FindMessageTypeByName("opts.v1.Order"))
    values = pa.array(
        [
            order(id="a", qty=-3).SerializeToString(),
            b"\x0a\x05ab",
            None,
            order().SerializeToString(),
        ],
        pa.binary(),
    )
    strict = _parse(valueFormat="protobuf", messageName="Order", descFilePath=str(desc_file))
    reader = resolve_read(strict, ["t"]).reader("value")
    assert reader is not None
    with pytest.raises(RecordFormatError, match=r"value at row 1 as Protobuf opts\.v1\.Order"):
        decode_column(values, reader, strict, where=lambda i: f" at row {i}")
    lenient = _parse(
        valueFormat="protobuf",
        messageName="Order",
        descFilePath=str(desc_file),
        mode="PERMISSIVE",
    )
    got = decode_column(values, reader, lenient, where=lambda i: f" at row {i}").to_pylist()
    # an empty message: both proto3 scalars hold their zero, not on the wire: null
    assert got == [{"id": "a", "qty": -3}, None, None, {"id": None, "qty": None}]
