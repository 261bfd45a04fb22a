"""``valueFormat=json`` / ``keyFormat=json`` options, checked without a broker or Spark:
what ``parse_payload_options`` accepts and refuses (naming the option), the mode defaults
(``PERMISSIVE`` for JSON as ``from_json``, ``FAILFAST`` for Avro as spark-avro), and
``from_json``'s nullable result type. Rows are compared with ``from_json`` in
``tests/integration/test_json_source.py``."""

from __future__ import annotations

import json

import pytest

from spark_kafka_py.errors import ConfigError
from spark_kafka_py.spark.payload import parse_payload_options, resolve_read


def _parse(**opts: str) -> object:
    return parse_payload_options({k.lower(): v for k, v in opts.items()})


def test_ddl_schema_is_read_nullable_as_from_json_returns_it() -> None:
    options = parse_payload_options(
        {"valueformat": "json", "valueschema": "a INT NOT NULL, s STRUCT<b: STRING NOT NULL>"}
    )
    assert options.value is not None and options.value.format == "json"
    read = resolve_read(options, ["t"])
    reader = read.reader("value")
    assert reader is not None
    assert reader.spark_type == {
        "type": "struct",
        "fields": [
            {"name": "a", "type": "integer", "nullable": True, "metadata": {}},
            {
                "name": "s",
                "type": {
                    "type": "struct",
                    "fields": [{"name": "b", "type": "string", "nullable": True, "metadata": {}}],
                },
                "nullable": True,
                "metadata": {},
            },
        ],
    }
    assert json.loads(reader.field().dataType.json()) == reader.spark_type


def test_mode_defaults_per_format() -> None:
    options = parse_payload_options(
        {
            "valueformat": "json",
            "valueschema": "a INT",
            "keyformat": "avro",
            "key.avroschema": '"string"',
        }
    )
    assert options.value is not None and options.key is not None
    assert options.permissive_for(options.value)
    assert not options.permissive_for(options.key)
    failfast = parse_payload_options(
        {"valueformat": "json", "valueschema": "a INT", "mode": "FAILFAST"}
    )
    assert failfast.value is not None and not failfast.permissive_for(failfast.value)


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        (
            {"valueFormat": "json"},
            "'valueFormat'='json' needs 'valueSchema' .* or 'schema.registry.url'",
        ),
        ({"keyFormat": "json"}, "'keyFormat'='json' needs 'keySchema'"),
        ({"valueFormat": "json", "valueSchema": "a INT,"}, "Option 'valueSchema' is not a Spark"),
        ({"valueFormat": "json", "valueSchema": "a MAP<INT, INT>"}, "not read from JSON here"),
        (
            {"valueFormat": "json", "valueSchema": "a INT", "avroSchema": '"string"'},
            "Option 'avroSchema' is for 'valueFormat'='avro'",
        ),
        ({"valueSchema": "a INT"}, "Option 'valueSchema' needs 'valueFormat'='json'"),
        (
            {"valueFormat": "avro", "avroSchema": '"string"', "valueSchema": "a INT"},
            "Option 'valueSchema' needs 'valueFormat'='json'",
        ),
        ({"valueFormat": "xml"}, "Option 'valueFormat' must be one of 'binary', 'avro', 'json'"),
        (
            {"valueFormat": "json", "value.schema.id": "3"},
            "Option 'value.schema.id' needs 'schema.registry.url'",
        ),
        (
            {
                "valueFormat": "json",
                "valueSchema": "a INT",
                "value.schema.version": "1",
                "schema.registry.url": "http://localhost:1",
            },
            "both choose the value's schema",
        ),
    ],
)
def test_refused_naming_the_option(opts: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _parse(**opts)


def test_a_write_needs_no_schema() -> None:
    options = parse_payload_options({"valueformat": "json"}, writing=True)
    assert options.value is not None and options.value.spark_schema is None
