"""What the tests of the compiled Protobuf twins share (``test_accel.py``: the reader,
``test_encode_accel.py``: the writer).

- :func:`compiled_extension`: the extension under test, required under ``CI=true`` (which
  builds it), else the test module is skipped when it is not built;
- :func:`unless_pure`: the module's mark skipping it when ``SPARK_KAFKA_PY_PURE`` forces the
  pure path (nothing compiled to compare then);
- :func:`legacy_proto`, :func:`all_proto`: the proto2 ``p2.Legacy`` and proto3 ``All``
  schemas both generate from (every scalar kind, enums, nested and repeated messages, maps,
  oneofs, wrappers, Timestamp, Duration), each test adding the fields it needs.
"""

from __future__ import annotations

import importlib
import os
from string import Template
from types import ModuleType

import pytest


def compiled_extension(name: str, fallback: str) -> ModuleType:
    """The compiled module ``name`` (dotted). Under ``CI=true`` its ImportError is raised (the
    test module fails); elsewhere a missing build skips the calling test module, the reason
    naming what runs instead (``fallback``: "pure plan", "upb route")."""
    if os.environ.get("CI", "").lower() == "true":
        return importlib.import_module(name)
    return pytest.importorskip(
        name, reason=f"the Cython extension is not built (no compiler?): {fallback} only"
    )


def unless_pure(fallback: str) -> pytest.MarkDecorator:
    """A test module's ``pytestmark``: skipped when ``SPARK_KAFKA_PY_PURE`` (any value but
    empty or ``0``) forces ``fallback``."""
    return pytest.mark.skipif(
        os.environ.get("SPARK_KAFKA_PY_PURE", "") not in ("", "0"),
        reason=f"SPARK_KAFKA_PY_PURE forces the {fallback}",
    )


_LEGACY = Template("""
syntax = "proto2";
package p2;
message Legacy {
  enum Kind { A = 1; B = 2; C = 5; }
  message Sub { optional uint32 u = 1; optional sint64 z = 2; optional bytes b = 3; }
  optional Kind kind = 1;
  repeated Kind kinds = 2;
  repeated Kind pkinds = 3 [packed = true];
  optional int32 n = 4$n_option;
  optional string s = 5;
  repeated int32 pn = 6 [packed = true];
  optional Sub sub = 7;
  oneof pick { Kind okind = 8; string ostr = 9; Sub osub = 10; }
  repeated Sub subs = 11;
  optional fixed64 fx = 12;
$more}
""")

_ALL = Template("""
syntax = "proto3";
package $package;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "legacy.proto";
message Leaf { bytes b = 1; double d = 2; optional float f = 3; }
message Inner { string s = 1; int32 i = 2; repeated sint32 zs = 3; Leaf leaf = 4; }
message All {
  enum Color { RED = 0; GREEN = 1; BLUE = 2;$more_colors }
  int32 i32 = 1; int64 i64 = 2; uint32 u32 = 3; uint64 u64 = 4; sint32 s32 = 5;
  sint64 s64 = 6; fixed32 f32 = 7; fixed64 f64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10;
  float fl = 11; double db = 12; bool bo = 13; string st = 14; bytes by = 15;
  Color color = 16;
  optional int32 oi32 = 17; optional string ost = 18; optional Color ocolor = 19;
  Inner inner = 20;
  repeated Inner inners = 21;
  repeated int32 ri32 = 22; repeated uint64 ru64 = 23; repeated sint64 rs64 = 24;
  repeated fixed32 rf32 = 25; repeated double rdb = 26; repeated bool rbo = 27;
  repeated string rst = 28; repeated bytes rby = 29; repeated Color rcolor = 30;
  repeated float rfl = 31; repeated sfixed64 rsf64 = 32;
  map<string, Inner> m_si = 33; map<int64, string> m_ls = 34; map<bool, Color> m_bc = 35;
  map<uint32, google.protobuf.Timestamp> m_ut = 36; map<sint32, double> m_sd = 37;
  oneof choice {
    string o_text = 38; Inner o_inner = 39; int64 o_num = 40; google.protobuf.Timestamp o_ts = 41;
  }
  google.protobuf.Timestamp ts = 42; google.protobuf.Duration du = 43;
  repeated google.protobuf.Timestamp rts = 44;
  google.protobuf.Int32Value w_i32 = 45; google.protobuf.StringValue w_st = 46;
  google.protobuf.UInt64Value w_u64 = 47; google.protobuf.BoolValue w_bo = 48;
  google.protobuf.BytesValue w_by = 49; google.protobuf.DoubleValue w_db = 50;
  repeated google.protobuf.Int64Value rw_i64 = 51;
  p2.Legacy legacy = 52;
  map<string, google.protobuf.Duration> m_sdu = 53;
$more  int32 far = 100000;
}
""")


def legacy_proto(n_option: str = "", more: str = "") -> str:
    """``legacy.proto`` (proto2, ``p2.Legacy``: fields 1 to 12): ``n_option`` after field 4
    (``n``, e.g. ``" [default = 42]"``), ``more`` (whole lines) after field 12."""
    return _LEGACY.substitute(n_option=n_option, more=more)


def all_proto(package: str, more_colors: str = "", more: str = "") -> str:
    """The proto3 schema of ``{package}.All`` (fields 1 to 53 and 100000, importing
    ``legacy.proto``): ``more_colors`` (e.g. ``" NEG = -3;"``) after the enum ``Color``'s
    values, ``more`` (whole lines) after field 53."""
    return _ALL.substitute(package=package, more_colors=more_colors, more=more)
