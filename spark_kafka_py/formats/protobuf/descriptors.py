"""Protobuf schemas as descriptors: from ``.proto`` text, a binary ``FileDescriptorSet``, or a
base64 ``FileDescriptorProto``; a message picked by full name or by Confluent message indexes.

Sources of a schema, as the issue lists them:

- ``.proto`` text (what a Confluent-compatible registry returns for a Protobuf schema), with
  its imports given as more named ``.proto`` texts (what the schema's references resolve to).
  Compiled by protoc as shipped in PyPI's ``grpcio-tools`` (``python -m grpc_tools.protoc
  --descriptor_set_out --include_imports``), run in a child process over a private temporary
  directory so its diagnostics can be reported; the well-known types
  (``google/protobuf/*.proto``) come from grpcio-tools' bundled include directory.
- A binary ``FileDescriptorSet`` (bytes, or a file path), as spark-protobuf's
  ``from_protobuf(data, messageName, descFilePath)`` / ``binaryDescriptorSet`` take it.
- A base64 ``FileDescriptorProto`` (Apicurio serves schemas registered by confluent-kafka's
  Python ``ProtobufSerializer`` so); its well-known-type dependencies come from the protobuf
  package's own descriptors, any other dependency from ``imports``.

No network I/O. Descriptors live in a private ``DescriptorPool`` per schema.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped]
from google.protobuf.descriptor import Descriptor  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError, Message  # type: ignore[import-untyped]

from spark_kafka_py.formats.errors import ProtobufSchemaError

#: The largest descriptor set or ``.proto`` text accepted (bytes): far above real schemas,
#: low enough to bound memory on hostile input.
MAX_SCHEMA_BYTES: Final = 16 * 1024 * 1024
#: The longest protoc may run (seconds).
PROTOC_TIMEOUT_S: Final = 120.0

_WELL_KNOWN_PREFIX: Final = "google/protobuf/"


@dataclass
class ProtobufSchema:
    """A parsed Protobuf schema: its files in a private descriptor pool.

    Attributes:
        files: the ``FileDescriptorProto`` s, dependencies before their dependents.
        main: the name of the schema's own file (the one given; its first message is the
            default message).
        pool: the descriptor pool holding ``files`` as written (used for the Spark mapping).
    """

    files: list[descriptor_pb2.FileDescriptorProto]
    main: str
    pool: descriptor_pool.DescriptorPool = field(repr=False)
    _decode_pool: descriptor_pool.DescriptorPool | None = field(default=None, repr=False)

    def message(self, name: str | None = None) -> Descriptor:
        """The message descriptor named ``name`` (full name, ``package.Outer.Inner``; a name
        without a package is also looked up in the main file's package), or the main file's
        first message when ``name`` is None.

        Raises:
            ProtobufSchemaError: no such message, or no message in the main file.
        """
        if name is None:
            fd = self.pool.FindFileByName(self.main)
            if not fd.message_types_by_name:
                raise ProtobufSchemaError("the schema declares no message", self.main)
            return next(iter(fd.message_types_by_name.values()))
        candidates = [name]
        package = self.pool.FindFileByName(self.main).package
        if package and not name.startswith(package + "."):
            candidates.append(f"{package}.{name}")
        for candidate in candidates:
            try:
                return self.pool.FindMessageTypeByName(candidate)
            except KeyError:
                continue
        raise ProtobufSchemaError(f"no message {name!r} in the schema", self.main)

    def message_by_indexes(self, indexes: Sequence[int]) -> Descriptor:
        """The message Confluent's message indexes name in the main file: the first index picks
        a top-level message (declaration order), each next one a message nested in it
        (Confluent Schema Registry documentation, "Wire format", Protobuf).

        Raises:
            ProtobufSchemaError: empty indexes, or an index past the messages declared there.
        """
        if not indexes:
            raise ProtobufSchemaError("empty message indexes", self.main)
        fd = self.pool.FindFileByName(self.main)
        level = list(fd.message_types_by_name.values())
        found: Descriptor | None = None
        for depth, index in enumerate(indexes):
            if not 0 <= index < len(level):
                raise ProtobufSchemaError(
                    f"message index {index} at depth {depth}: {len(level)} message(s) there",
                    found.full_name if found is not None else self.main,
                )
            found = level[index]
            level = list(found.nested_types)
        assert found is not None
        return found

    def decode_class(self, descriptor: Descriptor) -> type[Message]:
        """A message class (upb) that parses ``descriptor``'s wire format with every map field
        read as a repeated entry message: entries in wire order, duplicate keys kept, as
        protobuf-java's ``DynamicMessage`` hands them to spark-protobuf."""
        if self._decode_pool is None:
            pool = descriptor_pool.DescriptorPool()
            for f in self.files:
                copy = descriptor_pb2.FileDescriptorProto()
                copy.CopyFrom(f)
                _clear_map_entries(copy.message_type)
                pool.Add(copy)
            self._decode_pool = pool
        cls: type[Message] = message_factory.GetMessageClass(
            self._decode_pool.FindMessageTypeByName(descriptor.full_name)
        )
        return cls


def _clear_map_entries(messages: Sequence[descriptor_pb2.DescriptorProto]) -> None:
    for m in messages:
        if m.options.map_entry:
            m.options.ClearField("map_entry")
        _clear_map_entries(m.nested_type)


def _build(files: list[descriptor_pb2.FileDescriptorProto], main: str) -> ProtobufSchema:
    pool = descriptor_pool.DescriptorPool()
    for f in _ordered(files):
        try:
            pool.Add(f)
        except (TypeError, ValueError, KeyError) as e:
            raise ProtobufSchemaError(f"descriptor not accepted: {e}", f.name) from e
    try:
        pool.FindFileByName(main)
    except KeyError as e:
        raise ProtobufSchemaError("the main file is not in the descriptor set", main) from e
    return ProtobufSchema(_ordered(files), main, pool)


def _ordered(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> list[descriptor_pb2.FileDescriptorProto]:
    """Dependencies before dependents (a descriptor set need not be ordered)."""
    by_name = {f.name: f for f in files}
    out: list[descriptor_pb2.FileDescriptorProto] = []
    done: set[str] = set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in stack:
            raise ProtobufSchemaError("an import cycle: " + " -> ".join((*stack, name)), name)
        f = by_name.get(name)
        if f is None:
            raise ProtobufSchemaError("an imported file is missing from the descriptors", name)
        for dep in f.dependency:
            visit(dep, (*stack, name))
        done.add(name)
        out.append(f)

    for f in files:
        visit(f.name, ())
    return out


def parse_descriptor_set(
    data: bytes | bytearray | memoryview, main: str | None = None
) -> ProtobufSchema:
    """A schema from a serialized ``FileDescriptorSet`` (``protoc --descriptor_set_out
    --include_imports``; spark-protobuf's ``binaryDescriptorSet``).

    Args:
        data: the set's bytes (at most :data:`MAX_SCHEMA_BYTES`).
        main: the file whose first message is the default; default: the set's last file
            (protoc writes the requested file after its imports).

    Raises:
        ProtobufSchemaError: too large, not a ``FileDescriptorSet``, empty, a missing
            dependency, or a descriptor the pool refuses.
    """
    if len(data) > MAX_SCHEMA_BYTES:
        raise ProtobufSchemaError(f"descriptor set of {len(data)} bytes (max {MAX_SCHEMA_BYTES})")
    fds = descriptor_pb2.FileDescriptorSet()
    try:
        fds.ParseFromString(bytes(data))
    except DecodeError as e:
        raise ProtobufSchemaError(f"not a FileDescriptorSet: {e}") from e
    files = list(fds.file)
    if not files:
        raise ProtobufSchemaError("an empty FileDescriptorSet")
    return _build(files, main if main is not None else files[-1].name)


def load_descriptor_set(path: str | os.PathLike[str], main: str | None = None) -> ProtobufSchema:
    """A schema from a descriptor set file (spark-protobuf's ``descFilePath``).

    Raises:
        ProtobufSchemaError: the file cannot be read, or as :func:`parse_descriptor_set`.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_SCHEMA_BYTES:
            raise ProtobufSchemaError(f"descriptor set of {size} bytes", str(p))
        data = p.read_bytes()
    except OSError as e:
        raise ProtobufSchemaError(f"cannot read the descriptor set: {e}", str(p)) from e
    return parse_descriptor_set(data, main)


def compile_proto(
    text: str, imports: Mapping[str, str] | None = None, name: str = "schema.proto"
) -> bytes:
    """Compile ``.proto`` text into a serialized ``FileDescriptorSet`` with its imports.

    Args:
        text: the schema's ``.proto`` source.
        imports: more ``.proto`` sources by the name the schema imports them as
            (``"other/dep.proto"``), e.g. the registry's schema references; the well-known
            types need not be given.
        name: the file name the schema is compiled as.

    Returns:
        The ``FileDescriptorSet`` bytes, the schema's file last.

    Raises:
        ProtobufSchemaError: protoc refused the text (its diagnostics in the message), a name
            escapes the temporary directory, or protoc did not finish in
            :data:`PROTOC_TIMEOUT_S`.
    """
    sources = {name: text, **(imports or {})}
    total = sum(len(s) for s in sources.values())
    if total > MAX_SCHEMA_BYTES:
        raise ProtobufSchemaError(f".proto sources of {total} characters", name)
    spec = importlib.util.find_spec("grpc_tools")
    if spec is None or spec.origin is None:
        raise ProtobufSchemaError("grpcio-tools (protoc) is not installed", name)
    include = Path(spec.origin).parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="proto-") as tmp:
        root = Path(tmp) / "src"
        for file_name, source in sources.items():
            target = (root / file_name).resolve()
            if not target.is_relative_to(root.resolve()) or file_name.startswith("/"):
                raise ProtobufSchemaError("an import name outside the source tree", file_name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source, encoding="utf-8")
        out = Path(tmp) / "set.pb"
        cmd = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{root}",
            f"-I{include}",
            f"--descriptor_set_out={out}",
            "--include_imports",
            name,
        ]
        try:
            done = subprocess.run(
                cmd,
                cwd=root,
                capture_output=True,
                text=True,
                timeout=PROTOC_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            raise ProtobufSchemaError(f"protoc ran past {PROTOC_TIMEOUT_S} s", name) from e
        if done.returncode != 0:
            diag = (done.stderr or done.stdout).strip().replace(str(root) + "/", "")
            raise ProtobufSchemaError(f"protoc refused the schema: {diag[:2000]}", name)
        return out.read_bytes()


def parse_proto(
    text: str, imports: Mapping[str, str] | None = None, name: str = "schema.proto"
) -> ProtobufSchema:
    """A schema from ``.proto`` text (see :func:`compile_proto` for the arguments and errors)."""
    return parse_descriptor_set(compile_proto(text, imports, name), main=name)


def parse_base64_file_descriptor(
    encoded: str | bytes, imports: Mapping[str, str] | None = None
) -> ProtobufSchema:
    """A schema from a base64 ``FileDescriptorProto`` (as Apicurio serves what confluent-kafka's
    Python serializer registered).

    Args:
        encoded: the base64 text.
        imports: ``.proto`` sources of its non-well-known dependencies, by import name.

    Raises:
        ProtobufSchemaError: not base64, not a ``FileDescriptorProto``, a dependency neither
            well-known nor in ``imports``, or as :func:`parse_descriptor_set`.
    """
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ProtobufSchemaError(f"not base64: {e}") from e
    if len(raw) > MAX_SCHEMA_BYTES:
        raise ProtobufSchemaError(f"descriptor of {len(raw)} bytes (max {MAX_SCHEMA_BYTES})")
    main = descriptor_pb2.FileDescriptorProto()
    try:
        main.ParseFromString(raw)
    except DecodeError as e:
        raise ProtobufSchemaError(f"not a FileDescriptorProto: {e}") from e
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for name, source in (imports or {}).items():
        fds = descriptor_pb2.FileDescriptorSet()  # each import with its own imports
        fds.ParseFromString(compile_proto(source, imports, name))
        for f in fds.file:
            files.setdefault(f.name, f)
    pending = list(main.dependency)
    default_pool = descriptor_pool.Default()
    while pending:
        dep = pending.pop()
        if dep in files:
            continue
        if not dep.startswith(_WELL_KNOWN_PREFIX):
            raise ProtobufSchemaError("a dependency not given in imports", dep)
        try:
            _load_well_known(dep)
            fd = default_pool.FindFileByName(dep)
        except (KeyError, ImportError) as e:
            raise ProtobufSchemaError("an unknown well-known dependency", dep) from e
        proto = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(proto)
        files[dep] = proto
        pending.extend(proto.dependency)
    files[main.name] = main
    return _build(list(files.values()), main.name)


def _load_well_known(name: str) -> None:
    """Import the generated module of a well-known type so the default pool has it."""
    module = name.removesuffix(".proto").replace("/", ".") + "_pb2"
    importlib.import_module(module)
