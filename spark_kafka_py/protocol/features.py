"""What a broker's ApiVersions answer says about its Kafka release (sans-I/O facts, no I/O).

ApiVersions (API key 18) does not carry the broker's release number. Two facts come close:

- From v3 on (KIP-584) the response lists the cluster's finalized features; in KRaft mode
  ``metadata.version`` is always one of them. Its level names a release line (``3.6``, ``4.0``):
  the release whose ``MetadataVersion`` introduced that level. A cluster upgraded without
  raising ``metadata.version`` runs newer brokers than the level says, so the level gives a
  lower bound of the brokers' release ("at least 3.6"), never an exact release.
- APIs appear with a release: an API missing from the answer means a broker older than that
  release (or one with the feature switched off).

Sources: ``org.apache.kafka.server.common.MetadataVersion`` of Kafka 3.9.1 (levels 1-21) and
4.4.0 (levels 7-33, the production ones), the KIPs named in :data:`API_SINCE`.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "API_SINCE",
    "METADATA_VERSION_FEATURE",
    "api_requirement",
    "release_of_metadata_level",
]

#: Name of the finalized feature holding the cluster's metadata version (KIP-778).
METADATA_VERSION_FEATURE = "metadata.version"

#: First ``metadata.version`` level of each release line (``MetadataVersion`` of 3.9.1 and 4.4.0:
#: 3.0-IV1 = 1, 3.1-IV0 = 2, 3.2-IV0 = 3, 3.3-IV0 = 4, 3.4-IV0 = 8, 3.5-IV0 = 9, 3.6-IV0 = 12,
#: 3.7-IV0 = 15, 3.8-IV0 = 20, 3.9-IV0 = 21, 4.0-IV0 = 22, 4.1-IV0 = 26, 4.2-IV0 = 28,
#: 4.3-IV0 = 30, 4.4-IV0 = 31; 4.4-IV2 = 33 is the last production level of 4.4.0).
_FIRST_LEVEL_OF_RELEASE: tuple[tuple[int, str], ...] = (
    (1, "3.0"),
    (2, "3.1"),
    (3, "3.2"),
    (4, "3.3"),
    (8, "3.4"),
    (9, "3.5"),
    (12, "3.6"),
    (15, "3.7"),
    (20, "3.8"),
    (21, "3.9"),
    (22, "4.0"),
    (26, "4.1"),
    (28, "4.2"),
    (30, "4.3"),
    (31, "4.4"),
)

#: Highest level :data:`_FIRST_LEVEL_OF_RELEASE` knows; above it the line is "after 4.4".
_LAST_KNOWN_LEVEL = 33

#: APIs we use that older brokers lack: API key -> (first Kafka release serving it, feature,
#: source). ConsumerGroupHeartbeat/Describe are served from 3.7 as an early-access preview;
#: KIP-848 is generally available from 4.0.
API_SINCE: Mapping[int, tuple[str, str, str]] = {
    65: ("3.0", "describing transactions", "KIP-664"),
    66: ("3.0", "listing transactions", "KIP-664"),
    68: ("4.0", "the consumer group protocol (group.protocol=consumer)", "KIP-848"),
    69: ("4.0", "describing consumer-protocol groups", "KIP-848"),
}


def release_of_metadata_level(level: int) -> str | None:
    """The Kafka release line (``"3.6"``) whose ``MetadataVersion`` introduced ``level``.

    Args:
        level: the finalized ``metadata.version`` level (ApiVersions v3+, KIP-584/KIP-778).

    Returns:
        ``"X.Y"``, ``"after 4.4"`` for a level newer than this table, ``None`` for a level below 1
        (ZooKeeper mode or not finalized).
    """
    if level < 1:
        return None
    if level > _LAST_KNOWN_LEVEL:
        return "after 4.4"
    found = None
    for first, release in _FIRST_LEVEL_OF_RELEASE:
        if level >= first:
            found = release
    return found


def api_requirement(api_key: int) -> str:
    """A sentence naming the release and feature that need ``api_key``, or ``""`` when the API
    is one every supported broker serves (:data:`API_SINCE`)."""
    since = API_SINCE.get(api_key)
    if since is None:
        return ""
    release, feature, source = since
    return f"{feature} needs a Kafka {release}+ broker ({source})"
