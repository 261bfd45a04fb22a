"""A Kerberized local Kafka broker: a real KDC (:class:`~.kdc.LocalKdc`) and one KRaft node
with a SASL/GSSAPI listener, its own Kerberos being the JVM's.

:class:`KerberizedKafka` starts

- MIT Kerberos's KDC for realm ``EXAMPLE.COM``, with the broker's service principal
  ``kafka/localhost`` and the client principals of :data:`CLIENTS`, each in a keytab of its
  own (:meth:`KerberizedKafka.keytab`);
- one Kafka node whose listeners are ``PLAINTEXT`` (admin tools, inter-broker, the
  controller) and ``GSSAPI`` (``SASL_PLAINTEXT``, mechanisms GSSAPI and SCRAM-SHA-512, the
  latter for delegation tokens), advertised as ``localhost`` so clients ask for the ticket of
  ``kafka/localhost@EXAMPLE.COM``; delegation tokens are enabled
  (``delegation.token.secret.key``), with ``token_expiry_ms`` as their expiry time, and,
  with ``reauth_ms``, ``connections.max.reauth.ms`` on the GSSAPI listener (KIP-368).

Client settings for our client: :meth:`KerberizedKafka.client_options` (``kafka.``-prefixed
options a query takes); for Kafka's Java tools: :meth:`KerberizedKafka.java_client_properties`
and :meth:`KerberizedKafka.jvm_options` (``-Djava.security.krb5.conf``).

Sources: Kafka's documentation, "Authentication using SASL/Kerberos" and "Delegation tokens";
MIT Kerberos's ``kdc.conf``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType

from spark_kafka_py.testing.broker import LocalKafkaCluster, _free_ports
from spark_kafka_py.testing.kdc import LocalKdc

__all__ = ["CLIENTS", "SERVICE", "KerberizedKafka", "krb5_config"]


@contextlib.contextmanager
def krb5_config(path: str | os.PathLike[str]) -> Iterator[None]:
    """Point this process's MIT Kerberos at ``path`` (``KRB5_CONFIG``) inside the ``with``
    block; the previous value (or its absence) comes back after it."""
    before = os.environ.get("KRB5_CONFIG")
    os.environ["KRB5_CONFIG"] = str(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("KRB5_CONFIG", None)
        else:
            os.environ["KRB5_CONFIG"] = before


#: The broker's Kerberos service name (``sasl.kerberos.service.name``).
SERVICE = "kafka"
#: Client principals (short names) created with a keytab each.
CLIENTS = ("app", "alice")
_KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"


class KerberizedKafka:
    """A KDC and a one-node Kafka cluster with a GSSAPI listener.

    Args:
        heap: the broker's JVM heap.
        token_expiry_ms: ``delegation.token.expiry.time.ms`` (renewal needed before), ms.
        token_max_lifetime_ms: ``delegation.token.max.lifetime.ms``, ms.
        ticket_lifetime_s: the KDC's longest ticket, seconds.
        reauth_ms: ``connections.max.reauth.ms`` of the GSSAPI listener (KIP-368), ms: the
            broker closes a connection that has not re-authenticated within it; None (the
            broker's default, 0) for never.
    """

    def __init__(
        self,
        *,
        heap: str = "384m",
        token_expiry_ms: int = 24 * 3600 * 1000,
        token_max_lifetime_ms: int = 7 * 24 * 3600 * 1000,
        ticket_lifetime_s: int = 3600,
        reauth_ms: int | None = None,
    ) -> None:
        self.kdc = LocalKdc(ticket_lifetime_s=ticket_lifetime_s)
        self.reauth_ms = reauth_ms
        self.heap = heap
        self.token_expiry_ms = token_expiry_ms
        self.token_max_lifetime_ms = token_max_lifetime_ms
        self.gssapi_port = 0
        self.cluster: LocalKafkaCluster | None = None
        self._keytabs: dict[str, Path] = {}

    # ---------------------------------------------------------------------------- lifecycle

    def start(self) -> KerberizedKafka:
        """Start the KDC, make the principals and keytabs, start the broker.

        Raises:
            spark_kafka_py.testing.kdc.KdcError: the KDC could not start.
            spark_kafka_py.testing.broker.BrokerStartError: the broker could not start.
        """
        self.kdc.start()
        try:
            self._keytabs[f"{SERVICE}/localhost"] = self.kdc.keytab(f"{SERVICE}/localhost")
            for name in CLIENTS:
                self._keytabs[name] = self.kdc.keytab(name)
            (self.gssapi_port,) = _free_ports(1)
            self.cluster = LocalKafkaCluster(
                1,
                heap=self.heap,
                server_props=self.server_props(),
                jvm_options=self.jvm_options(),
            )
            self.cluster.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the broker and the KDC (idempotent)."""
        cluster, self.cluster = self.cluster, None
        try:
            if cluster is not None:
                cluster.stop()
        finally:
            self.kdc.stop()

    def __enter__(self) -> KerberizedKafka:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---------------------------------------------------------------------------- settings

    @property
    def realm(self) -> str:
        return self.kdc.realm

    @property
    def krb5_conf(self) -> Path:
        """The realm's ``krb5.conf`` (``KRB5_CONFIG``, ``-Djava.security.krb5.conf``)."""
        return self.kdc.krb5_conf

    def jvm_options(self) -> list[str]:
        """JVM options of a Java process that uses this realm."""
        return [f"-Djava.security.krb5.conf={self.kdc.krb5_conf}"]

    def keytab(self, name: str) -> Path:
        """The keytab of principal ``name`` (a short name of :data:`CLIENTS`, or the
        broker's ``kafka/localhost``)."""
        return self._keytabs[name]

    def principal(self, name: str) -> str:
        return self.kdc.principal(name)

    def jaas(self, name: str) -> str:
        """``sasl.jaas.config`` logging ``name`` in from its keytab (the JDK's module)."""
        return (
            f'{_KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{self.keytab(name)}" '
            f'principal="{self.principal(name)}";'
        )

    @property
    def bootstrap(self) -> str:
        """The GSSAPI listener, ``localhost:<port>``."""
        return f"localhost:{self.gssapi_port}"

    @property
    def plaintext_bootstrap(self) -> str:
        """The unauthenticated listener (admin tools)."""
        assert self.cluster is not None, "not started"
        return self.cluster.bootstrap_servers

    def client_options(self, name: str = "app") -> dict[str, str]:
        """Options of a ``format("pykafka")`` query (or a client) authenticating as ``name``
        with GSSAPI from its keytab."""
        return {
            "kafka.bootstrap.servers": self.bootstrap,
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "GSSAPI",
            "kafka.sasl.kerberos.service.name": SERVICE,
            "kafka.sasl.jaas.config": self.jaas(name),
        }

    def java_client_properties(self, name: str = "app") -> Mapping[str, str]:
        """Kafka Java client properties authenticating as ``name`` (with :meth:`jvm_options`)."""
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "GSSAPI",
            "sasl.kerberos.service.name": SERVICE,
            "sasl.jaas.config": self.jaas(name),
        }

    def server_props(self) -> dict[str, str]:
        """The broker's ``server.properties`` overrides."""
        broker_jaas = self.jaas(f"{SERVICE}/localhost")
        pre = "listener.name.gssapi."
        props = {
            "listeners": (
                "PLAINTEXT://127.0.0.1:${broker_port},CONTROLLER://127.0.0.1:${controller_port},"
                f"GSSAPI://127.0.0.1:{self.gssapi_port}"
            ),
            "advertised.listeners": (
                f"PLAINTEXT://127.0.0.1:${{broker_port}},GSSAPI://localhost:{self.gssapi_port}"
            ),
            "listener.security.protocol.map": (
                "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,GSSAPI:SASL_PLAINTEXT"
            ),
            "sasl.enabled.mechanisms": "GSSAPI,SCRAM-SHA-512",
            "sasl.kerberos.service.name": SERVICE,
            pre + "gssapi.sasl.jaas.config": broker_jaas,
            pre + "scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "delegation.token.secret.key": secrets.token_hex(24),
            "delegation.token.expiry.time.ms": str(self.token_expiry_ms),
            "delegation.token.max.lifetime.ms": str(self.token_max_lifetime_ms),
            "delegation.token.expiry.check.interval.ms": "1000",
        }
        if self.reauth_ms is not None:
            props[pre + "connections.max.reauth.ms"] = str(self.reauth_ms)
        return props
