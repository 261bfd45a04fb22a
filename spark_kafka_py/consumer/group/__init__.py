"""Consumer groups on the driver side: classic groups (protocol type ``consumer``) and the
KIP-848 consumer group protocol (``group.protocol=consumer``).

* :mod:`.protocol` - ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment`` bytes;
* :mod:`.assignors` - ``range``, ``roundrobin`` and ``cooperative-sticky``, equal to Kafka's
  Java assignors;
* :mod:`.heartbeat` - the pure heartbeat / session / poll timer;
* :mod:`.config` - :class:`~.config.GroupConfig`, the settings of one member;
* :mod:`.transport` - :class:`~.transport.CoordinatorChannel`: FindCoordinator, requests to
  the coordinator, retries within ``default.api.timeout.ms``;
* :mod:`.offsets` - :class:`~.offsets.GroupOffsets`: OffsetCommit, OffsetFetch (as Java's
  ``ConsumerCoordinator``), with a member's generation or as "simple" commits;
* :mod:`.member` - :class:`~.member.Member`: what a member offers its caller (``ensure_active``
  at micro-batch boundaries, heartbeats, offsets, leaving), whichever protocol it speaks;
* :mod:`.classic` - the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup; Java's
  ``AbstractCoordinator``): ``classic.membership`` the sans-I/O join/sync state machine,
  ``classic.member`` (:class:`~.classic.member.GroupMember`) its I/O;
* :mod:`.consumer` - the KIP-848 consumer group protocol (ConsumerGroupHeartbeat):
  ``consumer.membership`` (:class:`~.consumer.membership.ConsumerGroupMembership`) the sans-I/O
  state machine, ``consumer.member`` (:class:`~.consumer.member.ConsumerGroupMember`) its I/O.
"""
