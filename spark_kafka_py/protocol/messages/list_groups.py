"""ListGroups (API key 16): the groups one broker coordinates.

Source: Kafka message specs ``ListGroupsRequest.json`` / ``ListGroupsResponse.json`` (valid
versions 0-5, flexible 3+). Version notes from the spec: v4 adds ``states_filter`` and each
group's ``group_state`` (KIP-518); v5 adds ``types_filter`` and each group's ``group_type``
(``"classic"``, ``"consumer"``, ``"share"``, ``"streams"``; KIP-848). Each broker answers for
the groups whose coordinator it is, so a whole-cluster listing asks every broker (as Kafka's
``Admin.listGroups`` and ``kafka-consumer-groups.sh --list`` do). We support versions 0-5.
"""

from __future__ import annotations

from spark_kafka_py.protocol.schema import (
    INT16,
    INT32,
    STRING,
    Array,
    Request,
    Response,
    kafka_message,
    kafka_struct,
    kfield,
)

__all__ = ["LIST_GROUPS_KEY", "ListGroupsRequest", "ListGroupsResponse", "ListedGroup"]

LIST_GROUPS_KEY = 16


@kafka_message(api_key=LIST_GROUPS_KEY, valid="0-5", flexible="3+", supported=(0, 5))
class ListGroupsRequest(Request["ListGroupsResponse"]):
    """ListGroups request, versions 0-5: empty filters list every group."""

    states_filter: tuple[str, ...] = kfield(Array(STRING), "4+")
    types_filter: tuple[str, ...] = kfield(Array(STRING), "5+")


@kafka_struct
class ListedGroup:
    """One group: its id, protocol type (``"consumer"`` for consumers, ``""`` for a group
    with only committed offsets), and (v4+) its state, (v5+) its type."""

    group_id: str = kfield(STRING, "0+")
    protocol_type: str = kfield(STRING, "0+")
    group_state: str = kfield(STRING, "4+", ignorable=True)
    group_type: str = kfield(STRING, "5+", ignorable=True)


@kafka_message(api_key=LIST_GROUPS_KEY, valid="0-5", flexible="3+", supported=(0, 5))
class ListGroupsResponse(Response):
    """ListGroups response, versions 0-5."""

    throttle_time_ms: int = kfield(INT32, "1+", ignorable=True)
    error_code: int = kfield(INT16, "0+")
    groups: tuple[ListedGroup, ...] = kfield(Array(ListedGroup), "0+")


ListGroupsRequest.response_type = ListGroupsResponse
