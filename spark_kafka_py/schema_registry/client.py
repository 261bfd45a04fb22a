"""A client of the Confluent Schema Registry REST API, over ``requests``.

Sources: the Confluent Schema Registry API reference (``/schemas/ids/{id}``,
``/schemas/guids/{guid}``, ``/subjects/{subject}/versions[/{version}]``, ``POST
/subjects/{subject}`` for a lookup, ``/config[/{subject}]``; error bodies ``{"error_code": ...,
"message": ...}``; the content type ``application/vnd.schemaregistry.v1+json``), which
Apicurio Registry serves at ``/apis/ccompat/v7`` (Apicurio docs, "Confluent Schema Registry
compatibility API") and Karapace at its root.

The registry is a server we do not control. Every answer is read streamed, up to
``schema.registry.max.response.bytes``; one exchange may take ``schema.registry.request.timeout.ms``
(checked between reads: a server trickling bytes is cut off at most one socket read, itself
bounded by that timeout, after it); a redirect is not followed; a compressed answer is neither
asked for nor accepted. Every failure is a
:class:`~spark_kafka_py.errors.SchemaRegistryError` naming the method, the URL without
credentials, and the HTTP status and ``error_code`` when there was an answer.

Retries: a failure that may mend (no answer, a timeout, 408, 429, 5xx) is tried on the next URL
of ``schema.registry.url`` at once; when every URL failed, the operation is retried only
through the ``retries`` policy given to :class:`SchemaRegistryClient`: a factory of objects with
``after(exc)`` (raise, or pause and return), which is the project's one policy,
:class:`spark_kafka_py.client.retry.Retries` (KIP-580's backoff under a deadline). This package
sits beside ``client/`` and may not import it, so the layer above passes it in; without one,
an operation is one pass over the URLs. The layer above builds it from the settings::

    settings = parse_settings(options)
    client = SchemaRegistryClient(
        settings,
        retries=lambda what: Retries(
            what,
            settings.retry_timeout_ms,
            timeout_option="schema.registry.retry.timeout.ms",
            backoff=Backoff(settings.retry_backoff_ms, settings.retry_backoff_max_ms),
        ),
    )

Schemas by id and by GUID are kept in a bounded per-process cache
(:data:`PROCESS_CACHE`): a registry never changes what an id names.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.ssl_ import create_urllib3_context

from spark_kafka_py.errors import SchemaRegistryError
from spark_kafka_py.schema_registry.cache import LruCache
from spark_kafka_py.schema_registry.settings import RegistrySettings, parse_settings, redact_url

if TYPE_CHECKING:  # sockets and TLS belong to requests/urllib3 here (tests/test_layers.py)
    import ssl

__all__ = [
    "CONTENT_TYPE",
    "PROCESS_CACHE",
    "READ_CHUNK_BYTES",
    "RegisteredSchema",
    "RetryFactory",
    "RetryPolicy",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
]

#: The registry's media type (Confluent API reference, "Content types").
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

#: What we accept: the registry's type, then plain JSON.
ACCEPT = f"{CONTENT_TYPE}, application/vnd.schemaregistry+json; q=0.9, application/json; q=0.5"

#: Bytes asked of the socket at a time while reading an answer.
READ_CHUNK_BYTES = 64 * 1024

#: Characters of a registry's error message quoted in a :class:`SchemaRegistryError`.
MESSAGE_CHARS = 500

#: HTTP statuses that may mend when asked again (besides 5xx): Request Timeout, Too Many Requests.
RETRIABLE_STATUSES = frozenset({408, 429})

#: Confluent's ``error_code`` of a subject already soft-deleted (API reference, "Errors").
SUBJECT_SOFT_DELETED = 40404

#: The schema type when the registry names none (Confluent: absent means Avro).
AVRO = "AVRO"


@dataclass(frozen=True, slots=True)
class SchemaReference:
    """A reference from one schema to another registered one (Confluent's ``references``).

    Attributes:
        name: the name the referring schema uses (an Avro full name, a Protobuf import path).
        subject: the subject the referenced schema is registered under.
        version: its version in that subject.
    """

    name: str
    subject: str
    version: int


@dataclass(frozen=True, slots=True)
class Schema:
    """A schema as the registry holds it.

    Attributes:
        schema_str: the schema's text (for Avro, its JSON).
        schema_type: ``AVRO``, ``PROTOBUF`` or ``JSON``.
        references: the schemas it refers to.
        guid: the registry's GUID of it, when the registry gave one.
    """

    schema_str: str
    schema_type: str = AVRO
    references: tuple[SchemaReference, ...] = ()
    guid: str | None = None


@dataclass(frozen=True, slots=True)
class RegisteredSchema:
    """A schema under a subject: its id (global), its version (in the subject).

    Attributes:
        subject: the subject, e.g. ``orders-value``.
        version: the version in the subject (from 1).
        schema_id: the schema's id (the 4 bytes after the magic byte in Confluent's framing).
        schema: the schema.
    """

    subject: str
    version: int
    schema_id: int
    schema: Schema


class RetryPolicy(Protocol):
    """One operation's retries: :class:`spark_kafka_py.client.retry.Retries` fits."""

    def after(self, exc: BaseException) -> None:
        """Account the failure ``exc``: raise (not retriable, or out of time), or pause and
        return for one more try."""


#: Builds a fresh :class:`RetryPolicy` for one operation, given a description of it.
RetryFactory = Callable[[str], RetryPolicy]

#: The schemas of every client of this process, by (registry, ``id``/``guid``, value).
PROCESS_CACHE: LruCache[Schema] = LruCache()


class _TLSAdapter(HTTPAdapter):
    """An adapter whose connections use our :class:`ssl.SSLContext` (a password-protected
    client key and hostname checking as the settings say, which ``requests`` alone cannot)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = self._context
        if not self._context.check_hostname:
            kwargs["assert_hostname"] = False
        super().init_poolmanager(*args, **kwargs)


def _tls_context(settings: RegistrySettings) -> ssl.SSLContext:
    """The client TLS context of ``settings`` (urllib3's defaults: TLS 1.2+, certificates
    required), trusting the truststore's CAs, or the system's without one.

    Raises:
        SchemaRegistryError: a store cannot be read (the message names the file).
    """
    context = create_urllib3_context()
    try:
        if settings.truststore is not None:
            context.load_verify_locations(cafile=settings.truststore)
        else:
            context.load_default_certs()
        if settings.keystore is not None:
            context.load_cert_chain(settings.keystore, password=settings.key_password)
    except OSError as exc:  # ssl.SSLError is an OSError
        raise SchemaRegistryError(
            f"cannot load the schema registry's TLS stores "
            f"(truststore {settings.truststore}, keystore {settings.keystore}): "
            f"{type(exc).__name__}: {exc.strerror or exc}",
            url=", ".join(settings.urls),
        ) from None
    context.check_hostname = settings.check_hostname
    return context


class SchemaRegistryClient:
    """The Confluent-compatible REST client.

    Args:
        settings: the parsed settings (:func:`.settings.parse_settings`).
        retries: builds one operation's retry policy (see the module docstring); ``None``: one
            pass over the URLs.
        cache: the schema cache (default :data:`PROCESS_CACHE`, shared by the process).
        session: the ``requests`` session (default a new one; closed by :meth:`close` only when
            it is ours).

    Not picklable: build one per process from the settings (executors do).
    """

    def __init__(
        self,
        settings: RegistrySettings,
        *,
        retries: RetryFactory | None = None,
        cache: LruCache[Schema] | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self.settings = settings
        self._retries = retries
        self._cache = cache if cache is not None else PROCESS_CACHE
        self._own_session = session is None
        self._session = session if session is not None else requests.Session()
        self._session.trust_env = False  # no proxies or .netrc credentials from the environment
        if settings.truststore or settings.keystore or not settings.check_hostname:
            context = _tls_context(settings)
            self._session.mount("https://", _TLSAdapter(context))
            self._session.verify = settings.truststore or True
        self._auth = (
            (settings.username, settings.password or "") if settings.username is not None else None
        )
        self._cache_key = (settings.urls, settings.username)
        self._preferred = 0

    @classmethod
    def from_options(
        cls, options: Mapping[str, str], *, retries: RetryFactory | None = None
    ) -> SchemaRegistryClient:
        """A client of the ``schema.registry.*`` settings in ``options``.

        Raises:
            ConfigError: see :func:`~spark_kafka_py.schema_registry.settings.parse_settings`.
        """
        return cls(parse_settings(options), retries=retries)

    # ------------------------------------------------------------------------------ schemas

    def schema_by_id(self, schema_id: int) -> Schema:
        """The schema of id ``schema_id`` (``GET /schemas/ids/{id}``), from the cache when it
        was fetched before.

        Raises:
            ValueError: ``schema_id`` is not an int32 >= 0.
            SchemaRegistryError: not found (HTTP 404, ``error_code`` 40403), or see the class.
        """
        if isinstance(schema_id, bool) or not isinstance(schema_id, int):
            raise ValueError(f"a schema id is an integer, got {schema_id!r}")
        if not 0 <= schema_id < 2**31:
            raise ValueError(f"a schema id is an int32 >= 0, got {schema_id}")
        key = (self._cache_key, "id", schema_id)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        path = f"/schemas/ids/{schema_id}"
        schema = self._schema(self._request("GET", path), path)
        self._cache.put(key, schema, len(schema.schema_str))
        return schema

    def schema_by_guid(self, guid: str) -> Schema:
        """The schema of GUID ``guid`` (``GET /schemas/guids/{guid}``: Confluent Platform 8's
        header framing names schemas by GUID), cached as by id.

        Raises:
            ValueError: ``guid`` is not a UUID.
            SchemaRegistryError: not found (Apicurio 3.3 serves no GUIDs: 404), or see the class.
        """
        try:
            canonical = str(uuid.UUID(str(guid)))
        except ValueError:
            raise ValueError(f"a schema GUID is a UUID, got {guid!r}") from None
        key = (self._cache_key, "guid", canonical)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        path = f"/schemas/guids/{canonical}"
        schema = self._schema(self._request("GET", path), path)
        self._cache.put(key, schema, len(schema.schema_str))
        return schema

    # ----------------------------------------------------------------------------- subjects

    def subjects(self) -> list[str]:
        """Every subject (``GET /subjects``)."""
        body = self._request("GET", "/subjects")
        if not isinstance(body, list) or not all(isinstance(s, str) for s in body):
            raise self._malformed("/subjects", "a list of subject names", body)
        return list(body)

    def versions(self, subject: str) -> list[int]:
        """The versions of ``subject`` (``GET /subjects/{subject}/versions``).

        Raises:
            SchemaRegistryError: unknown subject (404, 40401), or see the class.
        """
        path = f"/subjects/{_quote(subject)}/versions"
        body = self._request("GET", path)
        if not isinstance(body, list) or not all(_is_int(v) for v in body):
            raise self._malformed(path, "a list of versions", body)
        return list(body)

    def latest(self, subject: str) -> RegisteredSchema:
        """The latest version of ``subject`` (``GET /subjects/{subject}/versions/latest``).

        Raises:
            SchemaRegistryError: unknown subject (404, 40401), or see the class.
        """
        path = f"/subjects/{_quote(subject)}/versions/latest"
        return self._registered(self._request("GET", path), path)

    def version(self, subject: str, version: int) -> RegisteredSchema:
        """Version ``version`` of ``subject`` (``GET /subjects/{subject}/versions/{version}``).

        Raises:
            ValueError: ``version`` is not an integer >= 1.
            SchemaRegistryError: unknown subject (40401) or version (40402), or see the class.
        """
        if not _is_int(version) or version < 1:
            raise ValueError(f"a subject version is an integer >= 1, got {version!r}")
        path = f"/subjects/{_quote(subject)}/versions/{version}"
        return self._registered(self._request("GET", path), path)

    def register(self, subject: str, schema: Schema | str, *, normalize: bool = False) -> int:
        """Register ``schema`` under ``subject`` (``POST /subjects/{subject}/versions``); the
        id of the new version, or of the existing one with the same schema.

        Raises:
            SchemaRegistryError: incompatible with the subject's compatibility level (409),
                invalid schema (422, 42201), or see the class.
        """
        schema = _as_schema(schema)
        path = f"/subjects/{_quote(subject)}/versions" + ("?normalize=true" if normalize else "")
        body = self._request("POST", path, _schema_body(schema))
        if not isinstance(body, dict) or not _is_int(body.get("id")):
            raise self._malformed(path, 'an object with an "id"', body)
        schema_id: int = body["id"]
        self._cache.put((self._cache_key, "id", schema_id), schema, len(schema.schema_str))
        return schema_id

    def lookup(
        self, subject: str, schema: Schema | str, *, normalize: bool = False
    ) -> RegisteredSchema:
        """The version of ``subject`` whose schema is ``schema`` (``POST /subjects/{subject}``).

        Raises:
            SchemaRegistryError: unknown subject (404, 40401), schema not under it (404,
                40403), or see the class.
        """
        schema = _as_schema(schema)
        path = f"/subjects/{_quote(subject)}" + ("?normalize=true" if normalize else "")
        return self._registered(self._request("POST", path, _schema_body(schema)), path)

    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        """Delete ``subject`` (``DELETE /subjects/{subject}``, a soft delete; with
        ``permanent``, then ``?permanent=true``, as Confluent requires, also of a subject
        soft-deleted before); the versions deleted.

        Raises:
            SchemaRegistryError: unknown subject (404, 40401), or see the class.
        """
        path = f"/subjects/{_quote(subject)}"
        try:
            body = self._request("DELETE", path)
        except SchemaRegistryError as exc:
            if not (permanent and exc.error_code == SUBJECT_SOFT_DELETED):
                raise
        if permanent:
            body = self._request("DELETE", f"{path}?permanent=true")
        if not isinstance(body, list) or not all(_is_int(v) for v in body):
            raise self._malformed(path, "a list of versions", body)
        return list(body)

    # ------------------------------------------------------------------------ compatibility

    def compatibility(self, subject: str | None = None) -> str:
        """The compatibility level (``BACKWARD``, ``NONE``, ...) of ``subject`` or, with
        ``None``, the global one (``GET /config[/{subject}]``).

        Raises:
            SchemaRegistryError: a subject without a level of its own (404, 40408), or see
                the class.
        """
        path = "/config" if subject is None else f"/config/{_quote(subject)}"
        body = self._request("GET", path)
        level = (
            body.get("compatibilityLevel", body.get("compatibility"))
            if isinstance(body, dict)
            else None
        )
        if not isinstance(level, str):
            raise self._malformed(path, 'an object with "compatibilityLevel"', body)
        return level

    def set_compatibility(self, level: str, subject: str | None = None) -> str:
        """Set the compatibility level of ``subject`` or, with ``None``, the global one
        (``PUT /config[/{subject}]``); the level now in force.

        Raises:
            SchemaRegistryError: an unknown level (422, 42203), or see the class.
        """
        path = "/config" if subject is None else f"/config/{_quote(subject)}"
        body = self._request("PUT", path, {"compatibility": level})
        found = body.get("compatibility") if isinstance(body, dict) else None
        if not isinstance(found, str):
            raise self._malformed(path, 'an object with "compatibility"', body)
        return found

    # -------------------------------------------------------------------------------- close

    def close(self) -> None:
        """Close the connections (of a session we made)."""
        if self._own_session:
            self._session.close()

    def __enter__(self) -> SchemaRegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SchemaRegistryClient({', '.join(self.settings.urls)})"

    # ----------------------------------------------------------------------------- requests

    def _request(self, method: str, path: str, body: object = None) -> Any:
        """The JSON of a 2xx answer to ``method path``, over the URLs and the retries."""
        policy = self._retries(f"schema registry {method} {path}") if self._retries else None
        while True:
            try:
                return self._over_urls(method, path, body)
            except SchemaRegistryError as exc:
                if policy is None:
                    raise
                policy.after(exc)  # raises when not retriable or out of time

    def _over_urls(self, method: str, path: str, body: object) -> Any:
        urls = self.settings.urls
        last: SchemaRegistryError | None = None
        for step in range(len(urls)):
            index = (self._preferred + step) % len(urls)
            try:
                answer = self._exchange(method, urls[index] + path, body)
            except SchemaRegistryError as exc:
                if not exc.retriable:
                    raise
                last = exc
                continue
            self._preferred = index
            return answer
        assert last is not None
        raise last

    def _exchange(self, method: str, url: str, body: object) -> Any:
        settings = self.settings
        shown = redact_url(url)
        timeout_s = settings.request_timeout_ms / 1000
        deadline = time.monotonic() + timeout_s
        headers = {"Accept": ACCEPT, "Accept-Encoding": "identity"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = CONTENT_TYPE
        try:
            response = self._session.request(
                method,
                url,
                data=data,
                headers=headers,
                auth=self._auth,
                timeout=(min(settings.connect_timeout_ms / 1000, timeout_s), timeout_s),
                stream=True,
                allow_redirects=False,
            )
        except requests.Timeout as exc:
            raise SchemaRegistryError(
                f"{method} {shown}: no answer within {settings.request_timeout_ms} ms "
                f"(schema.registry.request.timeout.ms): {_reason(exc)}",
                url=shown,
                retriable=True,
            ) from exc
        except requests.exceptions.SSLError as exc:
            raise SchemaRegistryError(
                f"{method} {shown}: TLS failed: {_reason(exc)}", url=shown
            ) from exc
        except (requests.RequestException, OSError) as exc:
            raise SchemaRegistryError(
                f"{method} {shown}: cannot reach the schema registry: {_reason(exc)}",
                url=shown,
                retriable=True,
            ) from exc
        with response:
            raw = self._read(method, shown, response, deadline)
            status = response.status_code
            if 200 <= status < 300:
                return self._json(method, shown, raw, status)
            raise self._http_error(method, shown, status, raw, response)

    def _read(self, method: str, shown: str, response: requests.Response, deadline: float) -> bytes:
        """The answer's body, at most ``max_response_bytes``, before ``deadline``."""
        limit = self.settings.max_response_bytes
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise SchemaRegistryError(
                f"{method} {shown}: answered with Content-Encoding {encoding!r}, "
                "which was not asked for",
                url=shown,
                status=response.status_code,
            )
        declared = response.headers.get("Content-Length", "")
        if declared.strip().isdigit() and int(declared) > limit:
            raise self._too_large(method, shown, response.status_code, f"{int(declared)} bytes")
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                if time.monotonic() > deadline:
                    raise SchemaRegistryError(
                        f"{method} {shown}: the answer took longer than "
                        f"{self.settings.request_timeout_ms} ms "
                        f"(schema.registry.request.timeout.ms); {size} bytes read",
                        url=shown,
                        status=response.status_code,
                        retriable=True,
                    )
                chunk = response.raw.read1(READ_CHUNK_BYTES, decode_content=False)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise self._too_large(
                        method, shown, response.status_code, f"more than {limit} bytes"
                    )
                chunks.append(chunk)
        except SchemaRegistryError:
            raise
        except Exception as exc:  # urllib3's and the socket's errors while reading the body
            raise SchemaRegistryError(
                f"{method} {shown}: the answer broke off after {size} bytes: {_reason(exc)}",
                url=shown,
                status=response.status_code,
                retriable=True,
            ) from exc
        return b"".join(chunks)

    def _too_large(self, method: str, shown: str, status: int, what: str) -> SchemaRegistryError:
        return SchemaRegistryError(
            f"{method} {shown}: the answer ({what}) exceeds schema.registry.max.response.bytes="
            f"{self.settings.max_response_bytes}",
            url=shown,
            status=status,
        )

    def _json(self, method: str, shown: str, raw: bytes, status: int) -> Any:
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise SchemaRegistryError(
                f"{method} {shown}: HTTP {status} with a body that is not JSON "
                f"({len(raw)} bytes): {_reason(exc)}",
                url=shown,
                status=status,
            ) from None

    def _http_error(
        self, method: str, shown: str, status: int, raw: bytes, response: requests.Response
    ) -> SchemaRegistryError:
        error_code: int | None = None
        message = ""
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            code = parsed.get("error_code")
            error_code = code if _is_int(code) else None
            text = parsed.get("message")
            message = text if isinstance(text, str) else ""
        elif raw:
            message = raw[:MESSAGE_CHARS].decode("utf-8", "replace")
        if 300 <= status < 400:
            message = (
                f"redirect to {redact_url(response.headers.get('Location', '?'))} not followed"
            )
        detail = f"HTTP {status}"
        if error_code is not None:
            detail += f", error_code {error_code}"
        if message:
            detail += f": {_clip(message)}"
        return SchemaRegistryError(
            f"{method} {shown}: {detail}",
            url=shown,
            status=status,
            error_code=error_code,
            retriable=status >= 500 or status in RETRIABLE_STATUSES,
        )

    # -------------------------------------------------------------------------- validation

    def _malformed(self, path: str, expected: str, body: object) -> SchemaRegistryError:
        shown = redact_url(self.settings.urls[self._preferred] + path)
        return SchemaRegistryError(
            f"{shown}: expected {expected}, got {_clip(json.dumps(body))}", url=shown
        )

    def _schema(self, body: object, path: str) -> Schema:
        if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
            raise self._malformed(path, 'an object with a "schema" string', body)
        schema_type = body.get("schemaType", AVRO)
        guid = body.get("guid")
        if not isinstance(schema_type, str) or (guid is not None and not isinstance(guid, str)):
            raise self._malformed(path, 'a string "schemaType" and "guid"', body)
        return Schema(body["schema"], schema_type, self._references(body, path), guid)

    def _references(self, body: Mapping[str, object], path: str) -> tuple[SchemaReference, ...]:
        refs = body.get("references") or []
        if not isinstance(refs, list):
            raise self._malformed(path, 'a list of "references"', body)
        out = []
        for ref in refs:
            if (
                not isinstance(ref, dict)
                or not isinstance(ref.get("name"), str)
                or not isinstance(ref.get("subject"), str)
                or not _is_int(ref.get("version"))
            ):
                raise self._malformed(path, "references of name, subject and version", body)
            out.append(SchemaReference(ref["name"], ref["subject"], ref["version"]))
        return tuple(out)

    def _registered(self, body: object, path: str) -> RegisteredSchema:
        schema = self._schema(body, path)
        assert isinstance(body, dict)
        subject, version, schema_id = body.get("subject"), body.get("version"), body.get("id")
        if (
            not isinstance(subject, str)
            or not isinstance(version, int)
            or not isinstance(schema_id, int)
            or isinstance(version, bool)
            or isinstance(schema_id, bool)
        ):
            raise self._malformed(path, 'an object with "subject", "version" and "id"', body)
        self._cache.put((self._cache_key, "id", schema_id), schema, len(schema.schema_str))
        return RegisteredSchema(subject, version, schema_id, schema)


def _quote(subject: str) -> str:
    if not isinstance(subject, str) or not subject:
        raise ValueError(f"a subject is a non-empty string, got {subject!r}")
    return urllib.parse.quote(subject, safe="")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _as_schema(schema: Schema | str) -> Schema:
    return Schema(schema) if isinstance(schema, str) else schema


def _schema_body(schema: Schema) -> dict[str, object]:
    body: dict[str, object] = {"schema": schema.schema_str}
    if schema.schema_type != AVRO:
        body["schemaType"] = schema.schema_type
    if schema.references:
        body["references"] = [
            {"name": r.name, "subject": r.subject, "version": r.version} for r in schema.references
        ]
    return body


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."


def _reason(exc: BaseException) -> str:
    return _clip(f"{type(exc).__name__}: {exc}")
