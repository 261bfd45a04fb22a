"""DescribeConfigs (API key 32): golden bytes written out by hand from Kafka's specs
(``DescribeConfigsRequest.json`` / ``DescribeConfigsResponse.json``, versions 1-4, flexible
4+), fully populated round trips at every supported version, the encoder's refusals, and Kafka's
own generated classes reading our bytes. (Spec conformance is checked by ``test_specs.py``,
random round trips and fuzzing by ``test_messages.py``/``test_fuzz.py``, through
``REQUEST_TYPES``.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_kafka_py.errors import LocalProtocolError
from spark_kafka_py.protocol import error_codes
from spark_kafka_py.protocol.messages import REQUEST_TYPES, RESPONSE_TYPES
from spark_kafka_py.protocol.messages.describe_configs import (
    CONFIG_SOURCE_DEFAULT_CONFIG,
    CONFIG_SOURCE_TOPIC_CONFIG,
    DESCRIBE_CONFIGS_KEY,
    RESOURCE_TYPE_TOPIC,
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)
from spark_kafka_py.protocol.schema import decode, encode

from .reencode import assert_kafka_reencodes, assert_round_trip


def hexb(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def test_registered_with_its_api_key_and_versions() -> None:
    assert DESCRIBE_CONFIGS_KEY == 32
    assert REQUEST_TYPES[32] is DescribeConfigsRequest
    assert RESPONSE_TYPES[32] is DescribeConfigsResponse
    assert DescribeConfigsRequest.response_type is DescribeConfigsResponse
    for cls in (DescribeConfigsRequest, DescribeConfigsResponse):
        assert (cls.API_KEY, cls.MIN_VERSION, cls.MAX_VERSION) == (32, 1, 4)
        assert [v for v in range(1, 5) if cls.is_flexible(v)] == [4]


# -- golden bytes ----------------------------------------------------------------------------


def test_request_golden_v1_all_keys() -> None:
    req = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPE_TOPIC, resource_name="t", configuration_keys=None
            ),
        ),
    )
    data = encode(req, 1)
    # [1 resource] int32 1: resource_type int8 2, resource_name int16 length 1 "t",
    # configuration_keys null (int32 -1); include_synonyms false
    assert data == hexb("00000001 02 0001 74 ffffffff 00")
    assert decode(DescribeConfigsRequest, data, 1) == req


def test_request_golden_v4_flexible() -> None:
    req = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPE_TOPIC, resource_name="t", configuration_keys=("x",)
            ),
        ),
        include_synonyms=True,
    )
    data = encode(req, 4)
    # compact array of 1 resource (uvarint 1+1): type 2, name compact "t" (2, 0x74),
    # keys compact array of 1 (2) holding compact "x" (2, 0x78), the resource's empty tagged
    # fields (0); include_synonyms true, include_documentation false, empty tagged fields
    assert data == hexb("02 02 0274 02 0278 00 01 00 00")
    assert decode(DescribeConfigsRequest, data, 4) == req


def test_response_golden_v1_error_and_config() -> None:
    resp = DescribeConfigsResponse(
        throttle_time_ms=0,
        results=(
            DescribeConfigsResult(
                error_code=error_codes.UNKNOWN_TOPIC_OR_PARTITION.code,
                error_message="m",
                resource_type=RESOURCE_TYPE_TOPIC,
                resource_name="t",
                configs=(),
            ),
            DescribeConfigsResult(
                error_code=0,
                error_message=None,
                resource_type=RESOURCE_TYPE_TOPIC,
                resource_name="u",
                configs=(
                    DescribeConfigsResourceResult(
                        name="x",
                        value=None,
                        read_only=True,
                        config_source=CONFIG_SOURCE_DEFAULT_CONFIG,
                        is_sensitive=False,
                        synonyms=(
                            DescribeConfigsSynonym(
                                name="x", value="y", source=CONFIG_SOURCE_DEFAULT_CONFIG
                            ),
                        ),
                    ),
                ),
            ),
        ),
    )
    data = encode(resp, 1)
    assert data == hexb(
        "00000000"  # throttle_time_ms
        "00000002"  # [2 results]
        # error 3, message "m", type 2, name "t", [0 configs]
        "0003 0001 6d 02 0001 74 00000000"
        # no error, message null, type 2, name "u", [1 config]
        "0000 ffff 02 0001 75 00000001"
        # name "x", value null, read_only, config_source 5, not sensitive,
        # [1 synonym] name "x", value "y", source 5
        "0001 78 ffff 01 05 00 00000001 0001 78 0001 79 05"
    )
    assert decode(DescribeConfigsResponse, data, 1) == resp


def test_response_golden_v4_flexible() -> None:
    resp = DescribeConfigsResponse(
        throttle_time_ms=7,
        results=(
            DescribeConfigsResult(
                resource_type=RESOURCE_TYPE_TOPIC,
                resource_name="t",
                error_message=None,
                configs=(
                    DescribeConfigsResourceResult(
                        name="x",
                        value="y",
                        config_source=CONFIG_SOURCE_TOPIC_CONFIG,
                        config_type=2,
                        documentation=None,
                    ),
                ),
            ),
        ),
    )
    data = encode(resp, 4)
    assert data == hexb(
        "00000007"  # throttle_time_ms
        "02"  # compact array of 1 result
        "0000 00 02 0274"  # no error, message null (0), type 2, name compact "t"
        "02"  # compact array of 1 config
        # name "x", value "y", not read-only, source 1, not sensitive, synonyms empty (1),
        # config_type 2 (STRING), documentation null (0), tagged fields
        "0278 0279 00 01 00 01 02 00 00"
        "00"  # the result's tagged fields
        "00"  # the response's tagged fields
    )
    assert decode(DescribeConfigsResponse, data, 4) == resp


# -- refusals and absent fields -------------------------------------------------------------


def test_include_documentation_needs_v3() -> None:
    req = DescribeConfigsRequest(include_documentation=True)
    with pytest.raises(LocalProtocolError, match="include_documentation"):
        encode(req, 2)  # not ignorable
    assert decode(DescribeConfigsRequest, encode(req, 3), 3) == req


def test_response_fields_of_v3_are_dropped_before_it() -> None:
    # config_type and documentation (v3+) are ignorable: dropped at v2, read back as defaults
    result = DescribeConfigsResourceResult(name="x", config_type=1, documentation="doc")
    resp = DescribeConfigsResponse(
        results=(DescribeConfigsResult(resource_name="t", configs=(result,)),)
    )
    back = decode(DescribeConfigsResponse, encode(resp, 2), 2)
    assert back.results[0].configs[0] == DescribeConfigsResourceResult(name="x")
    assert back.results[0].configs[0].config_type == 0
    assert back.results[0].configs[0].documentation == ""


def test_versions_outside_the_supported_range_raise() -> None:
    for version in (0, 5):
        with pytest.raises(LocalProtocolError, match="not supported"):
            encode(DescribeConfigsRequest(), version)
        with pytest.raises(LocalProtocolError, match="not supported"):
            decode(DescribeConfigsResponse, b"", version)


# -- fully populated round trips at every supported version ---------------------------------

FULL = [
    DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPE_TOPIC,
                resource_name="events",
                configuration_keys=("message.timestamp.type", "retention.ms"),
            ),
            DescribeConfigsResource(
                resource_type=RESOURCE_TYPE_TOPIC, resource_name="other", configuration_keys=None
            ),
        ),
        include_synonyms=True,
        include_documentation=True,
    ),
    DescribeConfigsResponse(
        throttle_time_ms=12,
        results=(
            DescribeConfigsResult(
                error_code=0,
                error_message=None,
                resource_type=RESOURCE_TYPE_TOPIC,
                resource_name="events",
                configs=(
                    DescribeConfigsResourceResult(
                        name="message.timestamp.type",
                        value="LogAppendTime",
                        read_only=False,
                        config_source=CONFIG_SOURCE_TOPIC_CONFIG,
                        is_sensitive=False,
                        synonyms=(
                            DescribeConfigsSynonym(
                                name="message.timestamp.type",
                                value="LogAppendTime",
                                source=CONFIG_SOURCE_TOPIC_CONFIG,
                            ),
                            DescribeConfigsSynonym(
                                name="log.message.timestamp.type",
                                value="CreateTime",
                                source=CONFIG_SOURCE_DEFAULT_CONFIG,
                            ),
                        ),
                        config_type=2,
                        documentation="Define whether the timestamp in the message is ...",
                    ),
                    DescribeConfigsResourceResult(
                        name="sasl.jaas.config", value=None, is_sensitive=True, documentation=None
                    ),
                ),
            ),
            DescribeConfigsResult(
                error_code=error_codes.UNKNOWN_TOPIC_OR_PARTITION.code,
                error_message="Topic 'other' does not exist.",
                resource_type=RESOURCE_TYPE_TOPIC,
                resource_name="other",
            ),
        ),
    ),
]
FULL_CASES = [(message, version) for message in FULL for version in range(1, 5)]


@pytest.mark.parametrize(
    ("message", "version"),
    FULL_CASES,
    ids=[f"{type(m).__name__}-v{v}" for m, v in FULL_CASES],
)
def test_full_round_trip(message: object, version: int) -> None:
    # fields the version lacks are reset first (include_documentation is not ignorable)
    assert_round_trip(message, version)


# -- Kafka's own generated classes read our bytes and write back the same bytes --------------


def test_kafka_reads_and_rewrites_our_bytes(kafka_jar_paths: list[Path]) -> None:
    # Kafka's DescribeConfigsRequestData / DescribeConfigsResponseData consume all our bytes
    # at each version and write exactly our bytes again.
    assert_kafka_reencodes(
        FULL_CASES,
        kafka_jar_paths,
    )
