"""Canonical JSON of a checked ISA (stable key order) and its content hash (the build-cache key)."""
from __future__ import annotations

import dataclasses
import hashlib
import json

from . import ir
from .check import Spec
from .printer import expr, type_ref

FORMAT_VERSION = "isadl-ir/1"


def _stmt(s: ir.Stmt) -> dict:
    if isinstance(s, ir.Let):
        return {"stmt": "var" if s.mutable else "let", "name": s.name,
                "type": type_ref(s.type) if s.type else None, "value": expr(s.value)}
    if isinstance(s, ir.Assign):
        return {"stmt": "assign", "target": expr(s.target), "value": expr(s.value)}
    if isinstance(s, ir.If):
        return {"stmt": "if", "cond": expr(s.cond), "then": [_stmt(x) for x in s.then],
                "else": [_stmt(x) for x in s.orelse]}
    if isinstance(s, ir.For):
        return {"stmt": "for", "var": s.var, "lo": expr(s.lo), "hi": expr(s.hi), "body": [_stmt(x) for x in s.body]}
    if isinstance(s, ir.Require):
        return {"stmt": "require", "cond": expr(s.cond), "message": s.message}
    if isinstance(s, ir.Trap):
        return {"stmt": "trap", "message": s.message}
    if isinstance(s, ir.Halt):
        return {"stmt": "halt"}
    return {"stmt": "call", "call": expr(s.call)}


def _plain(value):
    """IR → JSON-able data: expressions become canonical text, statements small dicts."""
    if isinstance(value, (ir.Num, ir.FloatLit, ir.Name, ir.Index, ir.Slice, ir.Call, ir.Reduce, ir.Unary,
                          ir.Binary, ir.Cond)):
        return expr(value)
    if isinstance(value, ir.TypeRef):
        return type_ref(value)
    if isinstance(value, (ir.Let, ir.Assign, ir.If, ir.For, ir.Require, ir.Trap, ir.Halt, ir.CallStmt)):
        return _stmt(value)
    if isinstance(value, ir.Loc):
        return None
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.compare and f.name != "loc"}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def to_json(spec: Spec) -> dict:
    """The canonical data: the resolved IR, evaluated parameters and the derived encoding tables."""
    return {
        "format": FORMAT_VERSION,
        "isa": _plain(spec.isa),
        "param_values": dict(sorted(spec.params.items())),
        "encodings": {
            name: {"format": s.format.name if s.format else None, "mask": f"{s.mask:#x}", "match": f"{s.match:#x}",
                   "mnemonic": s.template.mnemonic,
                   "operands": {o.name: {"kind": o.kind, "width": o.width, "signed": o.signed,
                                         "class": o.regfile or None, "offset": o.offset, "default": o.default}
                                for o in s.operands.values()},
                   "fields": s.fields}
            for name, s in spec.instructions.items()},
    }


def dumps(spec: Spec, indent: int | None = 2) -> str:
    return json.dumps(to_json(spec), indent=indent, sort_keys=True, separators=None if indent else (",", ":"))


def content_hash(spec: Spec) -> str:
    """sha256 of the compact canonical JSON: equal for equal meaning, whatever the formatting.
    Computed once per Spec (a Spec does not change) and kept with it, also in isadl's load cache."""
    h = spec.__dict__.get("_content_hash")
    if h is None:
        h = hashlib.sha256(dumps(spec, indent=None).encode()).hexdigest()
        spec.__dict__["_content_hash"] = h
    return h
