"""Declarative message schemas and the generic encoder/decoder that drives from them.

A message (or nested struct) is a frozen, slotted, keyword-only dataclass whose fields are
declared with :func:`kfield`, mirroring one entry of a Kafka message spec
(``clients/src/main/resources/common/message/*.json``): its type, ``versions``,
``nullableVersions``, ``tag``/``taggedVersions`` (KIP-482) and ``default``::

    @kafka_struct
    class LeaderIdAndEpoch:
        leader_id: int = kfield(INT32, "12+", default=-1)
        leader_epoch: int = kfield(INT32, "12+", default=-1)

Requests and responses subclass :class:`Request`/:class:`Response` and are decorated with
:func:`kafka_message`, which records the API key, the spec's valid and flexible versions and
the range we support. A request names its response class as the type argument
(``class MetadataRequest(Request["MetadataResponse"])``, for type checkers: sending it returns
a ``MetadataResponse``) and as ``response_type`` (for decoding). :func:`encode` and
:func:`decode` walk the field list for the chosen version; no per-version code is written by
hand.

Rules taken from Kafka's message generator:

* a field whose ``versions`` exclude the chosen version is not encoded, and decodes to its
  default; encoding a non-default value in such a version raises :class:`LocalProtocolError`
  unless the spec marks the field ``ignorable``;
* in flexible versions strings, bytes and arrays use compact encodings and every struct ends
  with a tagged fields section; tagged fields are written only when they differ from their
  default, in ascending tag order; unknown tags are skipped when decoding;
* ``records`` is nullable bytes, decoded as a zero-copy ``memoryview``.
"""

from __future__ import annotations

import dataclasses
import operator
import struct
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from spark_kafka_py.errors import LocalProtocolError
from spark_kafka_py.protocol.primitives import ZERO_UUID, Reader, Writer

__all__ = [
    "BOOL",
    "BYTES",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "RECORDS",
    "STRING",
    "UINT16",
    "UINT32",
    "UUID",
    "Array",
    "KafkaType",
    "Request",
    "Response",
    "Struct",
    "Versions",
    "decode",
    "encode",
    "kafka_message",
    "kafka_struct",
    "kfield",
]

T = TypeVar("T")
#: a request or response class (:func:`kafka_message`, :func:`encode`, :func:`decode`)
M = TypeVar("M", bound="_Message")
#: the response a request is answered with (``Request[R]``); covariant: every request is a
#: ``Request[Response]``
R_co = TypeVar("R_co", bound="Response", covariant=True)
_SPEC_KEY = "kafka_spec"

if TYPE_CHECKING:  # typing has it from 3.11; type checkers know typing_extensions' stubs
    from _typeshed import DataclassInstance
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_kwargs: Any) -> Callable[[T], T]:
        """At runtime only a marker for type checkers (PEP 681): returns the function."""
        return lambda f: f


class Versions:
    """A version range as written in Kafka's specs: ``"3+"``, ``"0-12"``, ``"5"``, ``"none"``."""

    __slots__ = ("high", "low", "text")

    def __init__(self, text: str):
        self.text = text
        if text == "none":
            self.low, self.high = 1, 0  # empty
        elif text.endswith("+"):
            self.low, self.high = int(text[:-1]), 0x7FFF
        elif "-" in text:
            lo, hi = text.split("-")
            self.low, self.high = int(lo), int(hi)
        else:
            self.low = self.high = int(text)

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high

    def __repr__(self) -> str:
        return f"Versions({self.text!r})"


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------


class KafkaType:
    """A wire type: knows how to read and write one value for a given version."""

    name: str = "?"
    #: smallest encoded size in bytes (bounds array counts before allocating)
    min_size: int = 1
    default: Any = None

    def read(self, r: Reader, version: int, flexible: bool, nullable: bool, field: str) -> Any:
        raise NotImplementedError

    def write(
        self, w: Writer, value: Any, version: int, flexible: bool, nullable: bool, field: str
    ) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class _Fixed(KafkaType):
    def __init__(self, name: str, size: int, default: Any, reader: str):
        self.name = name
        self.min_size = size
        self.default = default
        self._reader = reader

    def read(self, r: Reader, version: int, flexible: bool, nullable: bool, field: str) -> Any:
        return getattr(r, self._reader)(field)

    def write(
        self, w: Writer, value: Any, version: int, flexible: bool, nullable: bool, field: str
    ) -> None:
        getattr(w, self._reader)(value, field)


BOOL = _Fixed("bool", 1, False, "bool")
INT8 = _Fixed("int8", 1, 0, "int8")
INT16 = _Fixed("int16", 2, 0, "int16")
UINT16 = _Fixed("uint16", 2, 0, "uint16")
INT32 = _Fixed("int32", 4, 0, "int32")
UINT32 = _Fixed("uint32", 4, 0, "uint32")
INT64 = _Fixed("int64", 8, 0, "int64")
FLOAT64 = _Fixed("float64", 8, 0.0, "float64")
UUID = _Fixed("uuid", 16, ZERO_UUID, "uuid")


class _String(KafkaType):
    name = "string"
    min_size = 1
    default = ""

    def read(self, r: Reader, version: int, flexible: bool, nullable: bool, field: str) -> Any:
        if flexible:
            return r.compact_nullable_string(field) if nullable else r.compact_string(field)
        return r.nullable_string(field) if nullable else r.string(field)

    def write(
        self, w: Writer, value: Any, version: int, flexible: bool, nullable: bool, field: str
    ) -> None:
        if value is None and not nullable:
            raise LocalProtocolError(f"{field} is null but not nullable in version {version}")
        if flexible:
            w.compact_nullable_string(value, field)
        else:
            w.nullable_string(value, field)


class _Bytes(KafkaType):
    min_size = 1

    def __init__(self, name: str, default: Any):
        self.name = name
        self.default = default

    def read(self, r: Reader, version: int, flexible: bool, nullable: bool, field: str) -> Any:
        if flexible:
            return r.compact_nullable_bytes(field) if nullable else r.compact_bytes(field)
        return r.nullable_bytes(field) if nullable else r.bytes(field)

    def write(
        self, w: Writer, value: Any, version: int, flexible: bool, nullable: bool, field: str
    ) -> None:
        if value is None and not nullable:
            raise LocalProtocolError(f"{field} is null but not nullable in version {version}")
        if flexible:
            w.compact_nullable_bytes(value, field)
        else:
            w.nullable_bytes(value, field)


STRING = _String()
BYTES = _Bytes("bytes", b"")
#: Kafka's ``records`` type: nullable bytes holding record batches (left undecoded here).
RECORDS = _Bytes("records", None)


class Struct(KafkaType):
    """A nested struct (a :func:`kafka_struct` class) used as a single, non-array field.

    In its ``nullableVersions`` the struct is preceded by an ``int8``: -1 for null (nothing
    follows), 1 when present, as Kafka's message generator writes it (e.g.
    ``ConsumerGroupHeartbeatResponse.Assignment``); a negative byte reads as null."""

    def __init__(self, cls: type):
        self.cls = cls
        self.name = cls.__name__
        self.min_size = 0

    @property
    def default(self) -> Any:
        return self.cls()

    def read(self, r: Reader, version: int, flexible: bool, nullable: bool, field: str) -> Any:
        if nullable and r.int8(field) < 0:
            return None
        return _decode_struct(self.cls, r, version, flexible)

    def write(
        self, w: Writer, value: Any, version: int, flexible: bool, nullable: bool, field: str
    ) -> None:
        if nullable:
            if value is None:
                w.int8(-1, field)
                return
            w.int8(1, field)
        if not isinstance(value, self.cls):
            raise LocalProtocolError(f"{field} must be a {self.name}, got {type(value).__name__}")
        _encode_struct(value, w, version, flexible)


class Array(KafkaType):
    """``[]T``: an array of a primitive type or of a :func:`kafka_struct` class."""

    min_size = 1
    default = ()

    def __init__(self, item: KafkaType | type):
        self.item: KafkaType = item if isinstance(item, KafkaType) else Struct(item)
        self.name = f"[]{self.item.name}"

    def read(self, r: Reader, version: int, flexible: bool, nullable: bool, field: str) -> Any:
        item = self.item
        n = r.array_length(
            field, compact=flexible, nullable=nullable, min_item_size=max(1, item.min_size)
        )
        if n is None:
            return None
        if isinstance(item, Struct):
            cls = item.cls
            element = _plan(cls, version, flexible).element
            if element is not None and n:
                elements = _read_elements(r, element, n, flexible)
                if elements is not None:
                    return elements
            return tuple(_decode_struct(cls, r, version, flexible) for _ in range(n))
        name = f"{field}[]"
        return tuple(item.read(r, version, flexible, False, name) for _ in range(n))

    def write(
        self, w: Writer, value: Any, version: int, flexible: bool, nullable: bool, field: str
    ) -> None:
        if value is None:
            w.array_length(None, field, compact=flexible, nullable=nullable)
            return
        if isinstance(value, (str, bytes, bytearray, memoryview)) or not isinstance(
            value, Sequence
        ):
            raise LocalProtocolError(f"{field} must be a sequence, got {type(value).__name__}")
        w.array_length(len(value), field, compact=flexible, nullable=False)
        if (
            isinstance(self.item, Struct)
            and value
            and _write_elements(w, self.item.cls, value, version, flexible)
        ):
            return
        name = f"{field}[]"
        for element in value:
            self.item.write(w, element, version, flexible, False, name)


def _write_elements(
    w: Writer, cls: type, value: Sequence[Any], version: int, flexible: bool
) -> bool:
    """Write array elements of one fixed layout in one pass (see :attr:`_Plan.element`) and
    return True; False (nothing written) when that does not apply: another layout, fields
    this version lacks that must be checked, an element of another type or out of range."""
    plan = _plan(cls, version, flexible)
    if plan.element is None or plan.tagged_by_name or not all(i for _, _, i in plan.absent):
        return False
    fixed = plan.fixed  # never None when plan.element is not
    if fixed is None:
        return False
    st, names = fixed
    if len(names) < 2 or any(type(e) is not cls for e in value):
        return False
    values = operator.attrgetter(*names)
    pack = st.pack
    tail = b"\x00" if flexible else b""  # an empty tagged fields section
    try:
        data = tail.join([pack(*values(e)) for e in value]) + tail
    except struct.error:
        return False  # written field by field, which names the field out of range
    w.buffer.extend(data)
    return True


# --------------------------------------------------------------------------------------------
# Fields and structs
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a message spec (see module docstring)."""

    name: str
    type: KafkaType
    versions: Versions
    nullable_versions: Versions
    tag: int | None
    tagged_versions: Versions
    default: Any
    ignorable: bool


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    regular: tuple[tuple[str, KafkaType, bool, str], ...]
    tagged: dict[int, tuple[str, KafkaType, bool, str]]
    tagged_by_name: tuple[tuple[int, str, KafkaType, bool, str, Any], ...]
    absent: tuple[tuple[str, Any, bool], ...]
    #: When every regular field is fixed-width (int8..int64, bool, float64): one
    #: ``struct.Struct`` for all of them and their names, read and written in one call.
    fixed: tuple[struct.Struct, tuple[str, ...]] | None = None
    #: With ``fixed`` and no known tagged fields: the layout of one array element (``fixed``,
    #: then in flexible versions the one-byte count of an empty tagged section) and a
    #: constructor from its values that skips the generated ``__init__`` (arrays of such
    #: elements are read in one ``struct.iter_unpack``).
    element: tuple[struct.Struct, Callable[[tuple[Any, ...]], Any]] | None = None


#: ``struct`` codes of the fixed-width wire types (big-endian, as Kafka's).
_FIXED_CODES = {"bool": "?", "int8": "b", "int16": "h", "uint16": "H", "int32": "i"}
_FIXED_CODES.update({"uint32": "I", "int64": "q", "float64": "d"})


def _element_layout(
    cls: type, plan: _Plan, flexible: bool
) -> tuple[struct.Struct, Callable[[tuple[Any, ...]], Any]] | None:
    """:attr:`_Plan.element` of ``cls`` (``None`` where it does not apply)."""
    if plan.fixed is None or plan.tagged or hasattr(cls, "__post_init__"):
        return None
    st, names = plan.fixed
    fields = {f.name: f for f in dataclasses.fields(cls)}
    defaults = []
    for name, _, _ in plan.absent:
        default = fields[name].default
        if default is dataclasses.MISSING:  # a default_factory: leave it to __init__
            return None
        defaults.append((getattr(cls, name).__set__, default))
    setters = tuple(getattr(cls, name).__set__ for name in names)  # slot descriptors
    new = object.__new__

    def make(values: tuple[Any, ...]) -> Any:
        obj: Any = new(cls)
        # flexible: the tag count is left over
        for set_value, value in zip(setters, values, strict=False):
            set_value(obj, value)
        for set_value, value in defaults:
            set_value(obj, value)
        return obj

    layout = struct.Struct(st.format + ("B" if flexible else ""))
    return layout, make


def _read_elements(r: Reader, element: tuple[struct.Struct, Any], n: int, flexible: bool) -> Any:
    """``n`` array elements of one fixed layout, or ``None`` (nothing read) when the bytes
    left are too few or an element has tagged fields: the caller then reads them one by one."""
    layout, make = element
    rows = r.peek_structs(layout, n)
    if rows is None or (flexible and any(row[-1] for row in rows)):
        return None
    r.skip(layout.size * n)
    return tuple(map(make, rows))


def _fixed_layout(
    regular: tuple[tuple[str, KafkaType, bool, str], ...],
) -> tuple[struct.Struct, tuple[str, ...]] | None:
    """One ``struct.Struct`` for ``regular`` fields that are all fixed-width, else ``None``."""
    codes = []
    for _, ktype, _, _ in regular:
        code = _FIXED_CODES.get(ktype.name) if isinstance(ktype, _Fixed) else None
        if code is None:
            return None
        codes.append(code)
    if not codes:
        return None
    return struct.Struct(">" + "".join(codes)), tuple(name for name, _, _, _ in regular)


def kfield(
    wire_type: KafkaType | type,
    versions: str,
    /,
    *,
    default: Any = dataclasses.MISSING,
    nullable_versions: str = "none",
    tag: int | None = None,
    tagged_versions: str | None = None,
    ignorable: bool = False,
) -> Any:
    """Declare a message field (a dataclass field carrying its Kafka spec).

    Args:
        wire_type: a wire type (``INT32``, ``STRING``, ``Array(X)``...) or a struct class.
        versions: the spec's ``versions`` ("0+", "3-12", "none").
        default: Python default; when omitted, the type's default (0, "", False, (),
            ``ZERO_UUID``, ``None`` for records, a default struct).
        nullable_versions: the spec's ``nullableVersions``.
        tag, tagged_versions: KIP-482 tagged field number and versions.
        ignorable: the spec's ``ignorable`` (a non-default value may be dropped silently in
            versions that lack the field).
    """
    ktype = wire_type if isinstance(wire_type, KafkaType) else Struct(wire_type)
    if default is dataclasses.MISSING:
        default = ktype.default
    spec = {
        "type": ktype,
        "versions": Versions(versions),
        "nullable_versions": Versions(nullable_versions),
        "tag": tag,
        "tagged_versions": Versions(tagged_versions or ("none" if tag is None else versions)),
        "default": default,
        "ignorable": ignorable,
    }
    if isinstance(ktype, Struct) and default is not None:
        return dataclasses.field(default_factory=ktype.cls, metadata={_SPEC_KEY: spec})
    return dataclasses.field(default=default, metadata={_SPEC_KEY: spec})


# kfield() is not declared a field specifier: each of its fields has a default (the wire type's
# when none is given), which a plain assignment tells the type checker.
@dataclass_transform(kw_only_default=True, frozen_default=True)
def kafka_struct(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen, slotted, keyword-only dataclass and compile its field specs."""
    new_cls = dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(cls)
    specs = []
    for f in dataclasses.fields(cast("type[DataclassInstance]", new_cls)):
        meta = f.metadata.get(_SPEC_KEY)
        if meta is None:
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with kfield()")
        specs.append(FieldSpec(name=f.name, **meta))
    # struct classes share no base class that could declare these two attributes
    new_cls._kafka_fields = tuple(specs)  # type: ignore[attr-defined]
    new_cls._kafka_plans = {}  # type: ignore[attr-defined]
    return new_cls


def _plan(cls: type, version: int, flexible: bool) -> _Plan:
    # set by kafka_struct on classes that share no base class declaring them
    plans: dict[tuple[int, bool], _Plan] = cls._kafka_plans  # type: ignore[attr-defined]
    key = (version, flexible)
    plan = plans.get(key)
    if plan is not None:
        return plan
    regular = []
    tagged: dict[int, tuple[str, KafkaType, bool, str]] = {}
    tagged_by_name = []
    absent = []
    specs: tuple[FieldSpec, ...] = cls._kafka_fields  # type: ignore[attr-defined]  # as above
    for spec in specs:
        label = f"{cls.__name__}.{spec.name}"
        nullable = version in spec.nullable_versions
        if version not in spec.versions:
            absent.append((spec.name, spec.default, spec.ignorable))
        elif spec.tag is not None and version in spec.tagged_versions:
            if not flexible:
                raise TypeError(f"{label} is tagged in non-flexible version {version}")
            tagged[spec.tag] = (spec.name, spec.type, nullable, label)
            tagged_by_name.append((spec.tag, spec.name, spec.type, nullable, label, spec.default))
        else:
            regular.append((spec.name, spec.type, nullable, label))
    plan = _Plan(
        tuple(regular),
        tagged,
        tuple(sorted(tagged_by_name)),
        tuple(absent),
        _fixed_layout(tuple(regular)),
    )
    plan = dataclasses.replace(plan, element=_element_layout(cls, plan, flexible))
    plans[key] = plan
    return plan


def _decode_struct(cls: type[T], r: Reader, version: int, flexible: bool) -> T:
    plan = _plan(cls, version, flexible)
    fixed = plan.fixed
    if fixed is not None and r.remaining >= fixed[0].size:  # else: the field-by-field error
        kw = dict(zip(fixed[1], r.unpack(fixed[0], cls.__name__), strict=True))
        if not flexible:
            return cls(**kw)
        if not plan.tagged and r.empty_tagged_fields():
            return cls(**kw)
    else:
        kw = {}
        for name, ktype, nullable, label in plan.regular:
            kw[name] = ktype.read(r, version, flexible, nullable, label)
    if flexible:
        known = plan.tagged
        for tag, sub in r.tagged_fields(f"{cls.__name__} tagged fields"):
            entry = known.get(tag)
            if entry is not None:
                name, ktype, nullable, label = entry
                kw[name] = ktype.read(sub, version, True, nullable, label)
    return cls(**kw)


def _is_default(value: Any, default: Any) -> bool:
    if value == default:
        return True
    # a list/tuple given where the default is the empty tuple
    return default == () and isinstance(value, Sequence) and len(value) == 0


def _encode_struct(obj: Any, w: Writer, version: int, flexible: bool) -> None:
    cls = type(obj)
    plan = _plan(cls, version, flexible)
    for name, default, ignorable in plan.absent:
        if not ignorable:
            value = getattr(obj, name)
            if not _is_default(value, default):
                raise LocalProtocolError(
                    f"{cls.__name__}.{name}={value!r} cannot be sent in version {version}"
                )
    fixed = plan.fixed
    written = False
    if fixed is not None:
        try:
            w.buffer.extend(fixed[0].pack(*[getattr(obj, name) for name in fixed[1]]))
            written = True
        except struct.error:
            pass  # out of range: written field by field below, which names the field
    if not written:
        for name, ktype, nullable, label in plan.regular:
            ktype.write(w, getattr(obj, name), version, flexible, nullable, label)
    if flexible:
        fields: list[tuple[int, bytes]] = []
        for tag, name, ktype, nullable, label, default in plan.tagged_by_name:
            value = getattr(obj, name)
            if _is_default(value, default):  # a struct's default: its empty instance or None
                continue
            sub = Writer()
            ktype.write(sub, value, version, True, nullable, label)
            fields.append((tag, sub.getvalue()))
        w.tagged_fields(fields)


# --------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------


class _Message:
    __slots__ = ()

    #: Kafka API key (``apiKey`` in the spec).
    API_KEY: ClassVar[int]
    #: versions Kafka defines for this message (``validVersions``).
    VALID_VERSIONS: ClassVar[Versions]
    #: versions using compact encodings and tagged fields (``flexibleVersions``, KIP-482).
    FLEXIBLE_VERSIONS: ClassVar[Versions]
    #: the version range this library supports.
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        """True when ``version`` uses KIP-482 flexible encodings."""
        return version in cls.FLEXIBLE_VERSIONS

    def encode(self, version: int) -> bytes:
        """Encode this message body (no header) at ``version``; see :func:`encode`."""
        return encode(self, version)

    @classmethod
    def decode(cls: type[M], data: bytes | bytearray | memoryview | Reader, version: int) -> M:
        """Decode a body (no header) at ``version``; see :func:`decode`."""
        return decode(cls, data, version)


class Request(_Message, Generic[R_co]):
    """Base of request messages, generic in the response class that answers them.

    A request declares its response twice: as the type argument, for type checkers
    (``class MetadataRequest(Request["MetadataResponse"])``, so that
    :meth:`~spark_kafka_py.client.connection.BrokerConnection.send` returns a
    ``MetadataResponse``), and as ``response_type``, the class the response frame is decoded
    with (tests/protocol check that the two agree for every request). ``Request[Response]`` is
    any request.
    """

    __slots__ = ()
    #: the response class (a type variable cannot type a ClassVar; see :meth:`response_of`)
    response_type: ClassVar[type[Response]]

    def response_of(self, response: Response) -> R_co:
        """``response``, decoded for this request (an instance of ``response_type``), typed
        as this request's response. No check at run time: the pairing is the one
        ``response_type`` declares."""
        return cast("R_co", response)


class Response(_Message):
    """Base of response messages."""

    __slots__ = ()


@dataclass_transform(kw_only_default=True, frozen_default=True)
def kafka_message(
    *,
    api_key: int,
    valid: str,
    flexible: str,
    supported: tuple[int, int],
) -> Callable[[type[M]], type[M]]:
    """Class decorator for a request/response: :func:`kafka_struct` plus API metadata.

    Args:
        api_key: the spec's ``apiKey``.
        valid: the spec's ``validVersions`` (what Kafka defines).
        flexible: the spec's ``flexibleVersions``.
        supported: ``(MIN_VERSION, MAX_VERSION)`` we encode/decode and negotiate.
    """

    def wrap(cls: type[M]) -> type[M]:
        new_cls = kafka_struct(cls)
        new_cls.API_KEY = api_key
        new_cls.VALID_VERSIONS = Versions(valid)
        new_cls.FLEXIBLE_VERSIONS = Versions(flexible)
        new_cls.MIN_VERSION, new_cls.MAX_VERSION = supported
        return new_cls

    return wrap


def _check_version(cls: type[_Message], version: int) -> None:
    if not cls.MIN_VERSION <= version <= cls.MAX_VERSION:
        raise LocalProtocolError(
            f"{cls.__name__} version {version} is not supported "
            f"(supported {cls.MIN_VERSION}-{cls.MAX_VERSION})"
        )


def encode(message: _Message, version: int) -> bytes:
    """Encode a message body (without the request/response header) at ``version``.

    Raises:
        LocalProtocolError: unsupported version, a value out of its wire type's range, a null
            in a non-nullable field, or a non-default value of a non-ignorable field the
            version lacks.
    """
    cls = type(message)
    _check_version(cls, version)
    w = Writer()
    _encode_struct(message, w, version, cls.is_flexible(version))
    return w.getvalue()


def decode(cls: type[M], data: bytes | bytearray | memoryview | Reader, version: int) -> M:
    """Decode a message body of type ``cls`` at ``version``; all bytes must be consumed.

    Byte and records fields are zero-copy ``memoryview`` slices of ``data``.

    Raises:
        KafkaProtocolError: truncated or malformed bytes, or trailing bytes.
        LocalProtocolError: ``version`` is outside the supported range.
    """
    _check_version(cls, version)
    r = data if isinstance(data, Reader) else Reader(data)
    msg = _decode_struct(cls, r, version, cls.is_flexible(version))
    r.expect_end(f"{cls.__name__} v{version}")
    return msg


def struct_fields(cls: type) -> tuple[FieldSpec, ...]:
    """The compiled field specs of a struct or message class (introspection for tests)."""
    # set by kafka_struct on classes that share no base class declaring it
    fields: tuple[FieldSpec, ...] = cls._kafka_fields  # type: ignore[attr-defined]
    return fields


def uuid_or_none(value: uuid.UUID) -> uuid.UUID | None:
    """``None`` for Kafka's zero UUID (unset), else the UUID."""
    return None if value == ZERO_UUID else value
