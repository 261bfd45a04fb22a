"""JSON: JSON Schema -> Spark types (:mod:`.schema`) and documents -> Arrow with
``from_json``'s semantics (:mod:`.decode`)."""

from __future__ import annotations
