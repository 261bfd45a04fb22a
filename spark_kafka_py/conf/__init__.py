"""Configuration files shipped as package data (the top-level ``conf`` is a symlink here).

- ``kraft-server.properties.template``: a combined broker+controller KRaft node.
- ``kafka-log4j2.properties``: a local Kafka node logs to ``<log dir>/server.log``.
- ``kafka-tools-log4j2.properties``: Kafka's Java tools log warnings to stderr.
- ``spark-log4j2.properties``: Spark at WARN (tests, demo).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["conf_path"]


def conf_path(name: str) -> Path:
    """Absolute path of the configuration file ``name`` of this package.

    Raises:
        FileNotFoundError: no such file.
    """
    path = Path(str(resources.files(__name__).joinpath(name)))
    if not path.is_file():
        raise FileNotFoundError(f"no configuration file {name!r} in {path.parent}")
    return path
