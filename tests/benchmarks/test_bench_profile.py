"""``benchmarks/profile_read.py``: py-spy's raw samples added up per function, the daemon's
own samples left out."""

from __future__ import annotations

from benchmarks.profile_read import parse_raw

DAEMON = 'process 10:"python -m pyspark.daemon"'
WORKER = 'process 11:"python -m pyspark.daemon"'


def test_own_and_inclusive_samples_of_the_workers_only():
    lines = [
        f"{DAEMON};manager (daemon.py:184) 50\n",
        f"{DAEMON};{WORKER};main (worker.py:10);read (spark_kafka_py/consumer/fetcher.py:227) 3\n",
        f"{DAEMON};{WORKER};main (worker.py:12);dump_stream (pyspark/serializers.py:70) 1\n",
        "garbage\n",
    ]
    profile = parse_raw(lines, daemon_pid=10)
    assert profile.total == 4
    assert profile.own == {
        "read (consumer/fetcher.py)": 3,
        "dump_stream (pyspark/serializers.py)": 1,
    }
    assert profile.inclusive["main (worker.py)"] == 4
    assert "| `read (consumer/fetcher.py)` | 75.0 | 75.0 | |" in profile.top(5)
