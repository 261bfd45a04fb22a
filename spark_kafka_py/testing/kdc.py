"""A throw-away MIT Kerberos KDC for tests: a realm, principals and keytabs in one directory.

:class:`LocalKdc` runs MIT Kerberos's own ``krb5kdc`` (Debian's ``krb5-kdc`` package) in the
foreground on a free TCP port, with its database, stash, configuration and log in a
temporary directory, so nothing outside it (``/etc/krb5.conf``, ``/etc/krb5kdc``) is read or
written. Principals and keytabs are made with ``kadmin.local`` on that database.

Clients find the realm through the generated ``krb5.conf`` (:attr:`LocalKdc.krb5_conf`):
``KRB5_CONFIG`` for MIT's library (what python-gssapi uses), ``-Djava.security.krb5.conf``
for the JVM's own Kerberos (the broker and Kafka's Java tools). The KDC listens on TCP only
and ``udp_preference_limit = 1`` makes both MIT's and Java's clients use TCP.

Sources: MIT Kerberos documentation, "kdc.conf", "krb5.conf", "kdb5_util", "kadmin.local";
RFC 4120 (Kerberos V5).

Raises (from :meth:`LocalKdc.start`):
    KdcError: the MIT Kerberos programs are missing (the message says which Debian packages
        provide them) or the KDC did not start (its log quoted).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

__all__ = ["DEFAULT_REALM", "KdcError", "LocalKdc", "kerberos_programs_missing"]

DEFAULT_REALM = "EXAMPLE.COM"
#: The programs the KDC needs, and the Debian packages that have them.
PROGRAMS: Mapping[str, str] = {
    "krb5kdc": "krb5-kdc",
    "kdb5_util": "krb5-kdc",
    "kadmin.local": "krb5-admin-server",
    "kinit": "krb5-user",
}
#: Where Debian puts the KDC's programs (``/usr/sbin`` is not on every user's PATH).
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")
START_TIMEOUT_S = 30.0


class KdcError(RuntimeError):
    """The local KDC could not be set up or started."""


def _which(program: str) -> str | None:
    found = shutil.which(program)
    if found:
        return found
    for d in _SBIN:
        path = Path(d) / program
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def kerberos_programs_missing() -> list[str]:
    """The MIT Kerberos programs :class:`LocalKdc` needs that are not installed (names)."""
    return [p for p in PROGRAMS if _which(p) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalKdc:
    """One realm served by MIT's ``krb5kdc`` from a temporary directory.

    Args:
        realm: the realm (upper case by convention), default :data:`DEFAULT_REALM`.
        base_dir: where the database, configuration, keytabs and log go; default a fresh
            temporary directory, removed by :meth:`stop`.
        ticket_lifetime_s: the longest ticket the KDC issues, seconds (``max_life``).

    Attributes:
        port: the KDC's TCP port on 127.0.0.1 (set by :meth:`start`).
        krb5_conf: the client configuration file (``KRB5_CONFIG``,
            ``java.security.krb5.conf``).
    """

    def __init__(
        self,
        realm: str = DEFAULT_REALM,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        ticket_lifetime_s: int = 3600,
    ) -> None:
        self.realm = realm
        self.ticket_lifetime_s = ticket_lifetime_s
        self._given_dir = Path(base_dir) if base_dir is not None else None
        self.dir = self._given_dir or Path(tempfile.mkdtemp(prefix="spark-kafka-py-kdc-"))
        self.port = 0
        self.krb5_conf = self.dir / "krb5.conf"
        self.kdc_conf = self.dir / "kdc.conf"
        self.log = self.dir / "kdc.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._master_password = secrets.token_hex(16)

    # ---------------------------------------------------------------------------- config

    def env(self) -> dict[str, str]:
        """``os.environ`` plus ``KRB5_CONFIG`` and ``KRB5_KDC_PROFILE`` for this realm."""
        env = dict(os.environ)
        env["KRB5_CONFIG"] = str(self.krb5_conf)
        env["KRB5_KDC_PROFILE"] = str(self.kdc_conf)
        return env

    def _write_config(self) -> None:
        r, d = self.realm, self.dir
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"  default_realm = {r}\n"
            "  dns_lookup_realm = false\n"
            "  dns_lookup_kdc = false\n"
            "  rdns = false\n"
            "  dns_canonicalize_hostname = false\n"
            "  udp_preference_limit = 1\n"
            f"  ticket_lifetime = {self.ticket_lifetime_s}s\n"
            "  forwardable = true\n"
            "[realms]\n"
            f"  {r} = {{\n    kdc = 127.0.0.1:{self.port}\n  }}\n"
            "[domain_realm]\n"
            f"  localhost = {r}\n"
            f"  127.0.0.1 = {r}\n"
        )
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            '  kdc_ports = ""\n'
            f"  kdc_tcp_ports = {self.port}\n"
            "[realms]\n"
            f"  {r} = {{\n"
            f"    database_name = {d / 'principal'}\n"
            f"    key_stash_file = {d / 'stash'}\n"
            f"    acl_file = {d / 'kadm5.acl'}\n"
            f"    max_life = {self.ticket_lifetime_s}s\n"
            f"    max_renewable_life = {self.ticket_lifetime_s * 2}s\n"
            "    supported_enctypes = aes256-cts-hmac-sha1-96:normal "
            "aes128-cts-hmac-sha1-96:normal\n"
            "  }\n"
            "[logging]\n"
            f"  kdc = FILE:{self.log}\n"
            f"  default = FILE:{self.log}\n"
        )
        (d / "kadm5.acl").write_text("")

    def _run(self, *args: str) -> str:
        program = _which(args[0])
        if program is None:
            raise KdcError(self._missing_text())
        done = subprocess.run(
            [program, *args[1:]],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise KdcError(
                f"{args[0]} {args[1] if len(args) > 1 else ''} failed (exit {done.returncode}): "
                f"{(done.stderr or done.stdout).strip()[-2000:]}"
            )
        return done.stdout

    def _missing_text(self) -> str:
        missing = kerberos_programs_missing()
        packages = sorted({PROGRAMS[p] for p in missing})
        return (
            f"MIT Kerberos programs missing: {', '.join(missing)} (Debian packages: "
            f"{' '.join(packages)}; the README's test command installs them)"
        )

    # ---------------------------------------------------------------------------- lifecycle

    def start(self) -> LocalKdc:
        """Create the realm's database and start ``krb5kdc``; returns when it accepts TCP.

        Raises:
            KdcError: programs missing, the database not created, or the KDC not serving
                within :data:`START_TIMEOUT_S` (its log quoted).
        """
        if kerberos_programs_missing():
            raise KdcError(self._missing_text())
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self._write_config()
        self._run("kdb5_util", "-r", self.realm, "create", "-s", "-P", self._master_password)
        kdc = _which("krb5kdc")
        assert kdc is not None
        with (self.dir / "krb5kdc.out").open("ab") as out:
            self._process = subprocess.Popen(
                [kdc, "-n", "-r", self.realm],
                env=self.env(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise KdcError(f"krb5kdc exited ({self._process.returncode}): {self._log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise KdcError(f"krb5kdc did not listen on {self.port}: {self._log_tail()}")

    def _log_tail(self) -> str:
        texts = []
        for path in (self.dir / "krb5kdc.out", self.log):
            if path.exists():
                texts.append(path.read_text(errors="replace")[-3000:])
        return "\n".join(texts) or "(no log)"

    def stop(self) -> None:
        """Stop the KDC and (unless ``base_dir`` was given) remove its directory. Idempotent."""
        p, self._process = self._process, None
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
        if self._given_dir is None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> LocalKdc:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---------------------------------------------------------------------------- principals

    def principal(self, name: str) -> str:
        """``name@REALM`` (``name`` as given when it already names a realm)."""
        return name if "@" in name else f"{name}@{self.realm}"

    def add_principal(self, name: str, *, password: str | None = None) -> str:
        """Create a principal, with a random key (``-randkey``) or ``password``.

        Returns:
            the full principal name (``name@REALM``).
        """
        full = self.principal(name)
        key = f"-pw {password}" if password is not None else "-randkey"
        self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc {key} {full}")
        return full

    def keytab(self, *names: str, path: str | os.PathLike[str] | None = None) -> Path:
        """A keytab holding the current keys of the principals ``names`` (created first
        when they do not exist). ``ktadd`` makes new keys, so call it once per principal.

        Returns:
            the keytab's path (default ``<dir>/<first name>.keytab``, ``/`` made ``_``).
        """
        target = (
            Path(path)
            if path is not None
            else self.dir / (names[0].split("@")[0].replace("/", "_") + ".keytab")
        )
        existing = set(self._run("kadmin.local", "-r", self.realm, "-q", "listprincs").split())
        for n in names:
            if self.principal(n) not in existing:
                self.add_principal(n)
        full = " ".join(self.principal(n) for n in names)
        self._run("kadmin.local", "-r", self.realm, "-q", f"ktadd -k {target} {full}")
        return target
