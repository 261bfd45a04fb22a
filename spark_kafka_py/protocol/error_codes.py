"""Kafka error codes: one named constant per code of Kafka's error table.

Source: ``org.apache.kafka.common.protocol.Errors`` of Apache Kafka 4.3 (the error table of the
protocol guide, https://kafka.apache.org/protocol#protocol_error_codes, is generated from it):
code, name, and the message of the code's exception as ``description``. ``retriable`` is true
when that exception is a ``RetriableException`` (the request may succeed if retried, usually
after refreshing metadata). ``tests/protocol/test_error_codes.py`` checks this table against
``Errors`` in the kafka-clients jar.

Every constant is an :class:`ErrorCode`, an ``int`` (the ``int16`` of a response's
``error_code``) that also carries its name, ``retriable`` and description. So a code read from
a response compares with the constants directly (``code == NOT_COORDINATOR``,
``code in {REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION}``), and :func:`error_for` gives the
constant itself for a code (``error_for(6) is NOT_LEADER_OR_FOLLOWER``)::

    from spark_kafka_py.protocol import error_codes as ec

    if partition.error_code == ec.NOT_LEADER_OR_FOLLOWER:
        ...
    ec.raise_for_error(partition.error_code, f"in Fetch of {tp} from broker {node}")
"""

from __future__ import annotations

from typing import Any, NoReturn

from spark_kafka_py.errors import KafkaApiError

__all__ = [
    "ERRORS",
    "ERRORS_BY_NAME",
    "ErrorCode",
    "error_for",
    "error_for_code",
    "raise_for_error",
]


class ErrorCode(int):
    """One Kafka error code: an ``int`` (``int16`` on the wire) with Kafka's facts about it.

    ``ErrorCode(6, "NOT_LEADER_OR_FOLLOWER", True, "...") == 6``; hashing and ordering are
    those of the ``int``, ``str()`` is the number and ``repr()`` names the error. Instances
    are immutable.

    Attributes:
        code: the code as a plain ``int`` (``-1`` .. ``32767``).
        name: the name in Kafka's ``Errors``, e.g. ``NOT_LEADER_OR_FOLLOWER``.
        retriable: whether Kafka's exception for the code is a ``RetriableException``.
        description: the message of that exception (``""`` for NONE).
    """

    name: str
    retriable: bool
    description: str

    def __new__(cls, code: int, name: str, retriable: bool, description: str) -> ErrorCode:
        self = super().__new__(cls, code)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "retriable", retriable)
        object.__setattr__(self, "description", description)
        return self

    @property
    def code(self) -> int:
        """The code as a plain ``int``."""
        return int(self)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"ErrorCode {self.name} is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"ErrorCode {self.name} is immutable")

    def __repr__(self) -> str:
        return f"ErrorCode({int(self)}, {self.name!r}, retriable={self.retriable})"

    __str__ = int.__repr__

    def __reduce__(self) -> tuple[type[ErrorCode], tuple[int, str, bool, str]]:
        return (ErrorCode, (int(self), self.name, self.retriable, self.description))


# --------------------------------------------------------------------------------------------
# Kafka 4.3's error table, in code order
# --------------------------------------------------------------------------------------------

UNKNOWN_SERVER_ERROR = ErrorCode(
    -1,
    "UNKNOWN_SERVER_ERROR",
    False,
    "The server experienced an unexpected error when processing the request.",
)
NONE = ErrorCode(0, "NONE", False, "")
OFFSET_OUT_OF_RANGE = ErrorCode(
    1,
    "OFFSET_OUT_OF_RANGE",
    False,
    "The requested offset is not within the range of offsets maintained by the server.",
)
CORRUPT_MESSAGE = ErrorCode(
    2,
    "CORRUPT_MESSAGE",
    True,
    "This message has failed its CRC checksum, exceeds the valid size, has a null key for a"
    " compacted topic, or is otherwise corrupt.",
)
UNKNOWN_TOPIC_OR_PARTITION = ErrorCode(
    3, "UNKNOWN_TOPIC_OR_PARTITION", True, "This server does not host this topic-partition."
)
INVALID_FETCH_SIZE = ErrorCode(
    4, "INVALID_FETCH_SIZE", False, "The requested fetch size is invalid."
)
LEADER_NOT_AVAILABLE = ErrorCode(
    5,
    "LEADER_NOT_AVAILABLE",
    True,
    "There is no leader for this topic-partition as we are in the middle of a leadership election.",
)
NOT_LEADER_OR_FOLLOWER = ErrorCode(
    6,
    "NOT_LEADER_OR_FOLLOWER",
    True,
    "For requests intended only for the leader, this error indicates that the broker is not"
    " the current leader. For requests intended for any replica, this error indicates that "
    "the broker is not a replica of the topic partition.",
)
REQUEST_TIMED_OUT = ErrorCode(7, "REQUEST_TIMED_OUT", True, "The request timed out.")
BROKER_NOT_AVAILABLE = ErrorCode(8, "BROKER_NOT_AVAILABLE", False, "The broker is not available.")
REPLICA_NOT_AVAILABLE = ErrorCode(
    9,
    "REPLICA_NOT_AVAILABLE",
    True,
    "The replica is not available for the requested topic-partition. Produce/Fetch requests"
    " and other requests intended only for the leader or follower return "
    "NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.",
)
MESSAGE_TOO_LARGE = ErrorCode(
    10,
    "MESSAGE_TOO_LARGE",
    False,
    "The request included a message larger than the max message size the server will accept.",
)
STALE_CONTROLLER_EPOCH = ErrorCode(
    11, "STALE_CONTROLLER_EPOCH", False, "The controller moved to another broker."
)
OFFSET_METADATA_TOO_LARGE = ErrorCode(
    12,
    "OFFSET_METADATA_TOO_LARGE",
    False,
    "The metadata field of the offset request was too large.",
)
NETWORK_EXCEPTION = ErrorCode(
    13, "NETWORK_EXCEPTION", True, "The server disconnected before a response was received."
)
COORDINATOR_LOAD_IN_PROGRESS = ErrorCode(
    14,
    "COORDINATOR_LOAD_IN_PROGRESS",
    True,
    "The coordinator is loading and hence can't process requests.",
)
COORDINATOR_NOT_AVAILABLE = ErrorCode(
    15, "COORDINATOR_NOT_AVAILABLE", True, "The coordinator is not available."
)
NOT_COORDINATOR = ErrorCode(16, "NOT_COORDINATOR", True, "This is not the correct coordinator.")
INVALID_TOPIC_EXCEPTION = ErrorCode(
    17,
    "INVALID_TOPIC_EXCEPTION",
    False,
    "The request attempted to perform an operation on an invalid topic.",
)
RECORD_LIST_TOO_LARGE = ErrorCode(
    18,
    "RECORD_LIST_TOO_LARGE",
    False,
    "The request included message batch larger than the configured segment size on the server.",
)
NOT_ENOUGH_REPLICAS = ErrorCode(
    19,
    "NOT_ENOUGH_REPLICAS",
    True,
    "Messages are rejected since there are fewer in-sync replicas than required.",
)
NOT_ENOUGH_REPLICAS_AFTER_APPEND = ErrorCode(
    20,
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    True,
    "Messages are written to the log, but to fewer in-sync replicas than required.",
)
INVALID_REQUIRED_ACKS = ErrorCode(
    21,
    "INVALID_REQUIRED_ACKS",
    False,
    "Produce request specified an invalid value for required acks.",
)
ILLEGAL_GENERATION = ErrorCode(
    22, "ILLEGAL_GENERATION", False, "Specified group generation id is not valid."
)
INCONSISTENT_GROUP_PROTOCOL = ErrorCode(
    23,
    "INCONSISTENT_GROUP_PROTOCOL",
    False,
    "The group member's supported protocols are incompatible with those of existing members"
    " or first group member tried to join with empty protocol type or empty protocol list.",
)
INVALID_GROUP_ID = ErrorCode(24, "INVALID_GROUP_ID", False, "The group id is invalid.")
UNKNOWN_MEMBER_ID = ErrorCode(
    25, "UNKNOWN_MEMBER_ID", False, "The coordinator is not aware of this member."
)
INVALID_SESSION_TIMEOUT = ErrorCode(
    26,
    "INVALID_SESSION_TIMEOUT",
    False,
    "The session timeout is not within the range allowed by the broker (as configured by "
    "group.min.session.timeout.ms and group.max.session.timeout.ms).",
)
REBALANCE_IN_PROGRESS = ErrorCode(
    27, "REBALANCE_IN_PROGRESS", False, "The group is rebalancing, so a rejoin is needed."
)
INVALID_COMMIT_OFFSET_SIZE = ErrorCode(
    28, "INVALID_COMMIT_OFFSET_SIZE", False, "The committing offset data size is not valid."
)
TOPIC_AUTHORIZATION_FAILED = ErrorCode(
    29, "TOPIC_AUTHORIZATION_FAILED", False, "Topic authorization failed."
)
GROUP_AUTHORIZATION_FAILED = ErrorCode(
    30, "GROUP_AUTHORIZATION_FAILED", False, "Group authorization failed."
)
CLUSTER_AUTHORIZATION_FAILED = ErrorCode(
    31, "CLUSTER_AUTHORIZATION_FAILED", False, "Cluster authorization failed."
)
INVALID_TIMESTAMP = ErrorCode(
    32, "INVALID_TIMESTAMP", False, "The timestamp of the message is out of acceptable range."
)
UNSUPPORTED_SASL_MECHANISM = ErrorCode(
    33,
    "UNSUPPORTED_SASL_MECHANISM",
    False,
    "The broker does not support the requested SASL mechanism.",
)
ILLEGAL_SASL_STATE = ErrorCode(
    34, "ILLEGAL_SASL_STATE", False, "Request is not valid given the current SASL state."
)
UNSUPPORTED_VERSION = ErrorCode(
    35, "UNSUPPORTED_VERSION", False, "The version of API is not supported."
)
TOPIC_ALREADY_EXISTS = ErrorCode(
    36, "TOPIC_ALREADY_EXISTS", False, "Topic with this name already exists."
)
INVALID_PARTITIONS = ErrorCode(37, "INVALID_PARTITIONS", False, "Number of partitions is below 1.")
INVALID_REPLICATION_FACTOR = ErrorCode(
    38,
    "INVALID_REPLICATION_FACTOR",
    False,
    "Replication factor is below 1 or larger than the number of available brokers.",
)
INVALID_REPLICA_ASSIGNMENT = ErrorCode(
    39, "INVALID_REPLICA_ASSIGNMENT", False, "Replica assignment is invalid."
)
INVALID_CONFIG = ErrorCode(40, "INVALID_CONFIG", False, "Configuration is invalid.")
NOT_CONTROLLER = ErrorCode(
    41, "NOT_CONTROLLER", True, "This is not the correct controller for this cluster."
)
INVALID_REQUEST = ErrorCode(
    42,
    "INVALID_REQUEST",
    False,
    "This most likely occurs because of a request being malformed by the client library or "
    "the message was sent to an incompatible broker. See the broker logs for more details.",
)
UNSUPPORTED_FOR_MESSAGE_FORMAT = ErrorCode(
    43,
    "UNSUPPORTED_FOR_MESSAGE_FORMAT",
    False,
    "The message format version on the broker does not support the request.",
)
POLICY_VIOLATION = ErrorCode(
    44, "POLICY_VIOLATION", False, "Request parameters do not satisfy the configured policy."
)
OUT_OF_ORDER_SEQUENCE_NUMBER = ErrorCode(
    45,
    "OUT_OF_ORDER_SEQUENCE_NUMBER",
    False,
    "The broker received an out of order sequence number.",
)
DUPLICATE_SEQUENCE_NUMBER = ErrorCode(
    46, "DUPLICATE_SEQUENCE_NUMBER", False, "The broker received a duplicate sequence number."
)
INVALID_PRODUCER_EPOCH = ErrorCode(
    47, "INVALID_PRODUCER_EPOCH", False, "Producer attempted to produce with an old epoch."
)
INVALID_TXN_STATE = ErrorCode(
    48,
    "INVALID_TXN_STATE",
    False,
    "The producer attempted a transactional operation in an invalid state.",
)
INVALID_PRODUCER_ID_MAPPING = ErrorCode(
    49,
    "INVALID_PRODUCER_ID_MAPPING",
    False,
    "The producer attempted to use a producer id which is not currently assigned to its "
    "transactional id.",
)
INVALID_TRANSACTION_TIMEOUT = ErrorCode(
    50,
    "INVALID_TRANSACTION_TIMEOUT",
    False,
    "The transaction timeout is larger than the maximum value allowed by the broker (as "
    "configured by transaction.max.timeout.ms).",
)
CONCURRENT_TRANSACTIONS = ErrorCode(
    51,
    "CONCURRENT_TRANSACTIONS",
    True,
    "The producer attempted to update a transaction while another concurrent operation on "
    "the same transaction was ongoing.",
)
TRANSACTION_COORDINATOR_FENCED = ErrorCode(
    52,
    "TRANSACTION_COORDINATOR_FENCED",
    False,
    "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the "
    "current coordinator for a given producer.",
)
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = ErrorCode(
    53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False, "Transactional Id authorization failed."
)
SECURITY_DISABLED = ErrorCode(54, "SECURITY_DISABLED", False, "Security features are disabled.")
OPERATION_NOT_ATTEMPTED = ErrorCode(
    55,
    "OPERATION_NOT_ATTEMPTED",
    False,
    "The broker did not attempt to execute this operation. This may happen for batched RPCs"
    " where some operations in the batch failed, causing the broker to respond without "
    "trying the rest.",
)
KAFKA_STORAGE_ERROR = ErrorCode(
    56, "KAFKA_STORAGE_ERROR", True, "Disk error when trying to access log file on the disk."
)
LOG_DIR_NOT_FOUND = ErrorCode(
    57,
    "LOG_DIR_NOT_FOUND",
    False,
    "The user-specified log directory is not found in the broker config.",
)
SASL_AUTHENTICATION_FAILED = ErrorCode(
    58, "SASL_AUTHENTICATION_FAILED", False, "SASL Authentication failed."
)
UNKNOWN_PRODUCER_ID = ErrorCode(
    59,
    "UNKNOWN_PRODUCER_ID",
    False,
    "This exception is raised by the broker if it could not locate the producer metadata "
    "associated with the producerId in question. This could happen if, for instance, the "
    "producer's records were deleted because their retention time had elapsed. Once the "
    "last records of the producerId are removed, the producer's metadata is removed from "
    "the broker, and future appends by the producer will return this exception.",
)
REASSIGNMENT_IN_PROGRESS = ErrorCode(
    60, "REASSIGNMENT_IN_PROGRESS", False, "A partition reassignment is in progress."
)
DELEGATION_TOKEN_AUTH_DISABLED = ErrorCode(
    61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "Delegation Token feature is not enabled."
)
DELEGATION_TOKEN_NOT_FOUND = ErrorCode(
    62, "DELEGATION_TOKEN_NOT_FOUND", False, "Delegation Token is not found on server."
)
DELEGATION_TOKEN_OWNER_MISMATCH = ErrorCode(
    63, "DELEGATION_TOKEN_OWNER_MISMATCH", False, "Specified Principal is not valid Owner/Renewer."
)
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = ErrorCode(
    64,
    "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
    False,
    "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
    "delegation token authenticated channels.",
)
DELEGATION_TOKEN_AUTHORIZATION_FAILED = ErrorCode(
    65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "Delegation Token authorization failed."
)
DELEGATION_TOKEN_EXPIRED = ErrorCode(
    66, "DELEGATION_TOKEN_EXPIRED", False, "Delegation Token is expired."
)
INVALID_PRINCIPAL_TYPE = ErrorCode(
    67, "INVALID_PRINCIPAL_TYPE", False, "Supplied principalType is not supported."
)
NON_EMPTY_GROUP = ErrorCode(68, "NON_EMPTY_GROUP", False, "The group is not empty.")
GROUP_ID_NOT_FOUND = ErrorCode(69, "GROUP_ID_NOT_FOUND", False, "The group id does not exist.")
FETCH_SESSION_ID_NOT_FOUND = ErrorCode(
    70, "FETCH_SESSION_ID_NOT_FOUND", True, "The fetch session ID was not found."
)
INVALID_FETCH_SESSION_EPOCH = ErrorCode(
    71, "INVALID_FETCH_SESSION_EPOCH", True, "The fetch session epoch is invalid."
)
LISTENER_NOT_FOUND = ErrorCode(
    72,
    "LISTENER_NOT_FOUND",
    True,
    "There is no listener on the leader broker that matches the listener on which metadata "
    "request was processed.",
)
TOPIC_DELETION_DISABLED = ErrorCode(
    73, "TOPIC_DELETION_DISABLED", False, "Topic deletion is disabled."
)
FENCED_LEADER_EPOCH = ErrorCode(
    74,
    "FENCED_LEADER_EPOCH",
    True,
    "The leader epoch in the request is older than the epoch on the broker.",
)
UNKNOWN_LEADER_EPOCH = ErrorCode(
    75,
    "UNKNOWN_LEADER_EPOCH",
    True,
    "The leader epoch in the request is newer than the epoch on the broker.",
)
UNSUPPORTED_COMPRESSION_TYPE = ErrorCode(
    76,
    "UNSUPPORTED_COMPRESSION_TYPE",
    False,
    "The requesting client does not support the compression type of given partition.",
)
STALE_BROKER_EPOCH = ErrorCode(77, "STALE_BROKER_EPOCH", False, "Broker epoch has changed.")
OFFSET_NOT_AVAILABLE = ErrorCode(
    78,
    "OFFSET_NOT_AVAILABLE",
    True,
    "The leader high watermark has not caught up from a recent leader election so the "
    "offsets cannot be guaranteed to be monotonically increasing.",
)
MEMBER_ID_REQUIRED = ErrorCode(
    79,
    "MEMBER_ID_REQUIRED",
    False,
    "The group member needs to have a valid member id before actually entering a consumer group.",
)
PREFERRED_LEADER_NOT_AVAILABLE = ErrorCode(
    80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "The preferred leader was not available."
)
GROUP_MAX_SIZE_REACHED = ErrorCode(
    81, "GROUP_MAX_SIZE_REACHED", False, "The group has reached its maximum size."
)
FENCED_INSTANCE_ID = ErrorCode(
    82,
    "FENCED_INSTANCE_ID",
    False,
    "The broker rejected this static consumer since another consumer with the same "
    "group.instance.id has registered with a different member.id.",
)
ELIGIBLE_LEADERS_NOT_AVAILABLE = ErrorCode(
    83,
    "ELIGIBLE_LEADERS_NOT_AVAILABLE",
    True,
    "Eligible topic partition leaders are not available.",
)
ELECTION_NOT_NEEDED = ErrorCode(
    84, "ELECTION_NOT_NEEDED", True, "Leader election not needed for topic partition."
)
NO_REASSIGNMENT_IN_PROGRESS = ErrorCode(
    85, "NO_REASSIGNMENT_IN_PROGRESS", False, "No partition reassignment is in progress."
)
GROUP_SUBSCRIBED_TO_TOPIC = ErrorCode(
    86,
    "GROUP_SUBSCRIBED_TO_TOPIC",
    False,
    "Deleting offsets of a topic is forbidden while the consumer group is actively "
    "subscribed to it.",
)
INVALID_RECORD = ErrorCode(
    87,
    "INVALID_RECORD",
    False,
    "This record has failed the validation on broker and hence will be rejected.",
)
UNSTABLE_OFFSET_COMMIT = ErrorCode(
    88, "UNSTABLE_OFFSET_COMMIT", True, "There are unstable offsets that need to be cleared."
)
THROTTLING_QUOTA_EXCEEDED = ErrorCode(
    89, "THROTTLING_QUOTA_EXCEEDED", True, "The throttling quota has been exceeded."
)
PRODUCER_FENCED = ErrorCode(
    90,
    "PRODUCER_FENCED",
    False,
    "There is a newer producer with the same transactionalId which fences the current one.",
)
RESOURCE_NOT_FOUND = ErrorCode(
    91,
    "RESOURCE_NOT_FOUND",
    False,
    "A request illegally referred to a resource that does not exist.",
)
DUPLICATE_RESOURCE = ErrorCode(
    92, "DUPLICATE_RESOURCE", False, "A request illegally referred to the same resource twice."
)
UNACCEPTABLE_CREDENTIAL = ErrorCode(
    93,
    "UNACCEPTABLE_CREDENTIAL",
    False,
    "Requested credential would not meet criteria for acceptability.",
)
INCONSISTENT_VOTER_SET = ErrorCode(
    94,
    "INCONSISTENT_VOTER_SET",
    False,
    "Indicates that the either the sender or recipient of a voter-only request is not one "
    "of the expected voters.",
)
INVALID_UPDATE_VERSION = ErrorCode(
    95, "INVALID_UPDATE_VERSION", False, "The given update version was invalid."
)
FEATURE_UPDATE_FAILED = ErrorCode(
    96,
    "FEATURE_UPDATE_FAILED",
    False,
    "Unable to update finalized features due to an unexpected server error.",
)
PRINCIPAL_DESERIALIZATION_FAILURE = ErrorCode(
    97,
    "PRINCIPAL_DESERIALIZATION_FAILURE",
    False,
    "Request principal deserialization failed during forwarding. This indicates an internal"
    " error on the broker cluster security setup.",
)
SNAPSHOT_NOT_FOUND = ErrorCode(98, "SNAPSHOT_NOT_FOUND", False, "Requested snapshot was not found.")
POSITION_OUT_OF_RANGE = ErrorCode(
    99,
    "POSITION_OUT_OF_RANGE",
    False,
    "Requested position is not greater than or equal to zero, and less than the size of the"
    " snapshot.",
)
UNKNOWN_TOPIC_ID = ErrorCode(
    100, "UNKNOWN_TOPIC_ID", True, "This server does not host this topic ID."
)
DUPLICATE_BROKER_REGISTRATION = ErrorCode(
    101, "DUPLICATE_BROKER_REGISTRATION", False, "This broker ID is already in use."
)
BROKER_ID_NOT_REGISTERED = ErrorCode(
    102, "BROKER_ID_NOT_REGISTERED", False, "The given broker ID was not registered."
)
INCONSISTENT_TOPIC_ID = ErrorCode(
    103,
    "INCONSISTENT_TOPIC_ID",
    True,
    "The log's topic ID did not match the topic ID in the request.",
)
INCONSISTENT_CLUSTER_ID = ErrorCode(
    104,
    "INCONSISTENT_CLUSTER_ID",
    False,
    "The clusterId in the request does not match that found on the server.",
)
TRANSACTIONAL_ID_NOT_FOUND = ErrorCode(
    105, "TRANSACTIONAL_ID_NOT_FOUND", False, "The transactionalId could not be found."
)
FETCH_SESSION_TOPIC_ID_ERROR = ErrorCode(
    106,
    "FETCH_SESSION_TOPIC_ID_ERROR",
    True,
    "The fetch session encountered inconsistent topic ID usage.",
)
INELIGIBLE_REPLICA = ErrorCode(
    107, "INELIGIBLE_REPLICA", False, "The new ISR contains at least one ineligible replica."
)
NEW_LEADER_ELECTED = ErrorCode(
    108,
    "NEW_LEADER_ELECTED",
    False,
    "The AlterPartition request successfully updated the partition state but the leader has"
    " changed.",
)
OFFSET_MOVED_TO_TIERED_STORAGE = ErrorCode(
    109, "OFFSET_MOVED_TO_TIERED_STORAGE", False, "The requested offset is moved to tiered storage."
)
FENCED_MEMBER_EPOCH = ErrorCode(
    110,
    "FENCED_MEMBER_EPOCH",
    False,
    "The member epoch is fenced by the group coordinator. The member must abandon all its "
    "partitions and rejoin.",
)
UNRELEASED_INSTANCE_ID = ErrorCode(
    111,
    "UNRELEASED_INSTANCE_ID",
    False,
    "The instance ID is still used by another member in the consumer group. That member "
    "must leave first.",
)
UNSUPPORTED_ASSIGNOR = ErrorCode(
    112,
    "UNSUPPORTED_ASSIGNOR",
    False,
    "The assignor or its version range is not supported by the consumer group.",
)
STALE_MEMBER_EPOCH = ErrorCode(
    113,
    "STALE_MEMBER_EPOCH",
    False,
    "The member epoch is stale. The member must retry after receiving its updated member "
    "epoch via the ConsumerGroupHeartbeat API.",
)
MISMATCHED_ENDPOINT_TYPE = ErrorCode(
    114, "MISMATCHED_ENDPOINT_TYPE", False, "The request was sent to an endpoint of the wrong type."
)
UNSUPPORTED_ENDPOINT_TYPE = ErrorCode(
    115, "UNSUPPORTED_ENDPOINT_TYPE", False, "This endpoint type is not supported yet."
)
UNKNOWN_CONTROLLER_ID = ErrorCode(
    116, "UNKNOWN_CONTROLLER_ID", False, "This controller ID is not known."
)
UNKNOWN_SUBSCRIPTION_ID = ErrorCode(
    117,
    "UNKNOWN_SUBSCRIPTION_ID",
    False,
    "Client sent a push telemetry request with an invalid or outdated subscription ID.",
)
TELEMETRY_TOO_LARGE = ErrorCode(
    118,
    "TELEMETRY_TOO_LARGE",
    False,
    "Client sent a push telemetry request larger than the maximum size the broker will accept.",
)
INVALID_REGISTRATION = ErrorCode(
    119,
    "INVALID_REGISTRATION",
    False,
    "The controller has considered the broker registration to be invalid.",
)
TRANSACTION_ABORTABLE = ErrorCode(
    120,
    "TRANSACTION_ABORTABLE",
    False,
    "The server encountered an error with the transaction. The client can abort the "
    "transaction to continue using this transactional ID.",
)
INVALID_RECORD_STATE = ErrorCode(
    121,
    "INVALID_RECORD_STATE",
    False,
    "The record state is invalid. The acknowledgement of delivery could not be completed.",
)
SHARE_SESSION_NOT_FOUND = ErrorCode(
    122, "SHARE_SESSION_NOT_FOUND", True, "The share session was not found."
)
INVALID_SHARE_SESSION_EPOCH = ErrorCode(
    123, "INVALID_SHARE_SESSION_EPOCH", True, "The share session epoch is invalid."
)
FENCED_STATE_EPOCH = ErrorCode(
    124,
    "FENCED_STATE_EPOCH",
    False,
    "The share coordinator rejected the request because the share-group state epoch did not match.",
)
INVALID_VOTER_KEY = ErrorCode(
    125, "INVALID_VOTER_KEY", False, "The voter key doesn't match the receiving replica's key."
)
DUPLICATE_VOTER = ErrorCode(
    126, "DUPLICATE_VOTER", False, "The voter is already part of the set of voters."
)
VOTER_NOT_FOUND = ErrorCode(
    127, "VOTER_NOT_FOUND", False, "The voter is not part of the set of voters."
)
INVALID_REGULAR_EXPRESSION = ErrorCode(
    128, "INVALID_REGULAR_EXPRESSION", False, "The regular expression is not valid."
)
REBOOTSTRAP_REQUIRED = ErrorCode(
    129,
    "REBOOTSTRAP_REQUIRED",
    False,
    "Client metadata is stale. The client should rebootstrap to obtain new metadata.",
)
STREAMS_INVALID_TOPOLOGY = ErrorCode(
    130, "STREAMS_INVALID_TOPOLOGY", False, "The supplied topology is invalid."
)
STREAMS_INVALID_TOPOLOGY_EPOCH = ErrorCode(
    131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "The supplied topology epoch is invalid."
)
STREAMS_TOPOLOGY_FENCED = ErrorCode(
    132, "STREAMS_TOPOLOGY_FENCED", False, "The supplied topology epoch is outdated."
)
SHARE_SESSION_LIMIT_REACHED = ErrorCode(
    133, "SHARE_SESSION_LIMIT_REACHED", True, "The limit of share sessions has been reached."
)

#: code -> :class:`ErrorCode`, every code above.
ERRORS: dict[int, ErrorCode] = {
    error.code: error for error in list(globals().values()) if isinstance(error, ErrorCode)
}
#: name -> :class:`ErrorCode` (e.g. ``ERRORS_BY_NAME["NOT_LEADER_OR_FOLLOWER"].code == 6``).
ERRORS_BY_NAME: dict[str, ErrorCode] = {e.name: e for e in ERRORS.values()}

__all__ += [error.name for error in ERRORS.values()]


def error_for(code: int) -> ErrorCode:
    """The :class:`ErrorCode` constant for ``code``; an unknown code maps to a non-retriable
    entry named ``UNKNOWN_ERROR_CODE_<code>`` (a newer broker may send codes we do not know)."""
    entry = ERRORS.get(code)
    if entry is None:
        return ErrorCode(code, f"UNKNOWN_ERROR_CODE_{code}", False, "Unknown error code.")
    return entry


def error_for_code(code: int, context: str) -> KafkaApiError:
    """The :class:`~spark_kafka_py.errors.KafkaApiError` for a non-zero ``code`` (not raised).

    Args:
        code: the ``int16`` error code from a response (0 is accepted and named NONE).
        context: what was being done and on what, e.g. ``"fetching topic-0 at offset 5"``.
    """
    return KafkaApiError(error_for(code), context)


def raise_for_error(code: int, context: str) -> None:
    """Raise :class:`~spark_kafka_py.errors.KafkaApiError` unless ``code`` is 0 (NONE).

    Args:
        code: the ``int16`` error code from a response.
        context: what was being done and on what, e.g. ``"in Fetch of topic-0 from broker 1"``.

    Raises:
        KafkaApiError: carrying the :class:`ErrorCode` (code, name, retriable flag), with the
            context and Kafka's description in its message.
    """
    if code == NONE:
        return
    raise error_for_code(code, context)
