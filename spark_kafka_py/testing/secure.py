"""A local Kafka broker with TLS, mutual-TLS and SASL listeners, and the PKI it needs.

:func:`make_pki` writes a throw-away certificate authority and certificates (``cryptography``
package; JKS copies with the JDK's ``keytool``): a broker certificate for ``localhost`` (and
deliberately not for ``127.0.0.1``, so connecting by IP address is a host-name mismatch), an
expired broker certificate, a client certificate for mutual TLS, and a second CA nobody
trusts.

:class:`SecureKafka` starts one KRaft node (:class:`~spark_kafka_py.testing.broker.
LocalKafkaCluster`) whose listeners are:

==================  ===============  ===========================================================
name                protocol         what for
==================  ===============  ===========================================================
PLAINTEXT           PLAINTEXT        admin tools (super user ``ANONYMOUS``), inter-broker
SSL                 SSL              TLS, no client certificate
MTLS                SSL              ``ssl.client.auth=required``
EXPIRED             SSL              serves an expired certificate
SASL_PLAINTEXT      SASL_PLAINTEXT   PLAIN, SCRAM-SHA-256/512, OAUTHBEARER (unsecured JWS)
SASL_SSL            SASL_SSL         the same mechanisms over TLS
REAUTH              SASL_PLAINTEXT   PLAIN and OAUTHBEARER only, ``connections.max.reauth.ms``
==================  ===============  ===========================================================

SCRAM users are created with Kafka's own ``kafka-configs`` (``kafka.admin.ConfigCommand``),
ACLs with ``kafka-acls`` (``org.apache.kafka.tools.AclCommand``); authorization is Kafka's
``StandardAuthorizer`` with ``allow.everyone.if.no.acl.found=true``, so only resources that
got ACLs are restricted. Broker settings: Kafka's documentation, "Security" (SSL, SASL,
authorization), KIP-368 (``connections.max.reauth.ms``), KIP-255 (unsecured OAUTHBEARER).
"""

from __future__ import annotations

import datetime as dt
import secrets
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from spark_kafka_py.testing.broker import LocalKafkaCluster, _free_ports
from spark_kafka_py.testing.jvm import java_executable
from spark_kafka_py.testing.tools import run_tool

if TYPE_CHECKING:  # imported where used: cryptography loads only for a test PKI
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

__all__ = ["USERS", "Pki", "SecureKafka", "make_pki"]

#: SASL users of :class:`SecureKafka` (PLAIN from the JAAS config, SCRAM via kafka-configs).
USERS: Mapping[str, str] = {
    "admin": "admin-secret-Xq7",
    "alice": "alice-secret-P3w",
    "bob": "bob-secret-K9z",
}

CONFIG_COMMAND = "kafka.admin.ConfigCommand"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"

_PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
_OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
_UNSECURED_VALIDATOR = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured."
    "OAuthBearerUnsecuredValidatorCallbackHandler"
)


@dataclass(frozen=True)
class Pki:
    """Paths of the test PKI (see :func:`make_pki`); ``password`` protects every store/key."""

    directory: Path
    password: str
    ca_pem: Path
    other_ca_pem: Path
    broker_p12: Path
    expired_p12: Path
    client_cert_pem: Path
    client_key_pem: Path  # PKCS#8, encrypted with ``password``
    client_chain_and_key_pem: Path  # key (encrypted) + certificate, one file
    client_p12: Path
    client_jks: Path
    truststore_p12: Path
    truststore_jks: Path


def _name(cn: str) -> x509.Name:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(
    subject: str,
    key: EllipticCurvePrivateKey,
    issuer: str,
    issuer_key: EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    dns: Sequence[str] = (),
    not_before: dt.datetime | None = None,
    not_after: dt.datetime | None = None,
) -> x509.Certificate:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or now - dt.timedelta(days=1))
        .not_valid_after(not_after or now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _keytool(*args: str) -> None:
    keytool = str(Path(java_executable()).with_name("keytool"))
    proc = subprocess.run([keytool, *args], capture_output=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"keytool {args[0]} failed: {(proc.stdout + proc.stderr).decode(errors='replace')}"
        )


def make_pki(directory: str | Path, password: str | None = None) -> Pki:
    """Write a test CA, broker/client certificates and stores (PEM, PKCS12, JKS) to ``directory``.

    Keys are EC P-256. The broker certificate names ``localhost`` only; the expired one
    stopped being valid yesterday. Returns the paths.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    password = password or "pw-" + secrets.token_hex(8)
    pw = password.encode()
    now = dt.datetime.now(dt.timezone.utc)

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    ca_key, other_key = key(), key()
    ca = _cert("spark-kafka-py test CA", ca_key, "spark-kafka-py test CA", ca_key, ca=True)
    other = _cert("untrusted CA", other_key, "untrusted CA", other_key, ca=True)
    broker_key, expired_key, client_key = key(), key(), key()
    broker = _cert("localhost", broker_key, "spark-kafka-py test CA", ca_key, dns=["localhost"])
    expired = _cert(
        "localhost", expired_key, "spark-kafka-py test CA", ca_key, dns=["localhost"],
        not_before=now - dt.timedelta(days=10), not_after=now - dt.timedelta(days=1),
    )  # fmt: skip
    client = _cert("client", client_key, "spark-kafka-py test CA", ca_key)

    def pem(cert: x509.Certificate) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    enc = serialization.BestAvailableEncryption(pw)
    paths = {
        "ca_pem": d / "ca.pem",
        "other_ca_pem": d / "other-ca.pem",
        "broker_p12": d / "broker.p12",
        "expired_p12": d / "expired.p12",
        "client_cert_pem": d / "client.crt.pem",
        "client_key_pem": d / "client.key.pem",
        "client_chain_and_key_pem": d / "client.pem",
        "client_p12": d / "client.p12",
        "client_jks": d / "client.jks",
        "truststore_p12": d / "truststore.p12",
        "truststore_jks": d / "truststore.jks",
    }
    for path in paths.values():  # keytool would add to an old store
        path.unlink(missing_ok=True)
    paths["ca_pem"].write_bytes(pem(ca))
    paths["other_ca_pem"].write_bytes(pem(other))
    for name, k, c in (("broker_p12", broker_key, broker), ("expired_p12", expired_key, expired)):
        paths[name].write_bytes(pkcs12.serialize_key_and_certificates(b"broker", k, c, [ca], enc))
    key_pem = client_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc
    )
    paths["client_cert_pem"].write_bytes(pem(client) + pem(ca))
    paths["client_key_pem"].write_bytes(key_pem)
    paths["client_chain_and_key_pem"].write_bytes(key_pem + pem(client) + pem(ca))
    paths["client_p12"].write_bytes(
        pkcs12.serialize_key_and_certificates(b"client", client_key, client, [ca], enc)
    )
    _keytool(
        "-importkeystore", "-noprompt", "-srckeystore", str(paths["client_p12"]),
        "-srcstoretype", "PKCS12", "-srcstorepass", password,
        "-destkeystore", str(paths["client_jks"]), "-deststoretype", "JKS",
        "-deststorepass", password, "-destkeypass", password,
    )  # fmt: skip
    for store, kind in (("truststore_p12", "PKCS12"), ("truststore_jks", "JKS")):
        _keytool(
            "-importcert", "-noprompt", "-alias", "ca", "-file", str(paths["ca_pem"]),
            "-keystore", str(paths[store]), "-storetype", kind, "-storepass", password,
        )  # fmt: skip
    return Pki(directory=d, password=password, **paths)


class SecureKafka:
    """One local Kafka node with the listeners in the module docstring.

    Args:
        pki: from :func:`make_pki`.
        reauth_ms: ``connections.max.reauth.ms`` of the REAUTH listener (KIP-368), ms.
        heap: the broker's JVM heap.
        kafka_version: the broker's Kafka release (default: that of
            :class:`~spark_kafka_py.testing.broker.LocalKafkaCluster`).

    Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    LISTENERS = ("SSL", "MTLS", "EXPIRED", "SASL_PLAINTEXT", "SASL_SSL", "REAUTH")
    _PROTOCOLS = {
        "SSL": "SSL",
        "MTLS": "SSL",
        "EXPIRED": "SSL",
        "SASL_PLAINTEXT": "SASL_PLAINTEXT",
        "SASL_SSL": "SASL_SSL",
        "REAUTH": "SASL_PLAINTEXT",
    }

    def __init__(
        self,
        pki: Pki,
        *,
        reauth_ms: int = 4000,
        heap: str = "384m",
        kafka_version: str | None = None,
    ) -> None:
        self.pki = pki
        self.reauth_ms = reauth_ms
        self.ports = dict(zip(self.LISTENERS, _free_ports(len(self.LISTENERS)), strict=True))
        self.cluster = LocalKafkaCluster(
            1, kafka_version=kafka_version, heap=heap, server_props=self.server_props()
        )

    def server_props(self) -> dict[str, str]:
        """The ``server.properties`` overrides (listeners, TLS stores, SASL, authorizer)."""
        p, pki = self.pki.password, self.pki
        listeners = [
            "PLAINTEXT://127.0.0.1:${broker_port}",
            "CONTROLLER://127.0.0.1:${controller_port}",
        ]
        advertised = ["PLAINTEXT://127.0.0.1:${broker_port}"]
        for name, port in self.ports.items():
            listeners.append(f"{name}://127.0.0.1:{port}")
            advertised.append(f"{name}://localhost:{port}")
        protocol_map = ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"] + [
            f"{n}:{proto}" for n, proto in self._PROTOCOLS.items()
        ]
        users = " ".join(f'user_{u}="{pw}"' for u, pw in USERS.items())
        props = {
            "listeners": ",".join(listeners),
            "advertised.listeners": ",".join(advertised),
            "listener.security.protocol.map": ",".join(protocol_map),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(pki.broker_p12),
            "ssl.keystore.password": p,
            "ssl.key.password": p,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki.ca_pem),
            "listener.name.mtls.ssl.client.auth": "required",
            "listener.name.expired.ssl.keystore.type": "PKCS12",
            "listener.name.expired.ssl.keystore.location": str(pki.expired_p12),
            "listener.name.expired.ssl.keystore.password": p,
            "listener.name.expired.ssl.key.password": p,
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
            "super.users": "User:ANONYMOUS;User:admin",
            "listener.name.reauth.connections.max.reauth.ms": str(self.reauth_ms),
            "listener.name.reauth.sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
        }
        for name in ("sasl_plaintext", "sasl_ssl", "reauth"):
            pre = f"listener.name.{name}."
            props[pre + "plain.sasl.jaas.config"] = f"{_PLAIN} required {users};"
            props[pre + "scram-sha-256.sasl.jaas.config"] = f"{_SCRAM} required;"
            props[pre + "scram-sha-512.sasl.jaas.config"] = f"{_SCRAM} required;"
            props[pre + "oauthbearer.sasl.jaas.config"] = (
                f'{_OAUTH} required unsecuredLoginStringClaim_sub="admin";'
            )
            props[pre + "oauthbearer.sasl.server.callback.handler.class"] = _UNSECURED_VALIDATOR
        return props

    # ---------------------------------------------------------------------------- lifecycle

    def start(self) -> SecureKafka:
        """Start the node and create the SCRAM users (SHA-256 and SHA-512 for each user)."""
        self.cluster.start()
        try:
            for user, password in USERS.items():
                for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                    # one mechanism per call: Kafka refuses two changes of one user at once
                    self.config_command(
                        [
                            "--alter", "--entity-type", "users", "--entity-name", user,
                            "--add-config", f"{mechanism}=[iterations=4096,password={password}]",
                        ]
                    )  # fmt: skip
        except BaseException:
            self.cluster.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the node (idempotent)."""
        self.cluster.stop()

    def __enter__(self) -> SecureKafka:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------------------- access

    @property
    def plaintext_bootstrap(self) -> str:
        """The PLAINTEXT listener (admin tools: topic creation, producing)."""
        return self.cluster.bootstrap_servers

    def bootstrap(self, listener: str, host: str = "localhost") -> str:
        """``host:port`` of ``listener`` (one of :attr:`LISTENERS`)."""
        return f"{host}:{self.ports[listener]}"

    def config_command(self, args: Sequence[str]) -> str:
        """Run ``kafka-configs`` against the PLAINTEXT listener; returns its stdout."""
        return run_tool(
            CONFIG_COMMAND, ["--bootstrap-server", self.plaintext_bootstrap, *args],
            classpath=self.cluster.tools_classpath,
        ).stdout  # fmt: skip

    def acl_command(self, args: Sequence[str]) -> str:
        """Run ``kafka-acls`` against the PLAINTEXT listener; returns its stdout."""
        return run_tool(
            ACL_COMMAND, ["--bootstrap-server", self.plaintext_bootstrap, *args],
            classpath=self.cluster.tools_classpath,
        ).stdout  # fmt: skip

    def allow(self, principal: str, operation: str, *, topic: str | None = None,
              group: str | None = None) -> None:  # fmt: skip
        """Add an ALLOW ACL for ``principal`` (``User:alice``) on a topic or a group."""
        args = ["--add", "--allow-principal", principal, "--operation", operation]
        if topic is not None:
            args += ["--topic", topic]
        if group is not None:
            args += ["--group", group]
        self.acl_command(args)
