"""The consumer group protocol of KIP-848 (``group.protocol=consumer``; ConsumerGroupHeartbeat,
server-side assignors; Kafka 4.0+ brokers).

* :mod:`.membership` - :class:`~.membership.ConsumerGroupMembership`: the sans-I/O member state
  machine (heartbeat requests out, responses in, events for the caller);
* :mod:`.member` - :class:`~.member.ConsumerGroupMember`: that machine over the coordinator
  (heartbeat thread, reconciliation at micro-batch boundaries, offsets with the member epoch,
  leaving), a :class:`~spark_kafka_py.consumer.group.member.Member`.
"""
