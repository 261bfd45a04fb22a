"""Regenerate the reference segment files in tests/records/data/ with a real Kafka broker.

Batches written by Kafka's own Java producer (``KafkaProducer`` driven by the test-only
``java/ScriptProducer.java``), one topic per case, each copied from the broker's log
directory of a :class:`spark_kafka_py.testing.broker.LocalKafkaCluster`: a segment file
``<log.dirs>/<topic>-0/00000000000000000000.log`` is a sequence of record batches exactly
as a Fetch response carries them (when the broker rolled the segment, the segments are
concatenated). Beside each ``<case>.log`` goes ``<case>.json`` with the
records that were handed to the producer (written from the producer's INPUT, never from our
decoder), and for the transactional case the broker's ``.txnindex`` (its aborted
transactions, what a Fetch response's ``aborted_transactions`` is made from).

(``spark_kafka_py.testing.tools.produce`` is not used: its ConsoleProducer wrote
uncompressed batches whatever ``compression`` said when this was written.)

Run from the repository root (needs a JDK 17+ and the cached Kafka jars)::

    python tests/records/make_fixtures.py
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from spark_kafka_py.testing.broker import LocalKafkaCluster  # noqa: E402
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath  # noqa: E402
from spark_kafka_py.testing.jvm import compile_java, run_java  # noqa: E402
from spark_kafka_py.testing.tools import create_topic  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
JAVA_SRC = Path(__file__).resolve().parent / "java" / "ScriptProducer.java"
SEGMENT = "00000000000000000000"
BASE_TS = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: the large value: more than one 32 KiB snappy-java block and one 64 KiB lz4 block
BIG_PATTERN = b"0123456789abcdef"
BIG_TIMES = 4200

Header = tuple[str, bytes | None]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _field(data: bytes | None) -> str:
    return "-" if data is None else "=" + base64.b64encode(data).decode("ascii")


class Script:
    """Commands for ScriptProducer, and the expected records (from the same input)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.expected: list[dict] = []

    def rec(
        self,
        key: bytes | None,
        value: bytes | None,
        headers: list[Header],
        ts: int,
        **extra: object,
    ) -> None:
        fields = ["REC", _field(key), _field(value), str(ts)]
        for hk, hv in headers:
            fields += [_field(hk.encode("utf-8")), _field(hv)]
        self.lines.append("\t".join(fields))
        entry: dict = {
            "key": _b64(key),
            "headers": [[hk, _b64(hv)] for hk, hv in headers],
            "timestamp_ms": ts,
            **extra,
        }
        if value is not None and value == BIG_PATTERN * BIG_TIMES:
            entry["value_repeat"] = [_b64(BIG_PATTERN), BIG_TIMES]
        else:
            entry["value"] = _b64(value)
        self.expected.append(entry)

    def cmd(self, command: str) -> None:
        self.lines.append(command)


def codec_script(n: int = 60) -> Script:
    """Deterministic records: null/empty keys, null values, headers (null values, non-ASCII
    keys), out-of-order timestamps, and one 67 KB value (several snappy/lz4 blocks)."""
    script = Script()
    for i in range(n):
        key: bytes | None = f"key-{i}".encode()
        if i % 7 == 3:
            key = None
        elif i % 11 == 5:
            key = b""
        value: bytes | None = (f"value-{i}-" * (i % 5 + 1)).encode() + bytes([i, 0, 255])
        if i % 13 == 6:
            value = None
        elif i == n - 1:
            value = BIG_PATTERN * BIG_TIMES
        if i % 3 == 0:
            headers: list[Header] = []
        elif i % 3 == 1:
            headers = [("h1", f"v{i}".encode()), ("\u00fcn\u00ef-\u20ac", None)]
        else:
            headers = [("trace", b"\x00\x01" * i), ("h1", b"")]
        script.rec(key, value, headers, BASE_TS + i * 1000 - (i % 4) * 37)
        if i % 20 == 19:
            script.cmd("FLUSH")  # batch boundaries at known places too
    return script


def run_script(
    classes: str,
    bootstrap: str,
    topic: str,
    script: Script,
    *,
    compression: str,
    transactional_id: str = "-",
    batch_size: int = 1024,
    linger_ms: int = 50,
) -> None:
    run_java(
        "ScriptProducer",
        [bootstrap, topic, transactional_id, compression, str(batch_size), str(linger_ms)],
        classpath=os.pathsep.join([classes, kafka_classpath(KAFKA_VERSION)]),
        input="\n".join(script.lines) + "\n",
        timeout_s=300,
    )


def _copy_segment(cluster: LocalKafkaCluster, topic: str, case: str) -> None:
    """Copy the partition's segments, concatenated in offset order (the broker may roll a
    segment, e.g. after a transaction's end, and a sequence of segments is a sequence of
    batches too); likewise the ``.txnindex`` entries of aborted transactions."""
    src = cluster.nodes[0].data_dir / f"{topic}-0"
    time.sleep(0.5)  # appends are synchronous (acks=all, one node); be generous anyway
    segments = sorted(src.glob("*.log"), key=lambda p: int(p.stem))
    (DATA / f"{case}.log").write_bytes(b"".join(p.read_bytes() for p in segments))
    indexes = sorted(src.glob("*.txnindex"), key=lambda p: int(p.stem))
    txn = b"".join(p.read_bytes() for p in indexes)
    if txn:
        (DATA / f"{case}.txnindex").write_bytes(txn)


def _write_json(case: str, meta: dict) -> None:
    (DATA / f"{case}.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


def make_codec_cases(cluster: LocalKafkaCluster, classes: str) -> None:
    bootstrap = cluster.bootstrap_servers
    for codec in CODECS:
        topic = f"fx-{codec}"
        create_topic(bootstrap, topic, partitions=1)
        script = codec_script()
        run_script(classes, bootstrap, topic, script, compression=codec)
        _copy_segment(cluster, topic, f"java-{codec}")
        _write_json(
            f"java-{codec}",
            {
                "topic": topic,
                "partition": 0,
                "compression": codec,
                "timestamp_type": "CreateTime",
                "records": script.expected,
            },
        )


def make_log_append_time_case(cluster: LocalKafkaCluster, classes: str) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = "fx-logappendtime"
    create_topic(bootstrap, topic, configs={"message.timestamp.type": "LogAppendTime"})
    script = codec_script(20)
    before = int(time.time() * 1000)
    run_script(classes, bootstrap, topic, script, compression="zstd")
    after = int(time.time() * 1000)
    _copy_segment(cluster, topic, "java-logappendtime")
    _write_json(
        "java-logappendtime",
        {
            "topic": topic,
            "partition": 0,
            "compression": "zstd",
            "timestamp_type": "LogAppendTime",
            "appended_after_ms": before,
            "appended_before_ms": after,
            "records": script.expected,
        },
    )


# (commit?, values) per transaction, in order
TRANSACTIONS: list[tuple[bool, list[str]]] = [
    (True, ["c1-a", "c1-b", "c1-c"]),
    (False, ["a2-a", "a2-b", "a2-c"]),
    (True, ["c3-a", "c3-b"]),
    (False, ["a4-a"]),
    (True, ["c5-a"]),
]


def make_transactional_case(cluster: LocalKafkaCluster, classes: str) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = "fx-txn"
    create_topic(bootstrap, topic, partitions=1)
    script = Script()
    ts = BASE_TS
    for commit, values in TRANSACTIONS:
        script.cmd("BEGIN")
        for v in values:
            ts += 1000
            flag = b"1" if commit else b"0"
            script.rec(v.split("-")[0].encode(), v.encode(), [("txn", flag)], ts, committed=commit)
        script.cmd("COMMIT" if commit else "ABORT")
    run_script(classes, bootstrap, topic, script, compression="lz4", transactional_id="fixture-txn")
    _copy_segment(cluster, topic, "java-txn")
    _write_json(
        "java-txn",
        {
            "topic": topic,
            "partition": 0,
            "compression": "lz4",
            "timestamp_type": "CreateTime",
            "records": script.expected,
        },
    )


def main() -> None:
    for old in DATA.glob("java-*"):
        old.unlink()
    DATA.mkdir(parents=True, exist_ok=True)
    classes = str(compile_java([JAVA_SRC], kafka_classpath(KAFKA_VERSION)))
    with LocalKafkaCluster(1) as cluster:
        make_codec_cases(cluster, classes)
        make_log_append_time_case(cluster, classes)
        make_transactional_case(cluster, classes)
    for path in sorted(DATA.iterdir()):
        print(f"{path.stat().st_size:>8}  {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
