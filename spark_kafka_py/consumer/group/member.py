"""What a group member offers its caller, whichever group protocol it speaks: :class:`Member`.

Two implementations, each a sans-I/O state machine plus the part that does the I/O:

* :class:`~spark_kafka_py.consumer.group.classic.member.GroupMember` - the classic protocol
  (JoinGroup v9 / SyncGroup v5 / Heartbeat v4 / LeaveGroup v5, client-side assignors; Java's
  ``AbstractCoordinator`` and ``ConsumerCoordinator``);
* :class:`~spark_kafka_py.consumer.group.consumer.member.ConsumerGroupMember` - the consumer
  group protocol of KIP-848 (ConsumerGroupHeartbeat v1, server-side assignors; Java's
  ``ConsumerMembershipManager``).

:class:`spark_kafka_py.spark.group.StreamGroup` drives either through this interface at
micro-batch boundaries; :class:`~spark_kafka_py.consumer.group.offsets.GroupOffsets` needs the
narrower :class:`~spark_kafka_py.consumer.group.offsets.Membership` part of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from spark_kafka_py.consumer.group.offsets import Membership
from spark_kafka_py.consumer.types import TopicPartition

__all__ = ["Member"]


class Member(Membership, Protocol):
    """A member of one consumer group, driven by one caller thread (plus its own heartbeat
    thread). Both ``GroupMember`` (classic) and ``ConsumerGroupMember`` (KIP-848) are one."""

    @property
    def generation_id(self) -> int:
        """The generation id (classic) or member epoch (KIP-848) the member's commits carry;
        ``-1`` while it is not a member of the group."""
        ...

    @property
    def assignment(self) -> tuple[TopicPartition, ...]:
        """The partitions whose processed offsets the member may commit now, sorted."""
        ...

    def ensure_active(
        self, topics: Iterable[str], partition_counts: Mapping[str, int] | None = None
    ) -> tuple[TopicPartition, ...]:
        """A micro-batch boundary: join or rejoin as needed (the caller committed what it
        processed first), and return the partitions the member may read now.

        Args:
            topics: the subscribed topic names.
            partition_counts: ``topic -> partition count`` now (a classic leader rejoins when a
                count changed; the KIP-848 coordinator sees it itself).

        Raises:
            KafkaApiError: a fatal group error (GROUP_AUTHORIZATION_FAILED,
                FENCED_INSTANCE_ID, ...) naming the group.
            KafkaTimeoutError: not joined in time (``max.poll.interval.ms`` +
                ``default.api.timeout.ms`` classic, ``default.api.timeout.ms`` KIP-848).
            UnsupportedByBrokerError: the KIP-848 protocol with a coordinator older than
                Kafka 4.0.
        """
        ...

    def start_heartbeat(self) -> None:
        """Start the member's heartbeat daemon thread (idempotent)."""
        ...

    def commit(
        self, offsets: Mapping[TopicPartition, int], *, metadata: str = ""
    ) -> dict[TopicPartition, int]:
        """OffsetCommit ``offsets`` (next offset to read, per partition) as this member.

        Returns:
            the offsets that were committed.

        Raises:
            KafkaApiError / KafkaTimeoutError: as
                :meth:`~spark_kafka_py.consumer.group.offsets.GroupOffsets.commit`.
        """
        ...

    def fetch_committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int | None]:
        """OffsetFetch: the group's committed offset per partition, ``None`` where none.

        Raises:
            KafkaApiError / KafkaTimeoutError: as
                :meth:`~spark_kafka_py.consumer.group.offsets.GroupOffsets.fetch_committed`.
        """
        ...

    def close(self, *, leave: bool = True) -> None:
        """Stop the heartbeat thread and, with ``leave``, leave the group (errors logged)."""
        ...
