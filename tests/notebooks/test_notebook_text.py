"""What notebooks/batch_read.ipynb tells a new user, read without running it (issue 24): the
README's install command, ``register(spark)`` where PySpark does not find the source by itself,
and topics made with the package's own admin API, not with the test helpers."""

from __future__ import annotations

from pathlib import Path

import nbformat

from spark_kafka_py.discovery import CHECKOUT_INSTALL

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "batch_read.ipynb"


def _sources(cell_type: str) -> str:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == cell_type)


def test_install_line_is_the_readmes() -> None:
    markdown = _sources("markdown")
    readme = (NOTEBOOK.parents[1] / "README.md").read_text(encoding="utf-8")
    assert CHECKOUT_INSTALL in readme
    assert CHECKOUT_INSTALL in markdown
    # every command line that installs (in the notebook's shell blocks) is that one
    commands = [
        line for line in markdown.splitlines() if line.startswith(("pip ", "python3 -m pip "))
    ]
    assert commands and all(line.startswith(CHECKOUT_INSTALL) for line in commands), commands


def test_registers_the_source_when_pyspark_does_not_find_it() -> None:
    code = _sources("code")
    assert "if not source_discoverable():" in code
    assert "spark_kafka_py.register(spark)" in code


def test_topic_comes_from_the_admin_api_not_the_test_helpers() -> None:
    code = _sources("code")
    assert "admin.create_topic(" in code
    assert "create_topic, " not in code and "list_topics" not in code
    assert "spark-kafka-py topics create" in _sources("markdown")
