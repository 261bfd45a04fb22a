"""Exceptions raised by spark-kafka-py.

Every error a user can see derives from :class:`KafkaError`. The hierarchy separates
what went wrong locally (a bad option, a request we cannot encode) from what came from the
network (malformed bytes, an error code the broker returned), following h11's split of
``LocalProtocolError`` and ``RemoteProtocolError``.

Nothing in this module imports sockets or pyspark; every layer may import it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the error table imports this module: only for annotations
    from spark_kafka_py.protocol.error_codes import ErrorCode


class KafkaError(Exception):
    """Base class of every error raised by spark-kafka-py.

    Attributes:
        retriable: whether asking again (after a backoff, within the caller's timeout) can
            succeed. False for this base class and for local errors (a bad option, a request
            we cannot encode, malformed bytes); True for timeouts and, unless the failure
            cannot mend, lost connections; for :class:`KafkaApiError` Kafka's own flag for
            the error code (``Errors.java``, as ``RetriableException`` subclasses). The one
            policy that acts on it is :mod:`spark_kafka_py.client.retry`.
    """

    retriable: bool = False


class ConfigError(KafkaError, ValueError):
    """An option is missing, malformed or conflicts with another option.

    The message names the option (Spark Kafka-source name, e.g. ``startingOffsets``) and
    what would be accepted.
    """


class LocalProtocolError(KafkaError):
    """We were asked to encode something the protocol cannot express.

    Examples: a string longer than 32,767 UTF-8 bytes in a non-flexible version, a field
    that does not exist in the negotiated API version.
    """


class UnsupportedByBrokerError(LocalProtocolError):
    """The broker does not serve an API (or no version of it we speak) that a feature needs.

    Found from the broker's ApiVersions answer (API key 18) before anything is sent. The message
    names the feature and the Kafka release it needs, the broker (address, and its release line
    as far as the cluster's ``metadata.version`` tells, KIP-584), and the versions of the API the
    broker offers, if any.

    Attributes:
        api_name: e.g. ``ConsumerGroupHeartbeat``.
        api_key: e.g. 68.
        broker_versions: ``(min, max)`` the broker offers for the API, ``None`` when it lacks it.
        broker_release: ``"3.6"`` (lower bound from ``metadata.version``), or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        api_name: str,
        api_key: int,
        broker_versions: tuple[int, int] | None,
        broker_release: str | None,
    ) -> None:
        super().__init__(message)
        self.api_name = api_name
        self.api_key = api_key
        self.broker_versions = broker_versions
        self.broker_release = broker_release


class InvalidRecordError(KafkaError, ValueError):
    """Rows handed to the record encoder cannot be written as Kafka records.

    Examples: a ``key`` column that is neither binary nor string, a header with a null key
    (KIP-82 header keys are non-null strings), a null timestamp with no default. ``column``
    names the offending column (``key``, ``value``, ``headers``, ``timestamp``).
    """

    def __init__(self, message: str, *, column: str) -> None:
        super().__init__(message)
        self.column = column


class KafkaProtocolError(KafkaError):
    """Bytes received from the network do not follow the Kafka protocol.

    Raised for truncated frames, negative or oversized length fields (a length larger
    than the bytes left or than the configured bound), unknown enum values, trailing
    garbage, and similar. Never an ``IndexError``/``struct.error`` leaking from a decoder.
    """


class CorruptRecordError(KafkaProtocolError):
    """A record batch failed its integrity checks (CRC-32C mismatch, bad lengths).

    Attributes:
        topic: topic of the fetched partition (``None`` when decoded without context).
        partition: partition id (``None`` when decoded without context).
        offset: base offset of the corrupt batch, or the offset being read.
    """

    def __init__(
        self,
        message: str,
        *,
        topic: str | None = None,
        partition: int | None = None,
        offset: int | None = None,
    ) -> None:
        where = ""
        if topic is not None:
            where = f" in {topic}-{partition}"
        if offset is not None:
            where += f" at offset {offset}"
        super().__init__(f"{message}{where}")
        self.topic = topic
        self.partition = partition
        self.offset = offset


class DecompressionBoundError(CorruptRecordError):
    """A record batch decodes to more bytes than a bound allows: its own (``max_batch_bytes``)
    or what is left of its Fetch response's (``maxDecompressionRatio`` x the bytes fetched).

    A broken or hostile broker's decompression bomb, or a producer's data compressing better
    than the bound assumes; the message names the bound and the option that raises it.

    Attributes:
        topic, partition, offset: as :class:`CorruptRecordError` (``offset`` is the base offset
            of the batch past the bound).
        bound: the bound that was exceeded, in bytes.
    """

    def __init__(
        self,
        message: str,
        *,
        bound: int,
        topic: str | None = None,
        partition: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message, topic=topic, partition=partition, offset=offset)
        self.bound = bound


class KafkaConnectionError(KafkaError):
    """A TCP connection to a broker could not be opened, or broke mid-request.

    The message names the broker (``host:port``, node id where known).

    Attributes:
        retriable: False when trying again cannot help: the TLS handshake failed (untrusted
            or expired certificate, hostname mismatch, a plaintext listener), or the peer is
            not a Kafka listener (it answered with TLS or HTTP). As the Java client's
            ``SslAuthenticationException``, such errors end the driver's retries at once.
    """

    def __init__(self, message: str, *, retriable: bool = True) -> None:
        super().__init__(message)
        self.retriable = retriable


class KerberosError(KafkaError):
    """Kerberos (SASL/GSSAPI) failed on the client's side: no credentials for the principal
    (a keytab without it, an empty ticket cache), a KDC that cannot be reached or does not know
    the broker's service principal, a clock skew.

    The message names the option that chose the credentials, the principal and the broker's
    service principal, and carries the GSS-API library's own text; never a keytab's content.

    Attributes:
        principal: the client's principal (None: the ticket cache's default).
        service: the broker's service principal asked for, ``service@host``.
    """

    def __init__(self, message: str, *, principal: str | None, service: str) -> None:
        super().__init__(message)
        self.principal = principal
        self.service = service


class KafkaTimeoutError(KafkaError, TimeoutError):
    """A request got no complete answer within ``request.timeout.ms`` (or another bound).

    The message names the request, the broker and the timeout in ms. Retriable, as Java's
    ``org.apache.kafka.common.errors.TimeoutException`` (a ``RetriableException``).
    """

    retriable = True


class KafkaApiError(KafkaError):
    """A broker answered with a non-zero error code.

    Args:
        error: the :class:`~spark_kafka_py.protocol.error_codes.ErrorCode` the broker sent
            (``error_for(code)``), e.g. ``NOT_LEADER_OR_FOLLOWER``.
        context: what we were doing and on what (API, topic-partition, group).
        description: the text after the context; ``None`` for Kafka's description of the
            error, ``""`` for none.

    Attributes:
        error: the :class:`~spark_kafka_py.protocol.error_codes.ErrorCode` (compare it with
            the constants of :mod:`spark_kafka_py.protocol.error_codes`).
        code: the Kafka error code (``int16``) as a plain ``int``.
        name: the error's name in Kafka's protocol spec, e.g. ``NOT_LEADER_OR_FOLLOWER``.
        retriable: whether Kafka marks the error retriable.
        context: what we were doing and on what.
    """

    def __init__(self, error: ErrorCode, context: str, description: str | None = None):
        text = f"{error.name} (error code {error.code}) {context}"
        if description is None:
            description = error.description
        if description:
            text += f": {description}"
        super().__init__(text)
        self.error = error
        self.code = error.code
        self.name = error.name
        self.retriable = error.retriable
        self.context = context


class ProduceError(KafkaApiError):
    """Records could not be written to a topic or topic-partition (the producer).

    The Kafka error the broker returned in its Produce response (``ProduceResponse.json``,
    e.g. TOPIC_AUTHORIZATION_FAILED, INVALID_RECORD with the broker's message), or the one the
    Java producer raises itself before sending (MESSAGE_TOO_LARGE for ``RecordTooLargeException``:
    a record above ``max.request.size`` or ``buffer.memory``; UNKNOWN_TOPIC_OR_PARTITION when a
    topic is not in the metadata within ``max.block.ms``).

    Attributes:
        topic: the topic.
        partition: the partition, or ``None`` when the error is about the whole topic.
        error, code, name, retriable, context: as :class:`KafkaApiError`.
    """

    def __init__(
        self,
        error: ErrorCode,
        topic: str,
        partition: int | None,
        description: str | None = None,
    ) -> None:
        where = topic if partition is None else f"{topic}-{partition}"
        super().__init__(error, f"producing to {where}", description)
        self.topic = topic
        self.partition = partition


class TransactionError(KafkaApiError):
    """A Kafka transaction could not be begun, extended or ended.

    The Kafka error a transaction coordinator returned to InitProducerId, AddPartitionsToTxn,
    EndTxn or DescribeTransactions (KIP-98, KIP-664), e.g. INVALID_TXN_STATE for a transaction
    ended the other way, TRANSACTIONAL_ID_NOT_FOUND; the message names the transactional id,
    the producer id and epoch and, where it can tell, why.

    Attributes:
        transactional_id: the transactional id.
        producer_id, producer_epoch: the producer's (-1 when unknown).
        error, code, name, retriable, context: as :class:`KafkaApiError`.
    """

    def __init__(
        self,
        error: ErrorCode,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        description: str | None = None,
        *,
        action: str = "in a transaction",
    ) -> None:
        super().__init__(
            error,
            f"{action} of transactional id {transactional_id!r} (producer id {producer_id}, "
            f"epoch {producer_epoch})",
            description,
        )
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch


class ProducerFencedError(TransactionError):
    """The producer's epoch is no longer the transactional id's current one (PRODUCER_FENCED or
    INVALID_PRODUCER_EPOCH): a newer producer with the same transactional id began (zombie
    fencing, KIP-98), or the broker aborted the transaction after ``transaction.timeout.ms``
    and bumped the epoch. The transaction of the old epoch is aborted."""


class DataLossError(KafkaError):
    """Records the query should read are gone (``failOnDataLoss=true``).

    Raised, as Spark's Kafka source does, when offsets were deleted by retention before
    they were read, a partition disappeared, or end offsets fall below start offsets. The
    message names the topic-partition and the missing offset range, and says that
    ``failOnDataLoss=false`` skips to the earliest available offset instead.
    """


#: Spark's ``INSTRUCTION_FOR_FAIL_ON_DATA_LOSS_TRUE`` / ``..._FALSE`` sentences, appended to
#: data-loss errors and warnings.
DATA_LOSS_ERROR_HINT = (
    "Some data may have been lost because they are not available in Kafka any more; either the "
    "data was aged out by Kafka or the topic may have been deleted before all the data in the "
    "topic was processed. If you don't want your query to fail on such cases, set the source "
    "option 'failOnDataLoss' to 'false'."
)
DATA_LOSS_WARNING_HINT = (
    "Some data may have been lost because they are not available in Kafka any more; either the "
    "data was aged out by Kafka or the topic may have been deleted before all the data in the "
    "topic was processed. If you want your streaming query to fail on such cases, set the "
    "source option 'failOnDataLoss' to 'true'."
)


def report_data_loss(fail_on_data_loss: bool, message: str, log: logging.Logger) -> None:
    """Raise :class:`DataLossError` (``failOnDataLoss=true``) or log a warning on ``log``,
    as Spark's ``reportDataLoss``; ``message`` names the topic-partition and offsets."""
    if fail_on_data_loss:
        raise DataLossError(f"{message}. {DATA_LOSS_ERROR_HINT}")
    log.warning("%s. %s", message, DATA_LOSS_WARNING_HINT)


class ExactlyOnceError(KafkaError):
    """The exactly-once sink cannot keep its guarantee for a micro-batch, and stops the query
    rather than write it twice or make it part visible (docs/sink.md).

    Raised by the driver's commit: a task's transaction was aborted by the broker
    (``kafka.transaction.timeout.ms``) or fenced before the commit (then nothing of the batch is
    visible and Spark replays it on restart); a query on a new checkpoint reuses a
    ``transactionalIdPrefix`` that committed later batches; the commit log holds a record that
    is not ours.

    Attributes:
        batch_id: the micro-batch, or ``None`` when not about one.
    """

    def __init__(self, message: str, *, batch_id: int | None = None) -> None:
        super().__init__(message)
        self.batch_id = batch_id


class SchemaRegistryError(KafkaError):
    """A schema registry could not be reached, answered an error, or answered something we
    refuse (malformed JSON, a body beyond the size bound, too slow).

    Raised by :mod:`spark_kafka_py.schema_registry`. The message names the method and the URL
    without credentials (no user info, no password), the HTTP status and the registry's
    ``error_code`` when there was an answer (Confluent Schema Registry API reference, "Errors":
    e.g. 40401 subject not found, 40403 schema not found, 409 incompatible schema).

    Attributes:
        url: the request's URL, credentials removed.
        status: the HTTP status, ``None`` when no answer came (connection refused, timeout).
        error_code: the registry's ``error_code`` from its JSON error body, ``None`` if none.
        retriable: true for no answer, a timeout, 408, 429 and 5xx (asking again, perhaps of
            another URL of ``schema.registry.url``, may succeed); false otherwise.
    """

    def __init__(
        self,
        message: str,
        *,
        url: str,
        status: int | None = None,
        error_code: int | None = None,
        retriable: bool = False,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.error_code = error_code
        self.retriable = retriable


class RecordFormatError(KafkaError, ValueError):
    """A record's key or value does not decode in its payload format (``valueFormat`` /
    ``keyFormat``), or a row does not encode: raised by the Spark layer with ``mode=FAILFAST``.

    The message names the column, the topic-partition and offset (reads) or the row (writes),
    the schema id when known, and what is wrong.

    Attributes:
        column: ``"key"`` or ``"value"``, when known.
        schema_id: the writer schema's registry id, when known.
    """

    def __init__(
        self, message: str, *, column: str | None = None, schema_id: int | None = None
    ) -> None:
        super().__init__(message)
        self.column = column
        self.schema_id = schema_id
