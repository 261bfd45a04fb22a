"""Key and trust stores: PEM, PKCS12 and JKS files (or PEM text options) read into PEM.

Trust stores become PEM CA certificates, key stores a PEM certificate chain and an
unencrypted PKCS#8 PEM private key (held in a :class:`~.config.Secret`), so that a
:class:`~.config.SslConfig` carries them to the executors. PEM and PKCS12 go through the
``cryptography`` package; JKS stores are converted to PKCS12 with the JDK's ``keytool``
(Spark always has a JDK on the driver). Sources: Kafka's ``SslConfigs`` (store options and
their defaults), ``DefaultSslEngineFactory`` (PEM stores, KIP-651).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spark_kafka_py.client.security.config import Secret, option_value
from spark_kafka_py.errors import ConfigError

__all__ = ["load_keystore", "load_truststore"]


def _store_type(kafka: Mapping[str, str], option: str, location: str | None) -> str:
    raw = option_value(kafka, option)
    if raw is None:
        if location is not None and location.lower().endswith((".pem", ".crt", ".cer")):
            return "PEM"
        if location is not None and location.lower().endswith((".p12", ".pfx", ".pkcs12")):
            return "PKCS12"
        return "JKS"  # the Java client's default
    kind = raw.strip().upper()
    if kind not in ("JKS", "PKCS12", "PEM"):
        raise ConfigError(f"Option 'kafka.{option}' must be JKS, PKCS12 or PEM, got {raw!r}")
    return kind


def _read_file(option: str, location: str) -> bytes:
    try:
        return Path(location).expanduser().read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"Option 'kafka.{option}': file {location!r} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"Option 'kafka.{option}': {location!r} is a directory") from None
    except OSError as exc:
        raise ConfigError(
            f"Option 'kafka.{option}': cannot read {location!r}: {exc.strerror}"
        ) from None


def load_truststore(kafka: Mapping[str, str]) -> str | None:
    """The trusted CA certificates (PEM text) named by the ``ssl.truststore.*`` options, or
    ``None`` (the system's CAs): ``ssl.truststore.certificates`` (PEM text) or the file at
    ``ssl.truststore.location`` of ``ssl.truststore.type`` JKS (the default, converted with
    ``keytool``), PKCS12 or PEM, opened with ``ssl.truststore.password``.

    Raises:
        ConfigError: exclusive options both given, a missing or unreadable file, a wrong
            password, a store without certificates; the message names the option.
    """
    location = option_value(kafka, "ssl.truststore.location")
    pem = option_value(kafka, "ssl.truststore.certificates")
    if location is not None and pem is not None:
        raise ConfigError(
            "Options 'kafka.ssl.truststore.location' and 'kafka.ssl.truststore.certificates' "
            "are exclusive; give one"
        )
    if pem is not None:
        kind = (
            _store_type(kafka, "ssl.truststore.type", None)
            if option_value(kafka, "ssl.truststore.type")
            else "PEM"
        )
        if kind != "PEM":
            raise ConfigError(
                "Option 'kafka.ssl.truststore.certificates' needs kafka.ssl.truststore.type=PEM"
            )
        return _check_certs_pem(pem, "ssl.truststore.certificates")
    if location is None:
        return None
    kind = _store_type(kafka, "ssl.truststore.type", location)
    data = _read_file("ssl.truststore.location", location)
    password = option_value(kafka, "ssl.truststore.password")
    if kind == "PEM":
        if password is not None:
            raise ConfigError(
                "Option 'kafka.ssl.truststore.password' is not supported with "
                "kafka.ssl.truststore.type=PEM (PEM trust stores are not encrypted)"
            )
        return _check_certs_pem(data.decode("utf-8", "replace"), "ssl.truststore.location")
    if kind == "JKS":
        data = _jks_to_pkcs12(data, "ssl.truststore", password)
    _key, certs = _load_pkcs12(data, "ssl.truststore", password, want_key=False)
    if not certs:
        raise ConfigError(
            f"Option 'kafka.ssl.truststore.location': {location!r} has no certificates"
        )
    return "".join(certs)


def load_keystore(kafka: Mapping[str, str]) -> tuple[str | None, Secret | None]:
    """The client certificate chain (PEM, leaf first) and private key (unencrypted PKCS#8
    PEM) for mutual TLS, or ``(None, None)``: ``ssl.keystore.certificate.chain`` with
    ``ssl.keystore.key``, or the file at ``ssl.keystore.location`` of ``ssl.keystore.type``
    JKS (the default), PKCS12 or PEM; ``ssl.keystore.password`` opens the store,
    ``ssl.key.password`` an encrypted PEM key.

    Raises:
        ConfigError: exclusive options both given, a missing or unreadable file, a wrong
            password, a store without its private key; the message names the option and
            never contains a password or key.
    """
    location = option_value(kafka, "ssl.keystore.location")
    chain = option_value(kafka, "ssl.keystore.certificate.chain")
    key = option_value(kafka, "ssl.keystore.key")
    key_password = option_value(kafka, "ssl.key.password")
    if location is not None and (chain is not None or key is not None):
        raise ConfigError(
            "Option 'kafka.ssl.keystore.location' and 'kafka.ssl.keystore.certificate.chain'/"
            "'kafka.ssl.keystore.key' are exclusive; give one"
        )
    if chain is not None or key is not None:
        if chain is None or key is None:
            raise ConfigError(
                "Options 'kafka.ssl.keystore.certificate.chain' and 'kafka.ssl.keystore.key' "
                "must be given together"
            )
        certs = _check_certs_pem(chain, "ssl.keystore.certificate.chain")
        return certs, _pem_private_key(key.encode(), "ssl.keystore.key", key_password)
    if location is None:
        return None, None
    kind = _store_type(kafka, "ssl.keystore.type", location)
    data = _read_file("ssl.keystore.location", location)
    password = option_value(kafka, "ssl.keystore.password")
    if kind == "PEM":
        text = data.decode("utf-8", "replace")
        certs = _check_certs_pem(text, "ssl.keystore.location")
        return certs, _pem_private_key(data, "ssl.keystore.location", key_password)
    if kind == "JKS":
        data = _jks_to_pkcs12(data, "ssl.keystore", password)
    key_obj, chain_pems = _load_pkcs12(data, "ssl.keystore", password, want_key=True)
    assert key_obj is not None
    return "".join(chain_pems), key_obj


_PEM_CERT = re.compile(
    r"-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----", re.DOTALL
)


def _check_certs_pem(text: str, option: str) -> str:
    from cryptography import x509

    blocks = _PEM_CERT.findall(text)
    if not blocks:
        raise ConfigError(f"Option 'kafka.{option}' holds no PEM certificate (BEGIN CERTIFICATE)")
    for block in blocks:
        try:
            x509.load_pem_x509_certificate(block.encode("ascii"))
        except ValueError:
            raise ConfigError(f"Option 'kafka.{option}' holds a malformed certificate") from None
    return "\n".join(blocks) + "\n"


def _pem_private_key(data: bytes, option: str, password: str | None) -> Secret:
    from cryptography.hazmat.primitives import serialization

    match = re.search(
        rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.+?-----END \1PRIVATE KEY-----", data, re.DOTALL
    )
    if match is None:
        raise ConfigError(f"Option 'kafka.{option}' holds no PEM private key")
    try:
        key = serialization.load_pem_private_key(
            match.group(0), password.encode() if password is not None else None
        )
    except TypeError:
        if password is None:
            raise ConfigError(
                f"Option 'kafka.{option}': the private key is encrypted; "
                "give kafka.ssl.key.password"
            ) from None
        raise ConfigError(
            f"Option 'kafka.{option}': the private key is not encrypted, but "
            "kafka.ssl.key.password is set"
        ) from None
    except ValueError:
        raise ConfigError(
            f"Option 'kafka.{option}': cannot decrypt or parse the private key (wrong "
            "kafka.ssl.key.password?)"
        ) from None
    return _key_to_pem(key)


def _key_to_pem(key: Any) -> Secret:
    from cryptography.hazmat.primitives import serialization

    return Secret(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode("ascii")
    )


def _load_pkcs12(
    data: bytes, prefix: str, password: str | None, *, want_key: bool
) -> tuple[Secret | None, list[str]]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        hint = "" if password is not None else f" (kafka.{prefix}.password is not set)"
        raise ConfigError(
            f"Option 'kafka.{prefix}.location': not a PKCS12 store, or wrong "
            f"kafka.{prefix}.password{hint}"
        ) from None
    certs = []
    if store.cert is not None:
        certs.append(store.cert.certificate)
    certs.extend(c.certificate for c in store.additional_certs)
    pems = [c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs]
    if not want_key:
        return None, pems
    if store.key is None or store.cert is None:
        raise ConfigError(
            f"Option 'kafka.{prefix}.location': the key store holds no private key with its "
            "certificate"
        )
    return _key_to_pem(store.key), pems


def _jks_to_pkcs12(data: bytes, prefix: str, password: str | None) -> bytes:
    """Convert a JKS store to PKCS12 with the JDK's ``keytool -importkeystore``.

    The key entries must be protected by the store password (``keytool`` converts a whole
    store only then; a different ``ssl.key.password`` needs a PKCS12 or PEM store).

    Raises:
        ConfigError: no ``keytool`` (name ``JAVA_HOME`` or use PKCS12/PEM), no password, or
            keytool refused the store (wrong password, not a JKS file).
    """
    if password is None:
        raise ConfigError(
            f"Option 'kafka.{prefix}.password' is required to read a JKS store "
            f"(kafka.{prefix}.type=JKS, the default)"
        )
    keytool = _keytool()
    if keytool is None:
        raise ConfigError(
            f"Option 'kafka.{prefix}.location': reading a JKS store needs the JDK's keytool "
            "(set JAVA_HOME), or convert the store to PKCS12 or PEM"
        )
    with tempfile.TemporaryDirectory(prefix="spark-kafka-py-jks-") as tmp:
        src = Path(tmp, "in.jks")
        dst = Path(tmp, "out.p12")
        src.write_bytes(data)
        os.chmod(src, 0o600)
        cmd = [
            keytool, "-importkeystore", "-noprompt",
            "-srckeystore", str(src), "-srcstoretype", "JKS",
            "-destkeystore", str(dst), "-deststoretype", "PKCS12",
        ]  # fmt: skip
        env = dict(os.environ)
        env["SKP_SRC"] = password
        env["SKP_DST"] = password
        cmd += ["-srcstorepass:env", "SKP_SRC", "-deststorepass:env", "SKP_DST"]
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=False)
        if proc.returncode != 0 or not dst.exists():
            out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            reason = "wrong password" if "password" in out.lower() else "not a JKS store"
            raise ConfigError(
                f"Option 'kafka.{prefix}.location': keytool cannot read the JKS store "
                f"({reason}; check kafka.{prefix}.password)"
            )
        return dst.read_bytes()


def _keytool() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "keytool").exists():
        return str(Path(home, "bin", "keytool"))
    return shutil.which("keytool")
