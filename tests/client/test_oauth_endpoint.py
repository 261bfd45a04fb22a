"""The OAuth client-credentials token request (KIP-768) against hostile local endpoints:
redirects are refused before the credentials go anywhere else, plain http needs
``kafka.sasl.oauthbearer.allowed.urls``, and what the endpoint sends back (status line,
error body, token, ``expires_in``) never puts the client secret in an exception or a log.

Endpoints are ``http.server`` instances on 127.0.0.1 started by each test; no broker.
"""

from __future__ import annotations

import http.server
import json
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from spark_kafka_py.client.sasl import oauth_token
from spark_kafka_py.client.security import SaslConfig, parse_security_options
from spark_kafka_py.errors import ConfigError, KafkaApiError
from spark_kafka_py.spark.options import parse_options

OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
CLIENT_SECRET = "cl1ent-S3cret-that-must-not-leak"
URL_OPTION = "kafka.sasl.oauthbearer.token.endpoint.url"
ALLOWED_OPTION = "kafka.sasl.oauthbearer.allowed.urls"
TOKEN = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhcHAifQ."

#: ``handler(request) -> None`` answers one request through the BaseHTTPRequestHandler.
Answer = Callable[[http.server.BaseHTTPRequestHandler], None]


class Endpoint:
    """A local HTTP server answering every request with ``answer``; records each request's
    method, path and headers."""

    def __init__(self, answer: Answer) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                outer.requests.append((self.command, self.path, dict(self.headers.items())))
                answer(self)

            do_GET = do_POST = do_PUT = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}/token"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


@contextmanager
def endpoint(answer: Answer) -> Iterator[Endpoint]:
    ep = Endpoint(answer)
    try:
        yield ep
    finally:
        ep.close()


def send_json(handler: http.server.BaseHTTPRequestHandler, status: int, body: Any) -> None:
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def issue_token(handler: http.server.BaseHTTPRequestHandler) -> None:
    send_json(handler, 200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 300})


def config_for(url: str, *, allowed: str | None = "same") -> SaslConfig:
    opts = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.token.endpoint.url": url,
        "sasl.jaas.config": f'{OAUTH_MODULE} required clientId="spark-app" '
        f'clientSecret="{CLIENT_SECRET}" scope="kafka";',
    }
    if allowed is not None:
        opts["sasl.oauthbearer.allowed.urls"] = url if allowed == "same" else allowed
    sasl = parse_security_options(opts).sasl
    assert sasl is not None
    return sasl


def assert_secret_free(text: str) -> None:
    assert CLIENT_SECRET not in text
    assert "cl1ent" not in text  # no fragment either


# ----------------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("userinfo", ["", "mallory:pw-in-location@"])
def test_redirect_is_refused_and_nothing_reaches_the_target(
    status: int, userinfo: str, caplog: pytest.LogCaptureFixture
) -> None:
    """urlopen followed 301/302/303, turning the POST into a GET that kept the Authorization
    header (the client id and secret) for whatever host the Location named."""
    caplog.set_level(logging.DEBUG)
    with endpoint(issue_token) as target:
        location = (
            f"http://{userinfo}127.0.0.1:{target.port}/steal?client_secret={CLIENT_SECRET}&x=1#frag"
        )

        def redirect(handler: http.server.BaseHTTPRequestHandler) -> None:
            handler.send_response(status)
            handler.send_header("Location", location)
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        with endpoint(redirect) as source:
            with pytest.raises(KafkaApiError) as info:
                oauth_token(config_for(source.url))
            assert len(source.requests) == 1
        assert target.requests == []  # neither the Authorization header nor anything else
    text = str(info.value)
    assert URL_OPTION in text and f"HTTP {status}" in text and "redirect" in text
    assert f"127.0.0.1:{target.port}/steal" in text  # where it wanted to send us ...
    assert "pw-in-location" not in text and "mallory" not in text  # ... without credentials
    assert "x=1" not in text and "frag" not in text  # ... or query
    assert_secret_free(text)
    assert_secret_free(caplog.text)


@pytest.mark.parametrize("location", ["https://[bad", "http://[::1/x", "https://h:99999999/"])
def test_redirect_to_a_malformed_location_is_a_typed_error(location: str) -> None:
    """Found by the fuzzer: urljoin raised a bare ValueError ("Invalid IPv6 URL") while the
    refusal's message was built."""

    def redirect(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    with endpoint(redirect) as source, pytest.raises(KafkaApiError) as info:
        oauth_token(config_for(source.url))
    text = str(info.value)
    assert URL_OPTION in text and "HTTP 302" in text and "redirect" in text


# ------------------------------------------------------------------------- https or allowed


def test_plain_http_endpoint_is_rejected_at_option_parsing() -> None:
    with pytest.raises(ConfigError, match=URL_OPTION) as info:
        config_for("http://idp.example:8080/token", allowed=None)
    assert "https" in str(info.value) and ALLOWED_OPTION in str(info.value)
    assert_secret_free(str(info.value))


def test_plain_http_endpoint_is_rejected_by_the_source_options() -> None:
    opts = {
        "kafka.bootstrap.servers": "localhost:9093",
        "subscribe": "t",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "OAUTHBEARER",
        URL_OPTION: "http://127.0.0.1:8080/token",
        "kafka.sasl.jaas.config": f'{OAUTH_MODULE} required clientId="a" '
        f'clientSecret="{CLIENT_SECRET}";',
    }
    with pytest.raises(ConfigError, match=URL_OPTION):
        parse_options(opts, streaming=False)
    opts[ALLOWED_OPTION] = "http://127.0.0.1:8080/token"
    parsed = parse_options(opts, streaming=False)
    assert parsed.consumer.client.security.sasl is not None


def test_allowed_urls_as_kafkas_system_property() -> None:
    """``org.apache.kafka.sasl.oauthbearer.allowed.urls``: a comma-separated list; once set,
    the endpoint must be one of its entries (any scheme)."""
    http_url = "http://127.0.0.1:8080/token"
    assert config_for(http_url, allowed=f" https://idp.example/t , {http_url} ").token_endpoint_url
    with pytest.raises(ConfigError, match=ALLOWED_OPTION):
        config_for("https://idp.example/other", allowed=http_url)
    with pytest.raises(ConfigError, match=ALLOWED_OPTION):
        config_for("file:///tmp/token", allowed=http_url)
    # not set: https and file: as before
    assert config_for("https://idp.example/token", allowed=None).token_endpoint_url
    assert config_for("file:///tmp/token", allowed=None).token_endpoint_url


@pytest.mark.parametrize(
    "url",
    ["https://", "https:///token", "https://idp.example:99999/token", "ftp://idp/token", "token"],
)
def test_malformed_endpoint_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match=URL_OPTION):
        config_for(url, allowed=None)


def test_file_url_still_works(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    assert oauth_token(config_for(token_file.as_uri(), allowed=None)) == TOKEN


# ---------------------------------------------------------------- what the endpoint answers


def test_error_body_echoing_the_secret_stays_out_of_errors_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)

    def refuse(handler: http.server.BaseHTTPRequestHandler) -> None:
        body = {
            "error": "invalid_client",
            "error_description": f"client secret {CLIENT_SECRET} is wrong",
            "echo": handler.headers.get("Authorization"),
        }
        data = json.dumps(body).encode()
        handler.send_response(401, f"Bad secret {CLIENT_SECRET}")  # in the reason phrase too
        handler.send_header("WWW-Authenticate", f'Basic realm="{CLIENT_SECRET}"')
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    with endpoint(refuse) as ep, pytest.raises(KafkaApiError, match="HTTP 401") as info:
        oauth_token(config_for(ep.url))
    text = str(info.value)
    assert "invalid_client" in text and "SASL_AUTHENTICATION_FAILED" in text
    assert_secret_free(text)
    assert_secret_free(caplog.text)
    # no chained HTTPError whose reason phrase, headers or body a traceback would print
    assert info.value.__cause__ is None and info.value.__context__ is None


@pytest.mark.parametrize("error", [CLIENT_SECRET, "invalid_client " + CLIENT_SECRET, "x" * 5000])
def test_non_standard_oauth_error_codes_are_not_shown(error: str) -> None:
    with (
        endpoint(lambda h: send_json(h, 400, {"error": error})) as ep,
        pytest.raises(KafkaApiError, match="HTTP 400") as info,
    ):
        oauth_token(config_for(ep.url))
    assert_secret_free(str(info.value))
    assert len(str(info.value)) < 500


def _raw(data: bytes) -> Answer:
    def answer(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.wfile.write(data)
        handler.wfile.flush()
        handler.close_connection = True

    return answer


@pytest.mark.parametrize(
    "raw",
    [
        f"{CLIENT_SECRET}\r\n\r\n".encode(),  # not a status line (BadStatusLine)
        f"HTTP/1.1 2x0 {CLIENT_SECRET}\r\n\r\n".encode(),
        b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{",  # body cut short (IncompleteRead)
        b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 200 + b"\r\n",  # too many headers
    ],
)
def test_broken_http_answers_are_typed_and_secret_free(raw: bytes) -> None:
    with endpoint(_raw(raw)) as ep, pytest.raises(KafkaApiError, match="token endpoint") as info:
        oauth_token(config_for(ep.url))
    assert_secret_free(str(info.value))


def test_oversized_token_response_is_refused() -> None:
    body = {"access_token": TOKEN, "expires_in": 300, "padding": "x" * (2 << 20)}
    with (
        endpoint(lambda h: send_json(h, 200, body)) as ep,
        pytest.raises(KafkaApiError, match="bytes"),
    ):
        oauth_token(config_for(ep.url))


@pytest.mark.parametrize(
    "body, match",
    [
        ({"access_token": "abc\x01auth=Bearer x", "expires_in": 300}, "access_token"),
        ({"access_token": "has space", "expires_in": 300}, "access_token"),
        ({"access_token": "a" * (1 << 20), "expires_in": 300}, "access_token|bytes"),
        ({"access_token": TOKEN, "expires_in": 1e400}, "expires_in"),  # JSON infinity
        ({"access_token": TOKEN, "expires_in": -5}, "expires_in"),
        ({"access_token": TOKEN, "expires_in": "soon"}, "expires_in"),
        (b"[" * 50_000, "JSON"),  # deeper than the JSON parser recurses
        (b"\xff\xfe", "JSON"),
        ([TOKEN], "access_token"),
    ],
)
def test_malformed_token_responses_are_typed(body: Any, match: str) -> None:
    with (
        endpoint(lambda h: send_json(h, 200, body)) as ep,
        pytest.raises(KafkaApiError, match=match) as info,
    ):
        oauth_token(config_for(ep.url))
    assert len(str(info.value)) < 500


@pytest.mark.parametrize("expires_in", [300, 299.5, "300"])
def test_token_response_accepted(expires_in: Any) -> None:
    body = {"access_token": TOKEN, "token_type": "Bearer", "expires_in": expires_in}
    with endpoint(lambda h: send_json(h, 200, body)) as ep:
        assert oauth_token(config_for(ep.url)) == TOKEN
        method, path, headers = ep.requests[0]
    assert (method, path) == ("POST", "/token")
    assert headers["Authorization"].startswith("Basic ")


def test_unreachable_endpoint_is_typed() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/token"
    with pytest.raises(KafkaApiError, match="token endpoint") as info:
        oauth_token(config_for(url))
    assert_secret_free(str(info.value))
