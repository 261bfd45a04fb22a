"""``sasl.jaas.config`` values: JAAS file syntax, one login module with its options."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from spark_kafka_py.errors import ConfigError

__all__ = ["JaasConfig", "parse_jaas_config"]


@dataclass(frozen=True, slots=True)
class JaasConfig:
    """One parsed ``sasl.jaas.config`` entry: ``<LoginModule> <flag> key=value ... ;``.

    ``options`` values may be secrets; this class's repr hides them.
    """

    login_module: str
    flag: str
    options: Mapping[str, str] = field(repr=False)


_JAAS_TOKEN = re.compile(
    r"""\s*(?:
        (?P<quoted>"(?:[^"\\]|\\.)*")       # "quoted value"
      | (?P<eq>=)
      | (?P<semi>;)
      | (?P<word>[^\s=;"]+)
    )""",
    re.VERBOSE | re.DOTALL,
)


def parse_jaas_config(text: str) -> JaasConfig:
    """Parse a Kafka ``sasl.jaas.config`` value (JAAS file syntax, one login module).

    ``org.example.LoginModule required user="alice" password="s3cret";``: the module class,
    a control flag (required, requisite, sufficient, optional), ``key=value`` options with
    values quoted or bare, and a closing ``;`` (Kafka's ``JaasConfig`` requires exactly one
    module). Source: Kafka ``org.apache.kafka.common.security.JaasConfig``, Java's
    ``javax.security.auth.login.ConfigFile`` syntax.

    Raises:
        ConfigError: naming ``kafka.sasl.jaas.config`` and what is wrong -- never quoting
            option values, which may be passwords.
    """
    name = "kafka.sasl.jaas.config"
    tokens: list[tuple[str, str]] = []
    pos = 0
    stripped = text.strip()
    while pos < len(stripped):
        m = _JAAS_TOKEN.match(stripped, pos)
        if m is None or m.end() == pos:
            raise ConfigError(f"Option '{name}': unbalanced quotes or bad character")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind)))
        while pos < len(stripped) and stripped[pos].isspace():
            pos += 1
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise ConfigError(
            f"Option '{name}' must look like '<LoginModule class> required key=\"value\" ...;'"
        )
    module, flag = tokens[0][1], tokens[1][1].lower()
    if flag not in ("required", "requisite", "sufficient", "optional"):
        raise ConfigError(
            f"Option '{name}': login module control flag must be required, requisite, "
            f"sufficient or optional, got {tokens[1][1]!r}"
        )
    if tokens[-1][0] != "semi":
        raise ConfigError(f"Option '{name}' must end with ';'")
    body = tokens[2:-1]
    if any(kind == "semi" for kind, _ in body):
        raise ConfigError(f"Option '{name}' must hold exactly one login module")
    options: dict[str, str] = {}
    i = 0
    while i < len(body):
        if len(body) - i < 3:
            raise ConfigError(f"Option '{name}': expected key=value after {module}")
        (k_kind, key), (e_kind, _), (v_kind, value) = body[i], body[i + 1], body[i + 2]
        if k_kind != "word" or e_kind != "eq" or v_kind not in ("word", "quoted"):
            raise ConfigError(f"Option '{name}': expected key=value after {module}")
        if v_kind == "quoted":
            value = re.sub(r"\\(.)", r"\1", value[1:-1], flags=re.DOTALL)
        options[key] = value
        i += 3
    return JaasConfig(module, flag, options)
