"""Consumer groups on the driver side: classic groups (protocol type ``consumer``) and the
KIP-848 consumer group protocol (``group.protocol=consumer``).

* :mod:`.protocol` - ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment`` bytes;
* :mod:`.assignors` - ``range``, ``roundrobin`` and ``cooperative-sticky``, equal to Kafka's
  Java assignors;
* :mod:`.heartbeat` - the pure heartbeat / session / poll timer;
* :mod:`.config` - :class:`~.config.GroupConfig`, the settings of one member;
* :mod:`.transport` - :class:`~.transport.CoordinatorChannel`: FindCoordinator, requests to
  the coordinator, retries within ``default.api.timeout.ms``;
* :mod:`.membership` - :class:`~.membership.GroupMember`: JoinGroup, SyncGroup, Heartbeat
  thread, LeaveGroup (the member state machine, as Java's ``AbstractCoordinator``);
* :mod:`.offsets` - :class:`~.offsets.GroupOffsets`: OffsetCommit, OffsetFetch (as Java's
  ``ConsumerCoordinator``), with a member's generation or as "simple" commits;
* :mod:`.consumer_membership` - :class:`~.consumer_membership.ConsumerGroupMembership`: the
  sans-I/O member state machine of the KIP-848 consumer group protocol (ConsumerGroupHeartbeat);
* :mod:`.consumer_member` - :class:`~.consumer_member.ConsumerGroupMember`: that machine over the
  coordinator (heartbeat thread, reconciliation at micro-batch boundaries, offsets with the member
  epoch, leaving), with the interface of :class:`~.membership.GroupMember`.
"""
