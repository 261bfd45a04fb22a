"""Shared data of the filter-pushdown tests (issue 14): topics written once per test process,
with their expected content built from what was produced (not from a read).

Topics (all matching :attr:`PushdownData.pattern`):

* ``main`` (``pd-<run>-main``): 4 partitions, CreateTime. Partitions 1-3 hold
  :data:`MAIN_PER_PARTITION` records each (ConsoleProducer); partition 0 holds three
  transactions of Kafka's transactional Java producer (``tests/records/java/ScriptProducer.java``):
  :data:`TXN_SIZES` records committed, aborted, committed, each followed by its marker (one
  offset each). Timestamps step :data:`MAIN_STEP_MS` per record over the last hours, but every
  7th record is :data:`OUT_OF_ORDER_MS` older than its predecessor and every 11th repeats it, so
  CreateTime is out of order within every partition.
* ``compact`` (``pd-<run>-compact``): 1 partition, ``cleanup.policy=compact``; keys written
  several times between keys written once, then one record that rolls the segment; the fixture
  waits until the log cleaner removed every older version (asserted), so offsets have gaps.
  CreateTime also out of order.
* ``logappend`` (``pd-<run>-logappend``): 2 partitions, ``message.timestamp.type=LogAppendTime``,
  two rounds of :data:`LOGAPPEND_PER_ROUND` records written about a second apart, so every
  timestamp of round 1 is after every timestamp of round 0 (checked).

Every timestamp is within the last few hours: the test broker enforces 7-day retention every
5 s, so older records would disappear.
"""

from __future__ import annotations

import base64
import os
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from spark_kafka_py.spark.source import KafkaBatchReader, PyKafkaDataSource, kafka_schema
from spark_kafka_py.testing.jars import KAFKA_VERSION, kafka_classpath
from spark_kafka_py.testing.jvm import compile_java, run_java
from spark_kafka_py.testing.tools import ProducedRecord, create_topic, produce

SCRIPT_PRODUCER = Path(__file__).resolve().parent / "records" / "java" / "ScriptProducer.java"

MAIN_PARTITIONS = 4
MAIN_PER_PARTITION = 500
#: Records of the transactions of main partition 0, in order; committed, aborted, committed.
TXN_SIZES = (150, 100, 150)
TXN_COMMITS = (True, False, True)
MAIN_STEP_MS = 15_000
#: How much older than its predecessor every 7th record is, ms (10 minutes).
OUT_OF_ORDER_MS = 600_000
COMPACT_WRITES = 300
COMPACT_KEYS = 40
COMPACT_STEP_MS = 20_000
LOGAPPEND_PARTITIONS = 2
LOGAPPEND_PER_ROUND = 100
#: Kafka's TimestampType ids as Spark's ``timestampType`` column shows them.
CREATE_TIME, LOG_APPEND_TIME = 0, 1
READ_COMMITTED, READ_UNCOMMITTED = "read_committed", "read_uncommitted"


class Rec(NamedTuple):
    """One record as a read returns it (Spark's Kafka schema without headers); the timestamp
    in microseconds since the epoch (Spark's TimestampType precision; Kafka's are ms)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_us: int
    timestamp_type: int


@dataclass(frozen=True)
class PushdownData:
    """The topics and what they hold.

    Attributes:
        records: every record a ``read_uncommitted`` read of the three topics returns (aborted
            ones included), sorted by (topic, partition, offset).
        aborted: (topic, partition, offset) of the aborted records.
        log_end: the high watermark (next offset) of every (topic, partition).
        logappend_split: per logappend partition, the first offset of round 1.
    """

    bootstrap: str
    main: str
    compact: str
    logappend: str
    pattern: str
    records: tuple[Rec, ...]
    aborted: frozenset[tuple[str, int, int]]
    log_end: Mapping[tuple[str, int], int]
    logappend_split: Mapping[int, int]

    @property
    def topics(self) -> tuple[str, str, str]:
        return (self.main, self.compact, self.logappend)

    def rows(self, isolation: str = READ_UNCOMMITTED) -> list[Rec]:
        """What a read of every topic returns under ``kafka.isolation.level=isolation``."""
        if isolation == READ_UNCOMMITTED:
            return list(self.records)
        return [r for r in self.records if (r.topic, r.partition, r.offset) not in self.aborted]

    def partitions_of(self, topic: str) -> list[int]:
        return sorted(p for t, p in self.log_end if t == topic)


def main_timestamp(base_ms: int, partition: int, i: int) -> int:
    """CreateTime (ms) of the i-th record of main ``partition``: out of order (see module)."""
    if i % 11 == 10:
        return main_timestamp(base_ms, partition, i - 1)
    ts = base_ms + i * MAIN_STEP_MS + partition * 3
    return ts - OUT_OF_ORDER_MS if i % 7 == 6 else ts


def main_key(i: int) -> str | None:
    return None if i % 9 == 4 else f"k{i % 5}"


def main_value(partition: int, i: int) -> str | None:
    return None if i % 13 == 6 else f"m{partition}-{i}"


def compact_key(i: int) -> str:
    """Keys ``c0..c39`` are written many times; ``u<i>`` (every third record) only once."""
    return f"u{i}" if i % 3 == 0 else f"c{i % COMPACT_KEYS}"


def compact_timestamp(base_ms: int, i: int) -> int:
    ts = base_ms + i * COMPACT_STEP_MS
    return ts - 900_000 if i % 5 == 4 else ts


def _b(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _field(text: str | None) -> str:
    return "-" if text is None else "=" + base64.b64encode(text.encode()).decode("ascii")


def _write_transactions(bootstrap: str, topic: str, base_ms: int) -> None:
    """Main partition 0: the transactions of :data:`TXN_SIZES` (ScriptProducer writes to
    partition 0 and flushes before an abort, so aborted records reach the log)."""
    classpath = kafka_classpath(KAFKA_VERSION)
    classes = compile_java([SCRIPT_PRODUCER], classpath)
    lines: list[str] = []
    i = 0
    for size, commit in zip(TXN_SIZES, TXN_COMMITS, strict=True):
        lines.append("BEGIN")
        for _ in range(size):
            ts = main_timestamp(base_ms, 0, i)
            lines.append("\t".join(["REC", _field(main_key(i)), _field(main_value(0, i)), str(ts)]))
            i += 1
        lines.append("COMMIT" if commit else "ABORT")
    run_java(
        "ScriptProducer",
        [bootstrap, topic, f"pushdown-{uuid.uuid4().hex[:8]}", "none", "16384", "5"],
        classpath=os.pathsep.join([str(classes), classpath]),
        input="\n".join(lines) + "\n",
        timeout_s=300,
    )


def reader_for(bootstrap: str, options: Mapping[str, str]) -> KafkaBatchReader:
    """A batch reader of ``format("pykafka")`` with ``options`` (bootstrap added)."""
    opts = {"kafka.bootstrap.servers": bootstrap, **options}
    return PyKafkaDataSource(opts).reader(kafka_schema(False))


def batch_rows(batch: pa.RecordBatch) -> list[Rec]:
    """The rows of one Arrow batch of the reader (timestamps as integer microseconds)."""
    names = ("topic", "partition", "offset", "key", "value", "timestamp", "timestampType")
    cols = [
        batch.column(name).cast(pa.int64()) if name == "timestamp" else batch.column(name)
        for name in names
    ]
    return [Rec(*values) for values in zip(*(c.to_pylist() for c in cols), strict=True)]


def read_partitions(reader: KafkaBatchReader, parts: Iterable[InputPartition]) -> list[Rec]:
    """Every row of the planned ``parts`` (as Spark's tasks would read them), sorted."""
    rows: list[Rec] = []
    for part in parts:
        for batch in reader.read(part):
            rows.extend(batch_rows(batch))
    return sorted(rows)


def read_all(bootstrap: str, options: Mapping[str, str]) -> list[Rec]:
    """The rows of a whole unfiltered read with ``options``, sorted."""
    reader = reader_for(bootstrap, options)
    return read_partitions(reader, reader.partitions())


def _wait_for(
    bootstrap: str, options: Mapping[str, str], expected: Sequence[Rec], what: str
) -> list[Rec]:
    """Read until the (topic, partition, offset)s are the expected ones (120 s at most)."""
    want = [(r.topic, r.partition, r.offset) for r in expected]
    deadline = time.monotonic() + 120
    while True:
        rows = read_all(bootstrap, options)
        if [(r.topic, r.partition, r.offset) for r in rows] == want:
            return rows
        if time.monotonic() > deadline:
            got = [(r.topic, r.partition, r.offset) for r in rows]
            raise AssertionError(
                f"{what}: after 120 s the read has {len(got)} records, expected {len(want)}; "
                f"first differences: {sorted(set(got) ^ set(want))[:10]}"
            )
        time.sleep(2)


def build(bootstrap: str) -> PushdownData:
    """Create and fill the topics, wait for compaction and transaction markers, check a full
    read of each isolation level against the expected content; return it."""
    run = uuid.uuid4().hex[:8]
    main, compact, logappend = f"pd-{run}-main", f"pd-{run}-compact", f"pd-{run}-logappend"
    pattern = f"pd-{run}-.*"
    base_ms = (int(time.time()) - 3 * 3600) * 1000

    create_topic(
        bootstrap,
        compact,
        partitions=1,
        configs={
            "cleanup.policy": "compact",
            "segment.ms": "1000",
            "min.cleanable.dirty.ratio": "0.01",
            "min.compaction.lag.ms": "0",
            "delete.retention.ms": "100",
        },
    )
    create_topic(bootstrap, main, partitions=MAIN_PARTITIONS)
    create_topic(
        bootstrap,
        logappend,
        partitions=LOGAPPEND_PARTITIONS,
        configs={"message.timestamp.type": "LogAppendTime"},
    )

    # compact: written first, so that the log cleaner works while the rest is written.
    produce(
        bootstrap,
        compact,
        [
            ProducedRecord(
                key=compact_key(i),
                value=f"c-{i}",
                partition=0,
                timestamp_ms=compact_timestamp(base_ms, i),
            )
            for i in range(COMPACT_WRITES)
        ],
    )
    time.sleep(1.5)  # segment.ms=1000: the next append rolls the segment, making it cleanable
    roll_ts = base_ms + COMPACT_WRITES * COMPACT_STEP_MS
    produce(
        bootstrap,
        compact,
        [ProducedRecord(key="roll", value="roll", partition=0, timestamp_ms=roll_ts)],
    )
    last_of_key = {compact_key(i): i for i in range(COMPACT_WRITES)}
    survivors = sorted(last_of_key.values())
    assert len(survivors) < COMPACT_WRITES
    expected: list[Rec] = [
        Rec(
            compact,
            0,
            i,
            _b(compact_key(i)),
            _b(f"c-{i}"),
            compact_timestamp(base_ms, i) * 1000,
            CREATE_TIME,
        )
        for i in survivors
    ]
    expected.append(Rec(compact, 0, COMPACT_WRITES, b"roll", b"roll", roll_ts * 1000, CREATE_TIME))
    log_end = {(compact, 0): COMPACT_WRITES + 1}

    # main partitions 1..3, then partition 0's transactions
    produce(
        bootstrap,
        main,
        [
            ProducedRecord(
                key=main_key(i),
                value=main_value(p, i),
                partition=p,
                timestamp_ms=main_timestamp(base_ms, p, i),
            )
            for i in range(MAIN_PER_PARTITION)
            for p in range(1, MAIN_PARTITIONS)
        ],
    )
    for p in range(1, MAIN_PARTITIONS):
        expected += [
            Rec(
                main,
                p,
                i,
                _b(main_key(i)),
                _b(main_value(p, i)),
                main_timestamp(base_ms, p, i) * 1000,
                CREATE_TIME,
            )
            for i in range(MAIN_PER_PARTITION)
        ]
        log_end[(main, p)] = MAIN_PER_PARTITION
    _write_transactions(bootstrap, main, base_ms)
    aborted: set[tuple[str, int, int]] = set()
    i = offset = 0
    for size, commit in zip(TXN_SIZES, TXN_COMMITS, strict=True):
        for _ in range(size):
            ts = main_timestamp(base_ms, 0, i) * 1000
            expected.append(
                Rec(main, 0, offset, _b(main_key(i)), _b(main_value(0, i)), ts, CREATE_TIME)
            )
            if not commit:
                aborted.add((main, 0, offset))
            i += 1
            offset += 1
        offset += 1  # the transaction's marker (a control batch of one record)
    log_end[(main, 0)] = offset

    # logappend: two rounds; the broker stamps the times
    windows = []
    for rnd in range(2):
        before = time.time_ns() // 1000
        produce(
            bootstrap,
            logappend,
            [
                ProducedRecord(key=f"a{i % 3}", value=f"la{rnd}-{i}", partition=i % 2)
                for i in range(LOGAPPEND_PER_ROUND)
            ],
        )
        windows.append((before, time.time_ns() // 1000))
        time.sleep(1.0)
    per_round = LOGAPPEND_PER_ROUND // LOGAPPEND_PARTITIONS
    split = {p: per_round for p in range(LOGAPPEND_PARTITIONS)}
    for p in range(LOGAPPEND_PARTITIONS):
        log_end[(logappend, p)] = 2 * per_round

    # compaction done, markers written: the full reads are exactly the expected offsets
    _wait_for(bootstrap, {"subscribe": compact}, expected[: len(survivors) + 1], "compaction")
    committed = [r for r in sorted(expected) if (r.topic, r.partition, r.offset) not in aborted]
    committed_main = [r for r in committed if r.topic == main]
    _wait_for(
        bootstrap,
        {"subscribe": main, "kafka.isolation.level": READ_COMMITTED},
        committed_main,
        "read_committed after the last transaction's marker",
    )
    la_rows = read_all(bootstrap, {"subscribe": logappend})
    assert [(r.partition, r.offset) for r in la_rows] == [
        (p, o) for p in range(LOGAPPEND_PARTITIONS) for o in range(2 * per_round)
    ]
    for r in la_rows:
        rnd = 0 if r.offset < split[r.partition] else 1
        lo, hi = windows[rnd]
        # LogAppendTime is the broker's clock (ms) while the round was written
        assert lo - 1000 <= r.timestamp_us <= hi, (r, windows)
        assert r.timestamp_type == LOG_APPEND_TIME
        assert r.key == f"a{(r.offset % per_round * 2 + r.partition) % 3}".encode()
        assert r.value == f"la{rnd}-{r.offset % per_round * 2 + r.partition}".encode()
    assert max(r.timestamp_us for r in la_rows if r.offset < split[r.partition]) < min(
        r.timestamp_us for r in la_rows if r.offset >= split[r.partition]
    )
    expected += la_rows

    data = PushdownData(
        bootstrap=bootstrap,
        main=main,
        compact=compact,
        logappend=logappend,
        pattern=pattern,
        records=tuple(sorted(expected)),
        aborted=frozenset(aborted),
        log_end=log_end,
        logappend_split=split,
    )
    for isolation in (READ_UNCOMMITTED, READ_COMMITTED):
        got = read_all(bootstrap, {"subscribePattern": pattern, "kafka.isolation.level": isolation})
        assert got == data.rows(isolation), isolation
    return data


_BUILT: dict[str, PushdownData] = {}


def pushdown_data(bootstrap: str) -> PushdownData:
    """:func:`build` once per test process and broker (both pushdown modules share it)."""
    if bootstrap not in _BUILT:
        _BUILT[bootstrap] = build(bootstrap)
    return _BUILT[bootstrap]
