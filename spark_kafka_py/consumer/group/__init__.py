"""Classic consumer groups (protocol type ``consumer``) on the driver side.

* :mod:`.protocol` - ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment`` bytes;
* :mod:`.assignors` - ``range`` and ``roundrobin``, equal to Kafka's Java assignors;
* :mod:`.heartbeat` - the pure heartbeat / session / poll timer;
* :mod:`.coordinator` - :class:`~.coordinator.GroupMember`: FindCoordinator, JoinGroup,
  SyncGroup, Heartbeat thread, OffsetCommit, OffsetFetch, LeaveGroup over a transport.
"""
