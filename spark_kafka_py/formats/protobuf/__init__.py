"""Protobuf: schemas as descriptors (:mod:`.descriptors`), messages -> Spark/Arrow types as
spark-protobuf maps them (:mod:`.types`), Confluent's Protobuf framing (:mod:`.framing`), and
payloads -> Arrow with ``from_protobuf``'s semantics (:mod:`.decoder`), Arrow -> payloads with
``to_protobuf``'s (:mod:`.encoder`). Sans-I/O."""

from __future__ import annotations

from spark_kafka_py.formats.protobuf.decoder import ProtobufDecoder, decode_protobuf
from spark_kafka_py.formats.protobuf.descriptors import (
    ProtobufSchema,
    compile_proto,
    load_descriptor_set,
    parse_base64_file_descriptor,
    parse_descriptor_set,
    parse_proto,
)
from spark_kafka_py.formats.protobuf.encoder import ProtobufEncoder, encode_protobuf
from spark_kafka_py.formats.protobuf.types import (
    ProtobufOptions,
    arrow_type,
    map_message,
    to_spark,
)

__all__ = [
    "ProtobufDecoder",
    "ProtobufEncoder",
    "ProtobufOptions",
    "ProtobufSchema",
    "arrow_type",
    "compile_proto",
    "decode_protobuf",
    "encode_protobuf",
    "load_descriptor_set",
    "map_message",
    "parse_base64_file_descriptor",
    "parse_descriptor_set",
    "parse_proto",
    "to_spark",
]
