"""One declarative schema per Kafka API (see :mod:`spark_kafka_py.protocol.schema`).

Top-level request/response classes are re-exported here; nested struct types live in their
API's module (``from spark_kafka_py.protocol.messages.fetch import FetchTopic``) because
several APIs reuse the same struct names.
"""

from __future__ import annotations

from spark_kafka_py.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
from spark_kafka_py.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)
from spark_kafka_py.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from spark_kafka_py.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from spark_kafka_py.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from spark_kafka_py.protocol.messages.create_topics import (
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from spark_kafka_py.protocol.messages.delegation_token import (
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)
from spark_kafka_py.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from spark_kafka_py.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
from spark_kafka_py.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from spark_kafka_py.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from spark_kafka_py.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from spark_kafka_py.protocol.messages.fetch import FetchRequest, FetchResponse
from spark_kafka_py.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from spark_kafka_py.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from spark_kafka_py.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from spark_kafka_py.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from spark_kafka_py.protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from spark_kafka_py.protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from spark_kafka_py.protocol.messages.list_offsets import ListOffsetsRequest, ListOffsetsResponse
from spark_kafka_py.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from spark_kafka_py.protocol.messages.metadata import MetadataRequest, MetadataResponse
from spark_kafka_py.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from spark_kafka_py.protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from spark_kafka_py.protocol.messages.produce import ProduceRequest, ProduceResponse
from spark_kafka_py.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from spark_kafka_py.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from spark_kafka_py.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from spark_kafka_py.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from spark_kafka_py.protocol.schema import Request, Response

__all__ = [
    "REQUEST_TYPES",
    "RESPONSE_TYPES",
    "AddOffsetsToTxnRequest",
    "AddOffsetsToTxnResponse",
    "AddPartitionsToTxnRequest",
    "AddPartitionsToTxnResponse",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "CreateDelegationTokenRequest",
    "CreateDelegationTokenResponse",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
    "DescribeConfigsRequest",
    "DescribeConfigsResponse",
    "DescribeGroupsRequest",
    "DescribeGroupsResponse",
    "DescribeTransactionsRequest",
    "DescribeTransactionsResponse",
    "EndTxnRequest",
    "EndTxnResponse",
    "FetchRequest",
    "FetchResponse",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "InitProducerIdRequest",
    "InitProducerIdResponse",
    "JoinGroupRequest",
    "JoinGroupResponse",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
    "ListGroupsRequest",
    "ListGroupsResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "ListTransactionsRequest",
    "ListTransactionsResponse",
    "MetadataRequest",
    "MetadataResponse",
    "OffsetCommitRequest",
    "OffsetCommitResponse",
    "OffsetFetchRequest",
    "OffsetFetchResponse",
    "ProduceRequest",
    "ProduceResponse",
    "RenewDelegationTokenRequest",
    "RenewDelegationTokenResponse",
    "SaslAuthenticateRequest",
    "SaslAuthenticateResponse",
    "SaslHandshakeRequest",
    "SaslHandshakeResponse",
    "SyncGroupRequest",
    "SyncGroupResponse",
    "TxnOffsetCommitRequest",
    "TxnOffsetCommitResponse",
]

#: API key -> request class, for every API this library speaks.
REQUEST_TYPES: dict[int, type[Request[Response]]] = {
    cls.API_KEY: cls
    for cls in (
        ApiVersionsRequest,
        MetadataRequest,
        ListOffsetsRequest,
        FetchRequest,
        FindCoordinatorRequest,
        JoinGroupRequest,
        SyncGroupRequest,
        HeartbeatRequest,
        LeaveGroupRequest,
        OffsetFetchRequest,
        OffsetCommitRequest,
        SaslHandshakeRequest,
        SaslAuthenticateRequest,
        ProduceRequest,
        InitProducerIdRequest,
        AddPartitionsToTxnRequest,
        AddOffsetsToTxnRequest,
        EndTxnRequest,
        TxnOffsetCommitRequest,
        CreateTopicsRequest,
        DescribeTransactionsRequest,
        ListTransactionsRequest,
        DescribeConfigsRequest,
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupDescribeRequest,
        ListGroupsRequest,
        DescribeGroupsRequest,
        DeleteTopicsRequest,
        CreateDelegationTokenRequest,
        RenewDelegationTokenRequest,
    )
}
#: API key -> response class.
RESPONSE_TYPES: dict[int, type[Response]] = {
    key: cls.response_type for key, cls in REQUEST_TYPES.items()
}
