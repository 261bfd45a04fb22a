"""spark_kafka_py.testing.jvm: javac once per source and class path, Java programs launched."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import spark_kafka_py.testing as testing_package
from spark_kafka_py.testing import jvm

HELLO = """
public final class Hello {
    public static void main(String[] args) throws Exception {
        String in = new String(System.in.readAllBytes(), "UTF-8").trim();
        System.out.println(GREETING + " " + String.join(",", args) + " " + in);
        if (args.length > 0 && args[0].equals("fail")) System.exit(3);
    }
    static final String GREETING = "hello";
}
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SPARK_KAFKA_PY_CACHE", str(root))
    return root


def _source(tmp_path: Path, text: str = HELLO) -> Path:
    src = tmp_path / "src" / "Hello.java"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(text, encoding="utf-8")
    return src


def test_compile_once_per_source_and_classpath(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _source(tmp_path)
    classes = jvm.compile_java([src], "")
    assert (classes / "Hello.class").is_file()
    assert classes.parent == cache / "java" and classes.name.startswith("Hello-")

    # found again without javac
    javac = jvm.javac_executable
    monkeypatch.setattr(jvm, "javac_executable", lambda: pytest.fail("javac ran again"))
    assert jvm.compile_java([src], "") == classes
    monkeypatch.setattr(jvm, "javac_executable", javac)

    # another class path or other source bytes: another directory
    elsewhere = jvm.compile_java([src], str(tmp_path))
    assert elsewhere != classes
    changed = _source(tmp_path / "changed", HELLO.replace('"hello"', '"hi"'))
    other = jvm.compile_java([changed], "")
    assert other != classes
    out = jvm.run_java("Hello", ["a", "b"], classpath=str(other), input="stdin", log4j_config=None)
    assert out.returncode == 0 and out.stdout.strip() == "hi a,b stdin"
    # no temporary directories left behind
    assert {p.name for p in (cache / "java").iterdir()} == {
        classes.name,
        elsewhere.name,
        other.name,
    }


def test_compile_error_carries_javac_output(tmp_path: Path, cache: Path) -> None:
    src = _source(tmp_path, "public final class Hello { int x = ; }")
    with pytest.raises(jvm.JavaError, match=r"javac Hello\.java exited 1") as info:
        jvm.compile_java([src], "")
    assert "Hello.java" in info.value.stderr and info.value.returncode == 1
    assert [p for p in (cache / "java").iterdir()] == []
    with pytest.raises(ValueError):
        jvm.compile_java([], "")


def test_run_java_failure_and_command_line(tmp_path: Path, cache: Path) -> None:
    classes = str(jvm.compile_java([_source(tmp_path)], ""))
    with pytest.raises(jvm.JavaError, match="Hello fail exited 3") as info:
        jvm.run_java("Hello", ["fail"], classpath=classes)
    assert info.value.returncode == 3 and "hello fail" in info.value.stdout
    assert jvm.run_java("Hello", ["fail"], classpath=classes, check=False).returncode == 3

    cmd = jvm.java_command(
        "Main", ["x"], classpath="cp", heap="1g", fast_start=False, jvm_options=["-Dk=v"]
    )
    assert cmd[0] == jvm.java_executable() and cmd[-4:] == ["-cp", "cp", "Main", "x"]
    assert "-Xmx1g" in cmd and "-Dk=v" in cmd and "-XX:TieredStopAtLevel=1" not in cmd
    assert any(a.endswith(jvm.TOOLS_LOG4J) for a in cmd if a.startswith("-Dlog4j2"))


def test_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(jvm.JavaError, match="no javac on PATH"):
        jvm.javac_executable()
    with pytest.raises(jvm.JavaError, match="no java on PATH"):
        jvm.java_executable()


def test_testing_modules_import_each_other_without_cycles() -> None:
    """Every ``spark_kafka_py.testing`` module's imports of its siblings, at module level or
    inside functions, form a graph without cycles."""
    package = Path(testing_package.__file__).parent
    edges: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("spark_kafka_py.testing."):
                    deps.add(node.module.rsplit(".", 1)[1])
                elif node.module == "spark_kafka_py.testing":
                    deps.update(alias.name for alias in node.names)
        edges[path.stem] = deps
    done: set[str] = set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        assert name not in stack, f"import cycle: {' -> '.join((*stack, name))}"
        if name in done:
            return
        for dep in sorted(edges.get(name, ())):
            visit(dep, (*stack, name))
        done.add(name)

    for name in sorted(edges):
        visit(name, ())
