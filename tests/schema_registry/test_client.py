"""spark_kafka_py.schema_registry against a real registry (Apicurio, the ``schema_registry``
fixture), and the faults it does not make staged by a hand-written server (fake_registry.py)."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Callable

import pytest
import requests

from spark_kafka_py.client.retry import Backoff, Retries
from spark_kafka_py.errors import KafkaError, KafkaTimeoutError, SchemaRegistryError
from spark_kafka_py.schema_registry import (
    LruCache,
    Schema,
    SchemaRegistryClient,
    parse_settings,
)
from tests.schema_registry.fake_registry import (
    answer,
    endless_chunked,
    fake_registry,
    sequence,
    slow,
    trickle,
)

ORDER_V1 = json.dumps(
    {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}
)
#: Adds a field with a default: BACKWARD compatible with v1.
ORDER_V2 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "amount", "type": "double", "default": 0.0},
        ],
    }
)
#: Changes a field's type: not BACKWARD compatible with v1.
ORDER_BAD = json.dumps(
    {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}
)
SECRET = "s3cr3t-pw"


def _subject() -> str:
    return f"orders-{uuid.uuid4().hex[:8]}-value"


def _client(url: str, **options: str) -> SchemaRegistryClient:
    """A client with a cache of its own (tests must not see each other's schemas)."""
    return SchemaRegistryClient(
        parse_settings({"schema.registry.url": url, **options}), cache=LruCache()
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _no_secret(exc: SchemaRegistryError, client: SchemaRegistryClient) -> None:
    for text in (str(exc), exc.url, repr(exc), repr(client), repr(client.settings)):
        assert SECRET not in text
        assert "user:" not in text


# ------------------------------------------------------------------------- the real registry


@pytest.mark.integration
def test_register_then_fetch_by_id_latest_version_and_lookup(schema_registry: str) -> None:
    client = _client(schema_registry)
    subject = _subject()
    schema_id = client.register(subject, ORDER_V1)
    assert client.register(subject, ORDER_V1) == schema_id  # the same schema: the same id
    fetched = client.schema_by_id(schema_id)
    assert json.loads(fetched.schema_str) == json.loads(ORDER_V1)
    assert fetched.schema_type == "AVRO"
    latest = client.latest(subject)
    assert (latest.subject, latest.version, latest.schema_id) == (subject, 1, schema_id)
    assert client.version(subject, 1) == latest
    found = client.lookup(subject, ORDER_V1)  # Apicurio echoes the text asked about
    assert (found.subject, found.version, found.schema_id) == (subject, 1, schema_id)
    assert client.versions(subject) == [1]
    assert subject in client.subjects()

    v2 = client.register(subject, ORDER_V2)
    assert v2 != schema_id
    assert client.latest(subject).version == 2
    assert client.versions(subject) == [1, 2]


@pytest.mark.integration
def test_unknown_id_subject_and_version_are_typed_errors(schema_registry: str) -> None:
    client = _client(schema_registry)
    with pytest.raises(SchemaRegistryError) as unknown_id:
        client.schema_by_id(2_000_000_000)
    assert isinstance(unknown_id.value, KafkaError)
    assert (unknown_id.value.status, unknown_id.value.error_code) == (404, 40403)
    assert not unknown_id.value.retriable
    assert "/schemas/ids/2000000000" in str(unknown_id.value)
    assert "HTTP 404, error_code 40403" in str(unknown_id.value)

    with pytest.raises(SchemaRegistryError) as unknown_subject:
        client.latest("no-such-subject-" + uuid.uuid4().hex)
    assert (unknown_subject.value.status, unknown_subject.value.error_code) == (404, 40401)

    subject = _subject()
    client.register(subject, ORDER_V1)
    with pytest.raises(SchemaRegistryError) as unknown_version:
        client.version(subject, 7)
    assert unknown_version.value.status == 404


@pytest.mark.integration
def test_guid_lookup_is_a_typed_404_on_apicurio(schema_registry: str) -> None:
    """Apicurio 3.3 serves no ``/schemas/guids/{guid}`` (Confluent Platform 8 does): the client
    says so as a typed error. The answer's parsing is checked on the staged server below."""
    client = _client(schema_registry)
    with pytest.raises(SchemaRegistryError) as err:
        client.schema_by_guid(str(uuid.uuid4()))
    assert err.value.status == 404
    with pytest.raises(ValueError, match="UUID"):
        client.schema_by_guid("../../config")


@pytest.mark.integration
def test_compatibility_set_per_subject_refuses_an_incompatible_schema(
    schema_registry: str,
) -> None:
    client = _client(schema_registry)
    subject = _subject()
    client.register(subject, ORDER_V1)
    assert client.set_compatibility("BACKWARD", subject) == "BACKWARD"
    assert client.compatibility(subject) == "BACKWARD"
    assert client.compatibility() in ("NONE", "BACKWARD")  # Apicurio's default is NONE
    client.register(subject, ORDER_V2)
    with pytest.raises(SchemaRegistryError) as err:
        client.register(subject, ORDER_BAD)
    assert err.value.status == 409
    assert not err.value.retriable


@pytest.mark.integration
@pytest.mark.parametrize("source", ["URL", "USER_INFO"])
def test_credentials_never_appear_in_errors(schema_registry: str, source: str) -> None:
    """Apicurio here does not check credentials; the client sends them and must not show
    them anywhere: not in the message, the error's URL, the client's or settings' repr."""
    if source == "URL":
        url = schema_registry.replace("http://", f"http://user:{SECRET}@")
        client = _client(url, **{"basic.auth.credentials.source": "URL"})
    else:
        client = _client(
            schema_registry, **{"schema.registry.basic.auth.user.info": f"user:{SECRET}"}
        )
    assert client.settings.username == "user"
    schema_id = client.register(_subject(), ORDER_V1)  # the credentials do not get in the way
    assert client.schema_by_id(schema_id).schema_str
    with pytest.raises(SchemaRegistryError) as err:
        client.schema_by_id(2_000_000_001)
    _no_secret(err.value, client)


@pytest.mark.integration
def test_delete_subject_soft_then_permanent(schema_registry: str) -> None:
    client = _client(schema_registry)
    subject, other = _subject(), _subject()
    client.register(subject, ORDER_V1)
    client.register(other, ORDER_V1)
    assert client.delete_subject(subject) == [1]
    assert subject not in client.subjects()
    # already soft-deleted: the permanent delete still goes through
    assert client.delete_subject(subject, permanent=True) == [1]
    assert client.delete_subject(other, permanent=True) == [1]
    with pytest.raises(SchemaRegistryError) as err:
        client.latest(other)
    assert err.value.error_code == 40401


@pytest.mark.integration
def test_schemas_by_id_are_cached_per_process(schema_registry: str) -> None:
    cache: LruCache[Schema] = LruCache()
    settings = parse_settings({"schema.registry.url": schema_registry})
    client = SchemaRegistryClient(settings, cache=cache)
    schema_id = client.register(_subject(), ORDER_V1)
    cache.clear()
    first = client.schema_by_id(schema_id)
    assert len(cache) == 1

    offline = SchemaRegistryClient(settings, cache=cache)

    def refuse(*args: object, **kwargs: object) -> requests.Response:
        raise AssertionError("the cache should have answered")

    offline._session.request = refuse  # type: ignore[method-assign]
    assert offline.schema_by_id(schema_id) is first


@pytest.mark.integration
def test_a_dead_url_fails_over_to_the_next(schema_registry: str) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"
    client = _client(f"{dead},{schema_registry}")
    schema_id = client.register(_subject(), ORDER_V1)
    assert client.schema_by_id(schema_id).schema_str


# -------------------------------------------------------------------- faults, staged by hand


def test_unreachable_registry_is_a_retriable_typed_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    client = _client(url)
    with pytest.raises(SchemaRegistryError) as err:
        client.schema_by_id(1)
    assert not isinstance(err.value, requests.RequestException)
    assert err.value.retriable and err.value.status is None
    assert url in str(err.value) and "cannot reach" in str(err.value)


def test_a_500_is_retriable_and_names_status_and_error_code() -> None:
    routes = {
        "GET /schemas/ids/1": lambda h: answer(h, 500, {"error_code": 50001, "message": "store"})
    }
    with fake_registry(routes) as fake:
        client = _client(fake.url)
        with pytest.raises(SchemaRegistryError) as err:
            client.schema_by_id(1)
    assert (err.value.status, err.value.error_code, err.value.retriable) == (500, 50001, True)
    assert "HTTP 500, error_code 50001: store" in str(err.value)


def test_retries_through_the_projects_policy_until_the_registry_mends() -> None:
    failing = lambda h: answer(h, 503, {"error_code": 50003, "message": "busy"})  # noqa: E731
    ok = lambda h: answer(h, 200, {"schema": '"string"'})  # noqa: E731
    routes = {"GET /schemas/ids/5": sequence(failing, failing, ok)}
    with fake_registry(routes) as fake:
        settings = parse_settings({"schema.registry.url": fake.url})
        client = SchemaRegistryClient(
            settings,
            cache=LruCache(),
            retries=lambda what: Retries(
                what,
                10_000,
                backoff=Backoff(10, 50),
                timeout_option="schema.registry.retry.timeout.ms",
            ),
        )
        assert client.schema_by_id(5).schema_str == '"string"'
        assert fake.hits["GET /schemas/ids/5"] == 3


def test_retries_end_at_their_deadline_with_the_last_error() -> None:
    failing = lambda h: answer(h, 503, {"error_code": 50003, "message": "busy"})  # noqa: E731
    with fake_registry({"GET /schemas/ids/6": failing}) as fake:
        client = SchemaRegistryClient(
            parse_settings({"schema.registry.url": fake.url}),
            cache=LruCache(),
            retries=lambda what: Retries(what, 200, backoff=Backoff(10, 20)),
        )
        with pytest.raises(KafkaTimeoutError) as err:
            client.schema_by_id(6)
    assert isinstance(err.value.__cause__, SchemaRegistryError)


def test_a_4xx_is_not_retried() -> None:
    routes = {"GET /schemas/ids/7": lambda h: answer(h, 422, {"error_code": 42201, "message": "x"})}
    with fake_registry(routes) as fake:
        client = SchemaRegistryClient(
            parse_settings({"schema.registry.url": fake.url}),
            cache=LruCache(),
            retries=lambda what: Retries(what, 5_000),
        )
        with pytest.raises(SchemaRegistryError):
            client.schema_by_id(7)
        assert fake.hits["GET /schemas/ids/7"] == 1


def test_an_answer_slower_than_the_timeout_is_cut_off() -> None:
    routes = {"GET /schemas/ids/1": slow(3.0, lambda h: answer(h, 200, {"schema": "{}"}))}
    with fake_registry(routes) as fake:
        client = _client(fake.url, **{"schema.registry.request.timeout.ms": "300"})
        started = time.monotonic()
        with pytest.raises(SchemaRegistryError) as err:
            client.schema_by_id(1)
        elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert err.value.retriable
    assert "300 ms" in str(err.value) and "schema.registry.request.timeout.ms" in str(err.value)


def test_a_trickling_answer_is_cut_off_at_the_deadline() -> None:
    with fake_registry({"GET /schemas/ids/1": trickle(0.1, 200)}) as fake:
        client = _client(fake.url, **{"schema.registry.request.timeout.ms": "500"})
        started = time.monotonic()
        with pytest.raises(SchemaRegistryError) as err:
            client.schema_by_id(1)
        elapsed = time.monotonic() - started
    assert elapsed < 3.0  # the whole body would take 20 s
    assert err.value.retriable and "took longer than 500 ms" in str(err.value)


def test_a_declared_huge_body_is_refused_before_reading_it() -> None:
    big = json.dumps({"schema": "x" * 5_000}).encode()
    with fake_registry({"GET /schemas/ids/1": lambda h: answer(h, 200, big)}) as fake:
        client = _client(fake.url, **{"schema.registry.max.response.bytes": "4096"})
        with pytest.raises(SchemaRegistryError) as err:
            client.schema_by_id(1)
    assert "exceeds schema.registry.max.response.bytes=4096" in str(err.value)
    assert not err.value.retriable


def test_an_endless_chunked_body_is_cut_at_the_bound() -> None:
    with fake_registry({"GET /subjects": endless_chunked}) as fake:
        client = _client(fake.url, **{"schema.registry.max.response.bytes": "1048576"})
        with pytest.raises(SchemaRegistryError) as err:
            client.subjects()
    assert "more than 1048576 bytes" in str(err.value)


@pytest.mark.parametrize(
    ("route", "needle"),
    [
        (lambda h: answer(h, 200, b"<html>not json"), "not JSON"),
        (lambda h: answer(h, 200, {"schema": 42}), 'a "schema" string'),
        (lambda h: answer(h, 200, b"[" * 100_000 + b"]" * 100_000), "not JSON"),
        (lambda h: answer(h, 200, b"\x1f\x8b", Content_Encoding="gzip"), "not asked for"),
        (lambda h: answer(h, 302, b"", Location="http://u:p@elsewhere/x"), "not followed"),
    ],
    ids=["html", "wrong-type", "deep-json", "gzip", "redirect"],
)
def test_hostile_answers_are_typed_errors(route: Callable[..., None], needle: str) -> None:
    with fake_registry({"GET /schemas/ids/1": route}) as fake:
        client = _client(fake.url)
        with pytest.raises(SchemaRegistryError) as err:
            client.schema_by_id(1)
    assert needle in str(err.value)
    assert "u:p@" not in str(err.value)


def test_a_401_names_the_url_without_the_credentials() -> None:
    routes = {
        "GET /schemas/ids/1": lambda h: answer(
            h, 401, {"error_code": 40101, "message": "Unauthorized"}
        )
    }
    with fake_registry(routes) as fake:
        url = fake.url.replace("http://", f"http://user:{SECRET}@")
        client = _client(url)
        with pytest.raises(SchemaRegistryError) as err:
            client.schema_by_id(1)
        assert fake.auth[-1] is not None and fake.auth[-1].startswith("Basic ")
    assert (err.value.status, err.value.error_code) == (401, 40101)
    assert fake.url in str(err.value)
    _no_secret(err.value, client)


def test_a_guid_answer_is_parsed_and_cached() -> None:
    guid = str(uuid.uuid4())
    body = {"schema": '"string"', "schemaType": "AVRO", "guid": guid, "references": []}
    with fake_registry({f"GET /schemas/guids/{guid}": lambda h: answer(h, 200, body)}) as fake:
        client = _client(fake.url)
        schema = client.schema_by_guid(guid.upper())
        assert client.schema_by_guid(guid) is schema
        assert fake.hits[f"GET /schemas/guids/{guid}"] == 1
    assert (schema.schema_str, schema.guid) == ('"string"', guid)
