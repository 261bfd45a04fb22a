"""The classic group protocol (JoinGroup / SyncGroup / Heartbeat / LeaveGroup, protocol type
``consumer``), as Java's ``AbstractCoordinator`` / ``ConsumerCoordinator`` run it.

* :mod:`.membership` - :class:`~.membership.ClassicMembership`: the sans-I/O join/sync state
  machine (requests out, responses in, no sockets, no clock, no sleep);
* :mod:`.member` - :class:`~.member.GroupMember`: that machine over the coordinator (the join
  loop with its backoff, the heartbeat thread, offsets with the generation, LeaveGroup), a
  :class:`~spark_kafka_py.consumer.group.member.Member`.
"""
