"""The response type follows the request through the client's ``send`` methods, as mypy sees
them: ``BrokerConnection.send``, ``send_pipelined``/``receive``, ``KafkaClient.send`` and the
SASL ``Exchange`` return the request's response class (``Request[R]`` -> ``R``), not ``Any``.

The snippet is only type-checked (``python -m mypy <file>``, from the repository root with its
configuration), never run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = textwrap.dedent(
    """
    from typing_extensions import assert_type

    from spark_kafka_py.client.cluster import KafkaClient
    from spark_kafka_py.client.connection import BrokerConnection, Exchange, Pipelined
    from spark_kafka_py.protocol.messages import (
        ApiVersionsRequest,
        FetchRequest,
        FetchResponse,
        MetadataRequest,
        MetadataResponse,
        ProduceRequest,
        ProduceResponse,
    )
    from spark_kafka_py.protocol.messages.api_versions import ApiVersionsResponse
    from spark_kafka_py.protocol.schema import Request, Response


    def check(conn: BrokerConnection, client: KafkaClient, exchange: Exchange) -> None:
        assert_type(conn.send(MetadataRequest()), MetadataResponse)
        assert_type(client.send(1, FetchRequest()), FetchResponse)
        assert_type(exchange(ApiVersionsRequest()), ApiVersionsResponse)
        pending = conn.send_pipelined(ProduceRequest())
        assert_type(pending, Pipelined[ProduceResponse])
        assert_type(conn.receive(pending), ProduceResponse)
        maybe = conn.send_pipelined(ProduceRequest(), expect_response=bool(pending))
        assert_type(maybe, Pipelined[ProduceResponse] | None)
        anything: Request[Response] = MetadataRequest()  # every request is a Request[Response]
        assert_type(conn.send(anything), Response)
        wrong: FetchResponse = conn.send(MetadataRequest())  # E: incompatible
    """
)


def test_send_returns_the_request_s_response_type(tmp_path: Path) -> None:
    snippet = tmp_path / "typed_send.py"
    snippet.write_text(SNIPPET)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", str(snippet)],  # the repository's cache, as test_static
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = proc.stdout + proc.stderr
    errors = [line for line in out.splitlines() if ": error:" in line]
    # exactly the one deliberate mistake: a MetadataResponse is not a FetchResponse
    assert len(errors) == 1, out
    assert "Incompatible types in assignment" in errors[0], out
    assert '"MetadataResponse"' in errors[0] and '"FetchResponse"' in errors[0], out
