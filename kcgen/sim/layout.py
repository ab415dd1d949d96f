"""The storage model every simulator of an ISA shares (C and Python alike).

All architectural storage lives in numpy arrays owned by Python: one array per register file,
per state item and per memory, plus pc and the counters. The C simulator receives pointers to
them, so memories are zero-copy numpy views and the reference interpreter can run on an
identical copy for differential tests. Elements are stored as their bit patterns in the
narrowest C integer type (signed ints sign-extended, unsigned zero-extended; floats as their
encoding, except f32/f64 which are native `float`/`double`); `numpy_view` gives the array in
the element's own dtype (ml_dtypes.bfloat16 for bf16, and so on).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import ml_dtypes
import numpy as np

from isadl import ir
from isadl.check import Spec
from isadl.types import BOOL, BoolT, FloatT, IntT, Type, VecT


@dataclass(frozen=True)
class FloatFormat:
    """A binary float format as the numeric runtime sees it (native/kc_numeric.h, kcgen.numeric)."""
    name: str
    exp: int
    man: int
    bias: int
    finite: bool = False
    unsigned: bool = False
    nonan: bool = False

    @property
    def width(self) -> int:
        return self.exp + self.man + (0 if self.unsigned else 1)

    @property
    def exact_products(self) -> bool:
        """A product of two values is exact in double (at most 26 significant bits, not f64): a
        fused multiply-add then rounds once through a sum rounded to odd in double (kc_fma_odd)."""
        return self.man < 26 and self.native != "double"

    @property
    def native(self) -> Optional[str]:
        """'float' or 'double' when C computes in the format itself."""
        if (self.exp, self.man, self.bias, self.finite, self.unsigned, self.nonan) == (8, 23, 127, False, False, False):
            return "float"
        if (self.exp, self.man, self.bias, self.finite, self.unsigned, self.nonan) == (11, 52, 1023, False, False, False):
            return "double"
        return None


_KNOWN_DTYPES = {  # (exp, man, finite, unsigned) -> numpy dtype with the same encoding and bias
    (8, 7, False, False): ml_dtypes.bfloat16,
    (5, 10, False, False): np.float16,
    (4, 3, True, False): ml_dtypes.float8_e4m3fn,
    (5, 2, False, False): ml_dtypes.float8_e5m2,
    (8, 0, True, True): ml_dtypes.float8_e8m0fnu,
    (8, 23, False, False): np.float32,
    (11, 52, False, False): np.float64,
}


def float_formats(spec: Spec) -> dict[str, FloatFormat]:
    out = {"f32": FloatFormat("f32", 8, 23, 127), "f64": FloatFormat("f64", 11, 52, 1023)}
    for f in spec.isa.floats:
        args = {a.key: a.value for a in f.args}
        exp, man = args["exp"], args["man"]
        out[f.name] = FloatFormat(f.name, exp, man, args.get("bias", (1 << (exp - 1)) - 1),
                                  "finite" in args, "unsigned" in args, "nonan" in args)
    return out


def mx_formats(spec: Spec) -> dict[str, tuple[str, str, int, str]]:
    """name -> (element format, scale format, block size, rule)."""
    out = {}
    for m in spec.isa.mxs:
        args = {a.key: a.value for a in m.args}
        out[m.name] = (args["elem"], args["scale"], args["block"], args.get("rule", "ocp"))
    return out


def int_ctype(width: int, signed: bool) -> str:
    for w in (8, 16, 32, 64):
        if width <= w:
            return f"{'int' if signed else 'uint'}{w}_t"
    raise ValueError(f"integers wider than 64 bits are not supported ({width})")


@dataclass(frozen=True)
class Scalar:
    """How one scalar element is stored."""
    type: Type
    ctype: str  # C storage type
    dtype: np.dtype  # numpy storage dtype (bit patterns for non-native floats)
    view: np.dtype  # the dtype users see (bfloat16, float8_e4m3fn, ...)
    fmt: Optional[FloatFormat] = None


def scalar_storage(t: Type, floats: dict[str, FloatFormat]) -> Scalar:
    if isinstance(t, BoolT):
        return Scalar(t, "uint8_t", np.dtype(np.uint8), np.dtype(np.bool_))
    if isinstance(t, IntT):
        ctype = int_ctype(t.width, t.signed)
        dt = np.dtype(ctype.replace("_t", ""))
        return Scalar(t, ctype, dt, dt)
    if isinstance(t, FloatT):
        fmt = floats[t.name]
        if fmt.native:
            dt = np.dtype(np.float32 if fmt.native == "float" else np.float64)
            return Scalar(t, fmt.native, dt, dt, fmt)
        ctype = int_ctype(fmt.width, False)
        bits = np.dtype(ctype.replace("_t", ""))
        known = _KNOWN_DTYPES.get((fmt.exp, fmt.man, fmt.finite, fmt.unsigned))
        default_bias = (1 << (fmt.exp - 1)) - 1
        view = np.dtype(known) if known is not None and fmt.bias == default_bias and not fmt.nonan else bits
        return Scalar(t, ctype, bits, view, fmt)
    raise ValueError(f"no scalar storage for {t}")


@dataclass(frozen=True)
class Store:
    """One array of architectural storage."""
    kind: str  # 'reg' | 'state' | 'mem'
    name: str
    shape: tuple[int, ...]  # leading dims: register count / state dims / memory size; then vector lanes
    elem: Scalar
    type: Type  # the element type as semantics see it (a VecT for vector registers)
    readonly: bool = False
    zero: frozenset = frozenset()  # hard-wired zero registers
    init: Optional[int | float] = None  # state's initial value
    base: int = 0  # memories: address of element 0
    placed: bool = False  # memories: declares `base`, so programs' sections may be loaded into it
    align: int = 1  # memories: the largest alignment load/store enforce

    @property
    def cname(self) -> str:
        return {"reg": "r_", "state": "s_", "mem": "m_"}[self.kind] + self.name

    @property
    def count(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def allocate(self) -> np.ndarray:
        a = np.zeros(self.shape, dtype=self.elem.dtype)
        if self.init:
            if self.elem.fmt is not None and not self.elem.fmt.native:
                from kcgen import numeric
                a[...] = numeric.encode(numeric_format(self.elem.fmt), float(self.init))
            else:
                a[...] = self.init
        return a

    def numpy_view(self, a: np.ndarray) -> np.ndarray:
        return a.view(self.elem.view) if self.elem.view != self.elem.dtype and self.elem.view != np.bool_ else a


@dataclass(frozen=True)
class Group:
    """A register file made of parts of other files (register n = parts concatenated, low first)."""
    name: str
    count: int
    type: Type
    parts: tuple[tuple[str, ir.Expr], ...]  # (file, index expression over n)


@dataclass
class Layout:
    spec: Spec
    floats: dict[str, FloatFormat]
    mxs: dict[str, tuple[str, str, int, str]]
    stores: dict[str, Store]  # by semantic name (register file, state or memory)
    groups: dict[str, Group]
    pc_type: IntT

    def allocate(self) -> dict[str, np.ndarray]:
        return {name: s.allocate() for name, s in self.stores.items()}


def layout(spec: Spec) -> Layout:
    floats = float_formats(spec)
    isa = spec.isa
    stores: dict[str, Store] = {}
    groups: dict[str, Group] = {}
    for rf in isa.regfiles:
        t = spec.types[rf.name]
        count = spec.params_eval(rf.count)
        if rf.group:
            groups[rf.name] = Group(rf.name, count, t, tuple((p.base.id, p.index) for p in rf.group))
            continue
        elem_t, lanes = (t.elem, (t.count,)) if isinstance(t, VecT) else (t, ())
        zero = frozenset(spec.regnames[z][1] for z in rf.zero)
        stores[rf.name] = Store("reg", rf.name, (count,) + lanes, scalar_storage(elem_t, floats), t,
                                rf.readonly, zero)
    for st in isa.states:
        if st.name == "pc":
            continue
        t = spec.types[st.name]
        dims = tuple(spec.params_eval(d) for d in st.dims)
        elem_t, lanes = (t.elem, (t.count,)) if isinstance(t, VecT) else (t, ())
        init = None
        if st.init is not None:
            init = float(st.init.text) if isinstance(st.init, ir.FloatLit) else spec.params_eval(st.init)
        stores[st.name] = Store("state", st.name, dims + lanes, scalar_storage(elem_t, floats), t,
                                st.readonly, init=init)
    for m in isa.memories:
        t = spec.types[m.name]
        size = spec.params_eval(m.size)
        base = spec.params_eval(m.base) if m.base is not None else 0
        align = spec.params_eval(m.align) if m.align is not None else 1
        stores[m.name] = Store("mem", m.name, (size,), scalar_storage(t, floats), t, m.readonly,
                               base=base, align=align, placed=m.base is not None)
    return Layout(spec, floats, mx_formats(spec), stores, groups, spec.context.pc_type)


def numeric_format(fmt: FloatFormat):
    """The kcgen.numeric twin of a format."""
    from kcgen import numeric
    return numeric.Format(exp=fmt.exp, man=fmt.man, bias=fmt.bias, finite=fmt.finite,
                          unsigned=fmt.unsigned, nonan=fmt.nonan)


__all__ = ["BOOL", "FloatFormat", "Group", "Layout", "Scalar", "Store", "layout", "numeric_format",
           "scalar_storage", "int_ctype"]
