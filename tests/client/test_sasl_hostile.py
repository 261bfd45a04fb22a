"""SASL messages from a hostile or broken broker: every server token and every field of
SaslHandshake/SaslAuthenticate responses either parses or raises a typed error
(:class:`KafkaProtocolError` for a malformed message, :class:`KafkaApiError`
SASL_AUTHENTICATION_FAILED for a refusal), quickly and with bounded text; never a bare
``ValueError``/``OverflowError``/``UnicodeDecodeError``/``RecursionError``.

No broker: mechanisms are fed tokens directly, :func:`authenticate` runs over a scripted
exchange, and one case goes through :class:`BrokerConnection` against the loopback
:class:`FakeBroker`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafka_py.client import sasl as sasl_module
from spark_kafka_py.client.connection import BrokerConnection
from spark_kafka_py.client.sasl import (
    SCRAM_MAX_ITERATIONS,
    SCRAM_MIN_ITERATIONS,
    OAuthBearer,
    Plain,
    Scram,
    authenticate,
)
from spark_kafka_py.client.security import SaslConfig, Secret
from spark_kafka_py.errors import KafkaApiError, KafkaError, KafkaProtocolError
from spark_kafka_py.protocol.messages.metadata import MetadataRequest, MetadataResponse
from spark_kafka_py.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from spark_kafka_py.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from .fake_broker import FakeBroker, api_versions_for

PASSWORD = "pa55-W0rd-that-must-not-leak"
NONCE = "abc"
SALT = base64.b64encode(b"salt").decode()
#: Longest text a broker's string may add to one of our messages (the bound is 256
#: characters per field; a message names a few fields at most).
MAX_MESSAGE_CHARS = 2_000


def scram(mechanism: str = "SCRAM-SHA-256") -> Scram:
    mech = Scram(mechanism, "u", PASSWORD, nonce=NONCE)
    mech.initial()
    return mech


def server_first(*, r: str = NONCE + "srv", s: str = SALT, i: str = "4096") -> bytes:
    return f"r={r},s={s},i={i}".encode()


def assert_clean(err: BaseException) -> None:
    """The message is bounded and printable: no terminal escapes or raw control bytes."""
    text = str(err)
    assert len(text) <= MAX_MESSAGE_CHARS, len(text)
    assert all(c.isprintable() for c in text), repr(text[:200])
    assert PASSWORD not in text


_PBKDF2 = hashlib.pbkdf2_hmac


class _NoHugePbkdf2:
    """Stands in for ``hashlib.pbkdf2_hmac``: fails the test if asked for more iterations than
    a Kafka broker can ever ask (so a regression shows at once instead of burning minutes)."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, name: str, password: bytes, salt: bytes, iterations: int) -> bytes:
        self.calls.append(iterations)
        if iterations > SCRAM_MAX_ITERATIONS:
            raise AssertionError(f"PBKDF2 started with {iterations} iterations")
        return _PBKDF2(name, password, salt, iterations)


# ---------------------------------------------------------------------- SCRAM iteration count


def test_iteration_bounds_are_kafkas() -> None:
    """Kafka's ScramMechanism: minIterations 4096, maxIterations 16384."""
    assert (SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS) == (4096, 16384)


def test_scram_huge_iteration_count_is_a_protocol_error_not_overflow() -> None:
    """``i=10**20`` made ``hashlib.pbkdf2_hmac`` raise a bare OverflowError."""
    with pytest.raises(KafkaProtocolError, match="iteration count") as info:
        scram().respond(server_first(i=str(10**20)))
    assert_clean(info.value)


@pytest.mark.parametrize("iterations", [2**31 - 1, SCRAM_MAX_ITERATIONS + 1])
def test_scram_iteration_count_above_kafkas_maximum_is_refused_before_pbkdf2(
    iterations: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``i=2**31-1`` kept the thread in PBKDF2 for minutes; no broker asks above 16384."""
    spy = _NoHugePbkdf2()
    monkeypatch.setattr(sasl_module.hashlib, "pbkdf2_hmac", spy)
    with pytest.raises(KafkaProtocolError, match=f"{iterations}.*16384") as info:
        scram().respond(server_first(i=str(iterations)))
    assert spy.calls == []
    assert "maxIterations" in str(info.value)


@pytest.mark.parametrize("iterations", [SCRAM_MIN_ITERATIONS, SCRAM_MAX_ITERATIONS])
def test_scram_iteration_bounds_are_inclusive(iterations: int) -> None:
    assert scram().respond(server_first(i=str(iterations))) is not None


@pytest.mark.parametrize(
    "text",
    [
        "+4096",  # int() accepts a sign
        " 4096",  # ... surrounding spaces
        "4_096",  # ... underscores
        "\u0664\u0660\u0669\u0666",  # ... and non-ASCII digits (Arabic-Indic 4096)
        "04096",  # RFC 5802 posit-number: no leading zero
        "4096.0",
        "",
        "0x1000",
        "9" * 100,
    ],
)
def test_scram_iteration_count_must_be_a_plain_decimal(text: str) -> None:
    with pytest.raises(KafkaProtocolError, match="iteration count") as info:
        scram().respond(server_first(i=text))
    assert_clean(info.value)


# --------------------------------------------------------------------- SCRAM message syntax


@pytest.mark.parametrize(
    "message, match",
    [
        (b"r=abcsrv,s=c2FsdA==,i=4096,garbage", "attribute"),  # not attr=value
        (b"r=abcsrv,s=c2FsdA==,i=4096,", "attribute"),  # empty trailing attribute
        (b"r=abcsrv,,s=c2FsdA==,i=4096", "attribute"),
        (b"r=abcsrv,s=c2FsdA==,i=4096,xy=1", "attribute"),  # name is one letter
        (b"r=abcsrv,s=c2FsdA==,i=4096,1=x", "attribute"),  # ... an ASCII letter
        (b"r=abcsrv,r=abcother,s=c2FsdA==,i=4096", "r=, s=, i="),  # duplicate
        (b"s=c2FsdA==,r=abcsrv,i=4096", "r=, s=, i="),  # out of order
        (b"r=abcsrv,i=4096,s=c2FsdA==", "r=, s=, i="),
        (b"m=ext,r=abcsrv,s=c2FsdA==,i=4096", "mandatory extension"),  # RFC 5802 m=
        (b"r=abc\x00srv,s=c2FsdA==,i=4096", "nonce"),  # nonce is printable ASCII
        (b"r=abcsr\xc3\xa9,s=c2FsdA==,i=4096", "nonce"),
        (b"r=abcsrv,s=,i=4096", "salt"),  # empty salt
        (b"r=abcsrv,s=c2FsdA,i=4096", "salt"),  # bad padding
        (b"r=abcsrv,s=c2Fs-A==,i=4096", "salt"),  # URL-safe alphabet
        (b"r=abcsrv,s=c2FsdA==,i=4096,e=x", "attribute"),  # e= only as the first attribute
    ],
)
def test_scram_server_first_syntax(message: bytes, match: str) -> None:
    """RFC 5802 section 7: ``[m=...,]r=nonce,s=salt,i=count[,ext...]``; these all passed."""
    with pytest.raises(KafkaProtocolError, match=match) as info:
        scram().respond(message)
    assert_clean(info.value)


def test_scram_server_first_extensions_are_accepted() -> None:
    """Unknown optional extensions after i= are allowed by RFC 5802 (and ignored)."""
    assert scram().respond(server_first() + b",x=anything goes=here") is not None


def test_scram_megabyte_salt_is_refused() -> None:
    salt = base64.b64encode(b"\0" * (4 << 20)).decode()
    with pytest.raises(KafkaProtocolError, match="bytes") as info:
        scram().respond(server_first(s=salt))
    assert_clean(info.value)


def test_scram_megabyte_nonce_is_refused() -> None:
    with pytest.raises(KafkaProtocolError, match="bytes") as info:
        scram().respond(server_first(r=NONCE + "x" * (1 << 20)))
    assert_clean(info.value)


def _final_for(mech: Scram, first: bytes, client_final: bytes) -> bytes:
    without_proof = client_final.rsplit(b",p=", 1)[0]
    auth = f"n=u,r={NONCE}".encode() + b"," + first + b"," + without_proof
    salted = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), b"salt", 4096)
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    return b"v=" + base64.b64encode(hmac.new(server_key, auth, "sha256").digest())


def test_scram_server_final_right_signature_with_extension_is_accepted() -> None:
    mech = scram()
    first = server_first()
    final = _final_for(mech, first, mech.respond(first) or b"")
    assert mech.respond(final + b",x=ext") is None and mech.complete


@pytest.mark.parametrize(
    "suffix, match",
    [
        (b",garbage", "attribute"),
        (b",v=AAAA", "attribute"),  # a second verifier
        (b",", "attribute"),
    ],
)
def test_scram_server_final_syntax(suffix: bytes, match: str) -> None:
    """``(e=... / v=...)[,ext...]``: a right signature followed by garbage passed."""
    mech = scram()
    first = server_first()
    final = _final_for(mech, first, mech.respond(first) or b"")
    with pytest.raises(KafkaProtocolError, match=match) as info:
        mech.respond(final + suffix)
    assert_clean(info.value)
    assert not mech.complete


@pytest.mark.parametrize(
    "final, match",
    [
        (b"", "verifier"),
        (b"x=1", "verifier"),
        (b"v=", "verifier"),
        (b"v=!!", "verifier"),
        (b"v=" + base64.b64encode(b"\0" * 4096), "bytes"),  # longer than any digest
        (b"e=" + b"A" * (1 << 20), "bytes"),  # a megabyte of error text
        (b"e=", "error"),
        (b"e=bad=value", "error"),  # RFC 5802 value-char excludes "="
    ],
)
def test_scram_server_final_malformed(final: bytes, match: str) -> None:
    mech = scram()
    mech.respond(server_first())
    with pytest.raises(KafkaProtocolError, match=match) as info:
        mech.respond(final)
    assert_clean(info.value)


def test_scram_server_error_is_sanitized() -> None:
    """An ``e=`` value with terminal escapes reaches the message as printable text."""
    mech = scram()
    mech.respond(server_first())
    with pytest.raises(KafkaApiError, match=r"SASL_AUTHENTICATION_FAILED.*invalid-proof") as info:
        mech.respond("e=invalid-proof\x1b[2J\x07\u202e".encode())
    assert_clean(info.value)


def test_scram_respond_after_completion_is_a_protocol_error() -> None:
    mech = scram()
    first = server_first()
    final = _final_for(mech, first, mech.respond(first) or b"")
    assert mech.respond(final) is None
    with pytest.raises(KafkaProtocolError, match="unexpected"):
        mech.respond(final)


# ------------------------------------------------------------------------------- OAUTHBEARER


@pytest.mark.parametrize(
    "challenge",
    [
        b"\xff\xfe",  # not UTF-8
        b"not json",
        b"[1, 2]",  # not an object
        b'{"status": 5}',  # status not a string
        b'{"scope": "a"}',  # no status
        b"[" * 100_000,  # nesting deeper than the JSON parser recurses
        b"[" * 3_000 + b"]" * 3_000,
        b'{"status": "' + b"A" * (1 << 20) + b'"}',  # a megabyte
    ],
)
def test_oauthbearer_malformed_server_error(challenge: bytes) -> None:
    """RFC 7628 section 3.2.2: the server's error is a JSON object with a ``status`` string.
    Any other token (which used to be answered and shown raw) is a protocol error."""
    mech = OAuthBearer("tok")
    mech.initial()
    with pytest.raises(KafkaProtocolError, match="OAUTHBEARER") as info:
        mech.respond(challenge)
    assert_clean(info.value)


def test_oauthbearer_server_error_fields_are_sanitized() -> None:
    mech = OAuthBearer("tok")
    mech.initial()
    challenge = json.dumps(
        {
            "status": "invalid_token\x1b[31m",
            "scope": "s" * 5000,
            "openid-configuration": "https://idp/.well-known",
        }
    ).encode()
    assert mech.respond(challenge) == b"\x01"
    with pytest.raises(KafkaApiError, match="invalid_token") as info:
        mech.respond(b"")
    assert_clean(info.value)


# ------------------------------------------------------------- SaslHandshake/SaslAuthenticate


class _ScriptedExchange:
    """Answers SaslHandshake/SaslAuthenticate from a list (a sans-I/O test of the flow)."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.sent: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.sent.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {type(request).__name__}")
        return self.answers.pop(0)


SCRAM_CONFIG = SaslConfig("SCRAM-SHA-256", username="u", password=Secret(PASSWORD))


def test_handshake_mechanism_list_is_bounded_and_sanitized() -> None:
    hostile = tuple(f"MECH-{i}\x1b[2J" + "X" * 10_000 for i in range(10_000))
    ex = _ScriptedExchange([SaslHandshakeResponse(error_code=33, mechanisms=hostile)])
    with pytest.raises(KafkaApiError, match="UNSUPPORTED_SASL_MECHANISM") as info:
        authenticate(ex, SCRAM_CONFIG, "broker 1 at h:1")
    assert "MECH-0" in str(info.value) and "more" in str(info.value)
    assert_clean(info.value)


def test_authenticate_error_message_is_bounded_and_sanitized() -> None:
    message = "Authentication failed\x1b]0;pwned\x07 " + "x" * (1 << 20)
    ex = _ScriptedExchange(
        [
            SaslHandshakeResponse(error_code=0, mechanisms=("SCRAM-SHA-256",)),
            SaslAuthenticateResponse(error_code=58, error_message=message),
        ]
    )
    with pytest.raises(KafkaApiError, match=r"SASL_AUTHENTICATION_FAILED.*Authentication failed"):
        authenticate(ex, SCRAM_CONFIG, "broker 1 at h:1")
    ex = _ScriptedExchange(
        [
            SaslHandshakeResponse(error_code=0, mechanisms=("SCRAM-SHA-256",)),
            SaslAuthenticateResponse(error_code=58, error_message=message),
        ]
    )
    with pytest.raises(KafkaApiError) as info:
        authenticate(ex, SCRAM_CONFIG, "broker 1 at h:1")
    assert_clean(info.value)
    ex = _ScriptedExchange(
        [
            SaslHandshakeResponse(error_code=0, mechanisms=("SCRAM-SHA-256",)),
            SaslAuthenticateResponse(error_code=34, error_message=message),  # ILLEGAL_SASL_STATE
        ]
    )
    with pytest.raises(KafkaApiError, match="ILLEGAL_SASL_STATE") as info:
        authenticate(ex, SCRAM_CONFIG, "broker 1 at h:1")
    assert_clean(info.value)


def test_scram_overflow_through_a_connection_is_typed_and_names_the_broker() -> None:
    """End to end over a socket: the broker's ``i=10**20`` ends in KafkaProtocolError."""

    def authenticate_handler(request: SaslAuthenticateRequest, version: int) -> Any:
        client_first = bytes(request.auth_bytes).decode()
        nonce = client_first.split("r=", 1)[1]
        return SaslAuthenticateResponse(
            auth_bytes=f"r={nonce}srv,s={SALT},i={10**20}".encode(), session_lifetime_ms=0
        )

    handlers = {
        18: lambda r, v: api_versions_for(
            SaslHandshakeRequest, SaslAuthenticateRequest, MetadataRequest
        ),
        17: lambda r, v: SaslHandshakeResponse(error_code=0, mechanisms=("SCRAM-SHA-256",)),
        36: authenticate_handler,
        3: lambda r, v: MetadataResponse(),
    }
    with FakeBroker(handlers) as broker:
        conn = BrokerConnection(
            broker.host,
            broker.port,
            authenticator=lambda exchange, who: authenticate(exchange, SCRAM_CONFIG, who),
        )
        with pytest.raises(KafkaProtocolError, match="iteration count") as info:
            conn.send(MetadataRequest(topics=None))
        assert not conn.connected
        assert f"{broker.port}" in str(info.value)
        assert_clean(info.value)


# ------------------------------------------------------------------------ property: any bytes

#: Tokens that look like SCRAM messages, to reach past the first syntax check.
_attr_value = st.text(alphabet=string.printable + "\u00e9\u202e\x00", max_size=30)
_scram_like = st.lists(
    st.tuples(st.sampled_from([*"rsivemx", "", "ab", "1"]), _attr_value),
    max_size=6,
).map(lambda attrs: ",".join(f"{k}={v}" for k, v in attrs).encode())
_nonce_ok = st.builds(
    lambda tail, salt, i, ext: f"r={NONCE}{tail},s={salt},i={i}{ext}".encode(),
    st.text(alphabet=string.ascii_letters, max_size=5),
    st.sampled_from([SALT, "", "!!", "c2FsdA", base64.b64encode(b"\0" * 40).decode()]),
    st.sampled_from(["4096", "16384", "16385", "0", "-1", str(2**31 - 1), str(10**20), "x"]),
    st.sampled_from(["", ",x=1", ",", ",zz=2", ",e=oops"]),
)
SERVER_TOKENS = st.one_of(st.binary(max_size=300), _scram_like, _nonce_ok)
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _only_typed(call: Any) -> None:
    try:
        call()
    except KafkaError as err:
        assert_clean(err)


@PROPERTY
@given(first=SERVER_TOKENS, final=SERVER_TOKENS, mechanism=st.sampled_from(["256", "512"]))
def test_scram_any_server_tokens_give_typed_errors(
    first: bytes, final: bytes, mechanism: str
) -> None:
    spy = _NoHugePbkdf2()
    original = sasl_module.hashlib.pbkdf2_hmac
    sasl_module.hashlib.pbkdf2_hmac = spy  # type: ignore[assignment]  # a spy in its place
    try:
        mech = scram(f"SCRAM-SHA-{mechanism}")
        _only_typed(lambda: (mech.respond(first), mech.respond(final), mech.respond(final)))
    finally:
        sasl_module.hashlib.pbkdf2_hmac = original  # type: ignore[assignment]  # restored
    assert all(SCRAM_MIN_ITERATIONS <= i <= SCRAM_MAX_ITERATIONS for i in spy.calls)


@PROPERTY
@given(tokens=st.lists(st.one_of(st.binary(max_size=300), st.just(b"")), max_size=3))
def test_oauthbearer_and_plain_any_server_tokens_give_typed_errors(tokens: list[bytes]) -> None:
    oauth = OAuthBearer("tok")
    oauth.initial()
    plain = Plain("u", PASSWORD)
    plain.initial()
    for token in tokens:
        _only_typed(lambda token=token: oauth.respond(token))
        _only_typed(lambda token=token: plain.respond(token))


_handshake = st.builds(
    SaslHandshakeResponse,
    error_code=st.integers(-(2**15), 2**15 - 1) | st.sampled_from([0, 0, 33]),
    mechanisms=st.lists(st.text(max_size=40), max_size=5).map(tuple)
    | st.just(("SCRAM-SHA-256", "PLAIN", "OAUTHBEARER")),
)
_auth = st.builds(
    SaslAuthenticateResponse,
    error_code=st.sampled_from([0, 0, 0, 58, 34, 33, -1, 32767]),
    error_message=st.none() | st.text(max_size=300),
    auth_bytes=SERVER_TOKENS,
    session_lifetime_ms=st.integers(-(2**63), 2**63 - 1),
)


@PROPERTY
@given(
    mechanism=st.sampled_from(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]),
    handshake=_handshake,
    answers=st.lists(_auth, min_size=3, max_size=3),
)
def test_authenticate_any_responses_give_typed_errors_or_a_lifetime(
    mechanism: str, handshake: SaslHandshakeResponse, answers: list[SaslAuthenticateResponse]
) -> None:
    if mechanism == "OAUTHBEARER":
        config = SaslConfig(mechanism, token=Secret("tok"))
    else:
        config = SaslConfig(mechanism, username="u", password=Secret(PASSWORD))
    ex = _ScriptedExchange([handshake, *answers])
    try:
        lifetime = authenticate(ex, config, "broker 1 at h:1")
    except KafkaError as err:
        assert_clean(err)
    else:
        assert isinstance(lifetime, int) and lifetime >= 0
