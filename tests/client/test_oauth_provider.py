"""``kafka.sasl.oauthbearer.token.provider`` (no broker): what a provider may return, the
refresh of expiring tokens (Kafka's Java login refresh, KIP-255), the provider's argument
(``kafka.sasl.oauthbearer.config``), and AWS MSK IAM's own signer as a provider.

The providers are functions of this module, loaded by the client as ``module:function``;
each test uses its own, so the per-process token cache never mixes them."""

from __future__ import annotations

import base64
import importlib
import importlib.util
import time
import urllib.parse
from collections import Counter

import pytest

from spark_kafka_py.client import sasl
from spark_kafka_py.client.sasl import (
    REFRESH_BUFFER_MS,
    REFRESH_MIN_PERIOD_MS,
    oauth_token,
    token_refresh_ms,
)
from spark_kafka_py.client.security import (
    REDACTED,
    SaslConfig,
    Secret,
    parse_security_options,
    redact_options,
    unsecured_jws,
)
from spark_kafka_py.errors import ConfigError, KafkaApiError

HERE = "tests.client.test_oauth_provider"
#: Calls of this module's providers. The client imports this module by name as ``HERE``,
#: which may be another module object than the one pytest runs: read through :func:`calls`.
CALLS: Counter[str] = Counter()


def calls() -> Counter[str]:
    """The call counts kept by the module the client loaded the providers from."""
    counter: Counter[str] = importlib.import_module(HERE).CALLS
    return counter


def _config(function: str, argument: str | None = None) -> SaslConfig:
    return SaslConfig(
        "OAUTHBEARER",
        token_provider=f"{HERE}:{function}",
        token_provider_argument=Secret(argument) if argument is not None else None,
    )


def _now_ms() -> int:
    return int(time.time() * 1000)


# ------------------------------------------------------------------------- refresh schedule


def test_refresh_of_an_msk_token_keeps_the_five_minute_buffer() -> None:
    """A 15-minute token (MSK IAM): 80-85% would be 12-12.75 min, inside the 300 s buffer, so
    the Java rule refreshes at expiry - 300 s, whatever the jitter."""
    signed = 1_700_000_000_000
    expiry = signed + 900_000
    for jitter in (0.0, 0.5, 0.999):
        assert token_refresh_ms(signed, expiry, jitter) == signed + 600_000
    assert REFRESH_BUFFER_MS == 300_000 and REFRESH_MIN_PERIOD_MS == 60_000


def test_refresh_of_long_and_short_tokens() -> None:
    t0 = 1_700_000_000_000
    # one hour: 80% is 48 min, before the buffer and after the minimum period
    assert token_refresh_ms(t0, t0 + 3_600_000, 0.0) == t0 + 2_880_000
    assert token_refresh_ms(t0, t0 + 3_600_000, 1.0) == t0 + 3_060_000  # 85%
    # under min period + buffer (6 min): 80-85% of the lifetime, as Java does
    assert token_refresh_ms(t0, t0 + 4_000, 0.0) == t0 + 3_200
    assert token_refresh_ms(t0, t0 + 4_000, 1.0) == t0 + 3_400
    assert token_refresh_ms(t0, t0 + 300_000, 0.0) == t0 + 240_000
    # 7 min: 80% (5.6 min) is inside the buffer, whose start (2 min) is after the minimum
    assert token_refresh_ms(t0, t0 + 420_000, 0.0) == t0 + 120_000


# ----------------------------------------------------------------------- what it may return


def string_provider() -> str:
    CALLS["string"] += 1
    return unsecured_jws({"sub": "s"}, 60)


def test_a_string_provider_is_called_at_every_authentication() -> None:
    before = calls()["string"]
    first, second = oauth_token(_config("string_provider")), oauth_token(_config("string_provider"))
    assert first.count(".") == 2 and second.count(".") == 2
    assert calls()["string"] == before + 2


def expiring_provider() -> tuple[str, int]:
    CALLS["expiring"] += 1
    return f"tok{CALLS['expiring']}", _now_ms() + 500


def test_an_expiring_token_is_reused_until_its_refresh_time() -> None:
    config = _config("expiring_provider")
    first = oauth_token(config)
    assert oauth_token(config) == first and calls()["expiring"] == 1  # cached
    time.sleep(0.45)  # past 85% of its 500 ms: due for refresh, not expired
    second = oauth_token(config)
    assert second != first and calls()["expiring"] == 2
    assert oauth_token(config) == second


def regional_provider(region: str) -> tuple[str, int]:
    CALLS[f"region:{region}"] += 1
    return f"signed-for-{region}", _now_ms() + 900_000


def test_the_argument_is_passed_and_keys_the_cache() -> None:
    east, west = (
        _config("regional_provider", "us-east-1"),
        _config("regional_provider", "eu-west-1"),
    )
    assert oauth_token(east) == "signed-for-us-east-1"
    assert oauth_token(west) == "signed-for-eu-west-1"
    assert oauth_token(east) == "signed-for-us-east-1"
    assert calls()["region:us-east-1"] == 1 and calls()["region:eu-west-1"] == 1


def expired_once_provider() -> tuple[str, int]:
    CALLS["expired_once"] += 1
    if CALLS["expired_once"] == 1:
        return "stale", _now_ms() - 1_000
    return "fresh", _now_ms() + 60_000


def always_expired_provider() -> tuple[str, int]:
    CALLS["always_expired"] += 1
    return "stale", _now_ms() - 1_000


def test_an_expired_token_is_never_returned() -> None:
    assert oauth_token(_config("expired_once_provider")) == "fresh"
    assert calls()["expired_once"] == 2
    with pytest.raises(KafkaApiError) as info:
        oauth_token(_config("always_expired_provider"))
    text = str(info.value)
    assert "SASL_AUTHENTICATION_FAILED" in text and "expired token twice" in text
    assert "kafka.sasl.oauthbearer.token.provider" in text and "always_expired_provider" in text
    assert "stale" not in text  # the token itself is never shown
    assert calls()["always_expired"] == 2


def seconds_provider() -> tuple[str, int]:
    return "t", int(time.time()) + 900  # confluent-kafka's oauth_cb convention


def float_provider() -> tuple[str, float]:
    return "t", time.time() * 1000 + 900_000


def bool_provider() -> tuple[str, bool]:
    return "t", True


def triple_provider() -> tuple[str, int, str]:
    return "t", _now_ms() + 900_000, "principal"


def empty_provider() -> str:
    return ""


def none_provider() -> None:
    return None


def spaced_provider() -> str:
    return "two words\x01auth=Bearer x"


def bytes_provider() -> bytes:
    return b"token"


not_callable = "a string"


@pytest.mark.parametrize(
    ("function", "says"),
    [
        ("seconds_provider", "seconds, not milliseconds"),
        ("float_provider", "expiry of type float, not int"),
        ("bool_provider", "expiry of type bool, not int"),
        ("triple_provider", "a tuple of 3 items"),
        ("empty_provider", "returned an empty string"),
        ("none_provider", "returned NoneType"),
        ("bytes_provider", "returned bytes"),
        ("spaced_provider", "RFC 6750 b64token"),
        ("not_callable", "not a function"),
        ("no_such_function", "cannot load"),
    ],
)
def test_bad_returns_are_config_errors_naming_the_option(function: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        oauth_token(_config(function))
    text = str(info.value)
    assert "kafka.sasl.oauthbearer.token.provider" in text and says in text
    assert "two words" not in text  # nor the token


class _NoCredentials(Exception):
    pass


def failing_provider(region: str) -> tuple[str, int]:
    raise _NoCredentials(f"Unable to locate credentials for {region}")


def test_a_provider_that_raises_gives_a_typed_error_chained_to_its_exception() -> None:
    with pytest.raises(KafkaApiError) as info:
        oauth_token(_config("failing_provider", "us-east-1"))
    text = str(info.value)
    assert "SASL_AUTHENTICATION_FAILED" in text
    assert f"{HERE}:failing_provider(<kafka.sasl.oauthbearer.config>)" in text
    assert "kafka.sasl.oauthbearer.token.provider" in text
    assert "_NoCredentials: Unable to locate credentials for us-east-1" in text
    cause = info.value.__cause__  # the provider's own exception (of the module the client loaded)
    assert type(cause).__name__ == "_NoCredentials" and "us-east-1" in str(cause)


# ----------------------------------------------------------------------------------- options

_BASE = {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}


def test_the_argument_option_is_parsed_secret_and_needs_a_provider() -> None:
    cfg = parse_security_options(
        {
            **_BASE,
            "sasl.oauthbearer.token.provider": "m.n:f",
            "sasl.oauthbearer.config": "us-east-1",
            "ssl.truststore.certificates": "",
        }
    )
    assert cfg.sasl is not None and cfg.sasl.token_provider == "m.n:f"
    assert cfg.sasl.token_provider_argument == Secret("us-east-1")
    assert "us-east-1" not in repr(cfg)
    with pytest.raises(ConfigError, match=r"kafka\.sasl\.oauthbearer\.config.*token\.provider"):
        parse_security_options(
            {
                **_BASE,
                "sasl.oauthbearer.token": "abc",
                "sasl.oauthbearer.config": "us-east-1",
                "ssl.truststore.certificates": "",
            }
        )
    assert redact_options({"kafka.sasl.oauthbearer.config": "x"}) == {
        "kafka.sasl.oauthbearer.config": REDACTED
    }


def test_aws_msk_iam_mechanism_points_to_the_provider() -> None:
    with pytest.raises(ConfigError) as info:
        parse_security_options({**_BASE, "sasl.mechanism": "AWS_MSK_IAM"})
    text = str(info.value)
    assert "kafka.sasl.mechanism" in text and "AWS_MSK_IAM" in text
    assert "aws_msk_iam_sasl_signer.MSKAuthTokenProvider:generate_auth_token" in text


# ------------------------------------------------------------------- AWS MSK IAM's own signer

_MSK_SIGNER = "aws_msk_iam_sasl_signer"


def test_msk_iam_signer_serves_as_the_provider_without_a_wrapper(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AWS's signer, given as the provider with the region as argument: SigV4 presigning is
    local, so static (made-up) credentials from the environment suffice. Its token is the
    base64url of a presigned ``kafka-cluster:Connect`` URL valid 900 s; ours is reused.
    (The signer is in the test extra, not a dependency of the package.)"""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    config = SaslConfig(
        "OAUTHBEARER",
        token_provider=f"{_MSK_SIGNER}.MSKAuthTokenProvider:generate_auth_token",
        token_provider_argument=Secret("eu-central-1"),
    )
    key = (config.token_provider, config.token_provider_argument)
    calls = sasl._PROVIDED.calls.get(key, 0)
    token = oauth_token(config)
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    assert parts.netloc == "kafka.eu-central-1.amazonaws.com"
    assert query["Action"] == ["kafka-cluster:Connect"] and query["X-Amz-Expires"] == ["900"]
    assert query["X-Amz-Credential"][0].startswith("AKIAIOSFODNN7EXAMPLE/")
    time.sleep(1.1)  # a new signature would carry another X-Amz-Date
    assert oauth_token(config) == token
    assert sasl._PROVIDED.calls[key] == calls + 1
