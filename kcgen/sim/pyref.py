"""The Python reference interpreter: slow, obviously correct, generated from the same semantics.

It exists to test the generated C simulator (kcgen.sim.cgen): both follow the execution model
of docs/simulator.md, and a differential test runs them side by side. Every instruction's typed
semantics (kcgen.sim.typed) become one small Python function, compiled once per Spec, so a
traceback or `RefMachine.source(name)` shows readable code:

    def I_BNE(m, A, o):                                      # rv32i_mini
        o_rs1 = o['rs1']
        o_rs2 = o['rs2']
        o_target = o['target']
        if (S_x.get(A, (o_rs1,)) != S_x.get(A, (o_rs2,))):
            m.next_pc = o_target
            m.jumped = True

`m` is the machine (`cur_pc`: the address of the instruction or bundle, which is what reading
`pc` gives; `next_pc`; `halted`), `A` its arrays (kcgen.sim.layout: one numpy array per register
file, state item and memory; `S_x` reads and writes one of them with bounds checks), `o` the
decoded operands. Values are Python ints (held in their type's range), bools, floats (doubles
holding a value of their format) and lists (vectors). A bad program never raises out of
`run()`: every fault becomes a trap with the contract's message.

Where docs/simulator.md leaves a detail open (message texts, the order of checks, what a step
is), this follows the C simulator, so that the two can be compared field by field.
"""
from __future__ import annotations

import linecache
import math
import re
import struct
import sys
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional

import numpy as np

from isadl import ir
from isadl.check import Spec
from isadl.params import evaluate
from isadl.printer import expr as show
from isadl.semantics import MATH_UNARY, _as_typeref
from isadl.types import (BOOL, BoolT, FloatLitT, FloatT, IntLitT, IntT, Type, VecT, is_float,
                         is_int)
from kcgen.asm.disassembler import Disassembler

from . import ieee as _ieee
from .layout import FloatFormat, Layout, Store, layout as make_layout, numeric_format
from .typed import TypedBody, local_type, type_example, type_function, type_instruction

__all__ = ["RefMachine", "RunResult", "Trap", "SimTrap", "LoadError", "ExampleCode", "example_code",
           "compiled"]

I64 = IntT(True, 64)
F32 = FloatT("f32", 32)
_INF = math.inf
_NAN = math.nan
_NAN_CANON = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000))[0]  # positive, no payload
_LITTLE = sys.byteorder == "little"


# ---- traps -----------------------------------------------------------------------------------

class SimTrap(Exception):
    """Raised inside generated code; run() turns it into a Trap. kind (as the C simulator's):
    require, user, memory (out of bounds), misaligned, arith (division by zero), illegal
    (undecodable word), pc (pc outside the program or inside an instruction); internal would be a
    bug of this interpreter."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.message = message
        self.kind = kind


class LoadError(ValueError):
    """A program that cannot be loaded (a data section outside every byte memory)."""


@dataclass(frozen=True)
class Trap:
    pc: int
    line: Optional[int]  # source line of the instruction, when known
    message: str
    kind: str

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"trap at pc {self.pc:#x}{where}: {self.message}"


@dataclass
class RunResult:
    status: str  # 'halted' | 'trap' | 'budget'
    steps: int  # instructions (VLIW: bundles) retired since load()
    trap: Optional[Trap] = None
    counts: dict[str, int] = field(default_factory=dict)  # operations run by this run() call, per
    # instruction name (every slot of a bundle, filler nops included; not the one that trapped)

    @property
    def instret(self) -> int:
        """The C simulator's name for `steps`."""
        return self.steps


def _fail(message: str, kind: str):
    raise SimTrap(message, kind)


# ---- integer helpers -----------------------------------------------------------------------------

def _wrap_fn(t: Type) -> Callable[[int], int]:
    t = I64 if isinstance(t, IntLitT) else t
    mask = (1 << t.width) - 1
    if not t.signed:
        return lambda v: v & mask
    half = 1 << (t.width - 1)
    return lambda v: ((v + half) & mask) - half


def _div(a: int, b: int) -> int:
    if b == 0:
        raise SimTrap("division by zero", "arith")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _mod(a: int, b: int) -> int:
    return a - b * _div(a, b)


def _shl(a: int, n: int, width: int) -> int:
    return a << n if n < width else 0


def _shr(a: int, n: int, width: int) -> int:
    if n < width:
        return a >> n
    return -1 if a < 0 else 0


def _pow(a: int, b: int) -> int:
    if b < 0:
        if a == 1:
            return 1
        if a == -1:
            return -1 if b & 1 else 1
        if a == 0:
            raise SimTrap("division by zero", "arith")
        return 0
    return pow(a, b, 1 << 64)


def _slice(v: int, hi: int, lo: int, width: int) -> int:
    """v[hi:lo] with bounds known only at run time: bits of v's width-bit pattern, 0 above it;
    an empty or negative range is 0 (as in the C simulator)."""
    if lo < 0 or hi < lo:
        return 0
    return ((v & ((1 << width) - 1)) >> lo) & ((1 << (hi - lo + 1)) - 1)


def _bit(v: int, i: int, width: int) -> bool:
    """Bit i of v's width-bit pattern; 0 from bit `width` up."""
    return bool(((v & ((1 << width) - 1)) >> i) & 1) if 0 <= i < width else False


def _clz(v: int, width: int) -> int:
    return width - (v & ((1 << width) - 1)).bit_length()


def _ctz(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return (v & -v).bit_length() - 1 if v else width


def _popcount(v: int, width: int) -> int:
    return bin(v & ((1 << width) - 1)).count("1")


def _clamp(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


def _sext(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


# ---- float helpers ---------------------------------------------------------------------------------

class _Numeric:
    """kcgen.numeric, imported on first use (ISAs without declared float formats never need it)."""

    def __getattr__(self, name):
        from kcgen import numeric
        value = getattr(numeric, name)
        setattr(self, name, value)  # found directly from now on
        return value


_num = _Numeric()
_F32S = struct.Struct("<f")
_U32S = struct.Struct("<I")
_F64S = struct.Struct("<d")
_U64S = struct.Struct("<Q")


def _r32(x: float) -> float:
    """Round a double to the nearest f32 (ties to even); overflow gives infinity."""
    try:
        return _F32S.unpack(_F32S.pack(x))[0]
    except OverflowError:
        return math.copysign(_INF, x)


# The platform's default NaN (what the hardware produces for 0/0 or inf - inf; negative on x86).
_DNAN = _INF - _INF


def _libm():
    """The C library's math functions (docs/simulator.md: exp, log, tanh, erf and fmin/fmax are the
    C library's), or None where ctypes cannot find it."""
    try:
        import ctypes
        import ctypes.util
        name = ctypes.util.find_library("m")
        lib = ctypes.CDLL(name) if name else ctypes.CDLL(None)
        fns = {}
        for f in ("exp", "log", "sqrt", "tanh", "erf"):
            fn = getattr(lib, f)
            fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
            fns[f] = fn
        for f in ("fmin", "fmax"):
            fn = getattr(lib, f)
            fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
            fns[f] = fn
        fn = lib.fma
        fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double] * 3
        fns["fma"] = fn
        if fns["exp"](1.0) != math.exp(1.0) or fns["fmin"](1.0, 2.0) != 1.0:
            return None
        return fns
    except (OSError, AttributeError):
        return None


_LIBM = _libm()


def _fdiv(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a:
            return a
        if a == 0.0:
            return _DNAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def _exp(x: float) -> float:
    if _LIBM:
        return _LIBM["exp"](x)
    try:
        return math.exp(x)
    except OverflowError:
        return _INF


def _log(x: float) -> float:
    if _LIBM:
        return _LIBM["log"](x)
    if x != x or x == _INF:
        return x
    if x == 0.0:
        return -_INF
    if x < 0.0:
        return _DNAN
    return math.log(x)


def _sqrt(x: float) -> float:
    if _LIBM:
        return _LIBM["sqrt"](x)
    if x != x:
        return x
    if x < 0.0:
        return _DNAN
    return math.sqrt(x)


def _tanh(x: float) -> float:
    return _LIBM["tanh"](x) if _LIBM else math.tanh(x)


def _erf(x: float) -> float:
    return _LIBM["erf"](x) if _LIBM else math.erf(x)


def _fmin(a: float, b: float) -> float:
    """C fmin: a NaN operand is ignored (the C library decides which zero min(-0, +0) is)."""
    if _LIBM:
        return _LIBM["fmin"](a, b)
    if a != a:
        return b
    if b != b:
        return a
    return a if a < b else b


def _fmax(a: float, b: float) -> float:
    if _LIBM:
        return _LIBM["fmax"](a, b)
    if a != a:
        return b
    if b != b:
        return a
    return a if a > b else b


def _recip(x: float) -> float:
    return _fdiv(1.0, x)


def _fma(a: float, b: float, c: float) -> float:
    """a * b + c with one rounding to double, computed exactly with fractions (math.fma is Python
    3.13+). Infinities and NaNs go to the C library's fma, so that NaN payloads match C."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return _LIBM["fma"](a, b, c) if _LIBM else a * b + c
    if a == 0.0 or b == 0.0:
        return a * b + c  # the product is an exact (signed) zero
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return 0.0
    try:
        return float(exact)
    except OverflowError:
        return _INF if exact > 0 else -_INF


def _fma_odd(a: float, b: float, c: float) -> float:
    """a * b + c rounded to odd in double (the C simulator's kc_fma_odd): rounded to a format of
    at most 51 bits, it gives the correctly rounded fma (what C's fmaf gives for f32), without
    rounding twice."""
    r = _fma(a, b, c)
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c) and math.isfinite(r)) or a == 0.0 or b == 0.0:
        return r
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if Fraction(r) != exact and not struct.unpack("<Q", struct.pack("<d", r))[0] & 1:
        r = math.nextafter(r, math.inf if exact > Fraction(r) else -math.inf)
    return r


def _ldexp(x: float, k: int) -> float:
    k = _clamp(k, -100000, 100000)
    try:
        return math.ldexp(x, k)
    except OverflowError:
        return math.copysign(_INF, x)


def _isnan(x: float) -> bool:
    return x != x


def _isinf(x: float) -> bool:
    return x == _INF or x == -_INF


def _flit(v: float) -> str:
    """Python source for a float constant."""
    if v != v:
        return "_NAN"
    if v in (_INF, -_INF):
        return "_INF" if v > 0 else "(-_INF)"
    return repr(v)


# ---- bit patterns ----------------------------------------------------------------------------------

class _Types:
    """Per-Spec conversions between values and bit patterns, and rounding to float formats."""

    def __init__(self, floats: dict[str, FloatFormat]):
        self.floats = floats
        self._round: dict[str, Callable] = {}
        self._sat: dict[str, Callable] = {}
        self._i2f: dict[str, Callable] = {}
        self._to: dict[Type, Callable] = {}
        self._from: dict[Type, Callable] = {}
        self._widens: dict[tuple, bool] = {}
        self._bitcast: dict[tuple, Callable] = {}

    def rounder(self, t: FloatT) -> Callable[[float], float]:
        """Double -> the nearest value of t (ties to even, no saturation)."""
        if t.name not in self._round:
            native = self.floats[t.name].native
            if native == "double":
                fn = float
            elif native == "float":
                fn = _r32
            else:
                nf = numeric_format(self.floats[t.name])
                fn = lambda x: _num.decode(nf, _num.encode(nf, x))  # noqa: E731
            self._round[t.name] = fn
        return self._round[t.name]

    def saturator(self, t: FloatT) -> Callable[[float], float]:
        """Double -> t, saturating at the largest finite value (sat(x, T) to a float format)."""
        if t.name not in self._sat:
            nf = numeric_format(self.floats[t.name])
            self._sat[t.name] = lambda x: _num.decode(nf, _num.encode(nf, float(x), saturate=True))
        return self._sat[t.name]

    def int_to_float(self, t: FloatT, saturate: bool = False) -> Callable[[int], float]:
        """An integer -> t: converted to double, then rounded to t (docs/simulator.md: every
        conversion is computed in double precision, then rounded)."""
        key = t.name + ("/sat" if saturate else "")
        if key not in self._i2f:
            inner = self.saturator(t) if saturate else self.rounder(t)
            self._i2f[key] = lambda v: inner(float(v))
        return self._i2f[key]

    def to_bits(self, t: Type) -> Callable:
        """value -> its bit pattern as an unsigned int of t.bits bits (vector lane 0 lowest)."""
        if t in self._to:
            return self._to[t]
        if isinstance(t, (IntT, IntLitT)):
            mask = (1 << t.bits) - 1
            fn = lambda v: v & mask  # noqa: E731
        elif isinstance(t, BoolT):
            fn = lambda v: 1 if v else 0  # noqa: E731
        elif isinstance(t, FloatT):
            native = self.floats[t.name].native
            # a NaN's bits are the canonical quiet NaN (docs/simulator.md)
            if native == "float":
                fn = lambda v: 0x7FC00000 if v != v else _U32S.unpack(_F32S.pack(v))[0]  # noqa: E731
            elif native == "double":
                fn = lambda v: 0x7FF8000000000000 if v != v else _U64S.unpack(_F64S.pack(v))[0]  # noqa: E731
            else:
                nf = numeric_format(self.floats[t.name])
                fn = lambda v: _num.encode(nf, float(v))  # noqa: E731
        elif isinstance(t, FloatLitT):
            fn = lambda v: _U64S.unpack(_F64S.pack(v))[0]  # noqa: E731
        elif isinstance(t, VecT):
            elem = self.to_bits(t.elem)
            eb = t.elem.bits

            def fn(v):
                out = 0
                for i, x in enumerate(v):
                    out |= elem(x) << (i * eb)
                return out
        else:
            raise TypeError(f"no bit pattern for {t}")
        self._to[t] = fn
        return fn

    def from_bits(self, t: Type) -> Callable:
        """unsigned bit pattern -> value of t."""
        if t in self._from:
            return self._from[t]
        if isinstance(t, (IntT, IntLitT)):
            w = t.bits
            mask = (1 << w) - 1
            if isinstance(t, IntLitT) or t.signed:
                half = 1 << (w - 1)
                fn = lambda b: ((b & mask) ^ half) - half  # noqa: E731
            else:
                fn = lambda b: b & mask  # noqa: E731
        elif isinstance(t, BoolT):
            fn = lambda b: bool(b & 1)  # noqa: E731
        elif isinstance(t, FloatT):
            native = self.floats[t.name].native
            if native == "float":
                fn = lambda b: _F32S.unpack(_U32S.pack(b & 0xFFFFFFFF))[0]  # noqa: E731
            elif native == "double":
                fn = lambda b: _F64S.unpack(_U64S.pack(b & 0xFFFFFFFFFFFFFFFF))[0]  # noqa: E731
            else:
                nf = numeric_format(self.floats[t.name])
                fn = lambda b: _num.decode(nf, b)  # noqa: E731
        elif isinstance(t, VecT):
            elem = self.from_bits(t.elem)
            eb = t.elem.bits
            emask = (1 << eb) - 1
            n = t.count
            fn = lambda b: [elem((b >> (i * eb)) & emask) for i in range(n)]  # noqa: E731
        else:
            raise TypeError(f"no bit pattern for {t}")
        self._from[t] = fn
        return fn

    def widens(self, a: FloatT, b: FloatT) -> bool:
        """Whether every value of format a is a value of format b (the conversion is exact)."""
        fa, fb = self.floats[a.name], self.floats[b.name]
        if fb.native == "double":
            return True
        key = (a.name, b.name)
        if key not in self._widens:
            na, nb = numeric_format(fa), numeric_format(fb)
            quantum = lambda f: (1 - f.bias - f.man) if f.man > 0 else -f.bias  # noqa: E731
            self._widens[key] = ((na.unsigned or not nb.unsigned) and nb.man >= na.man
                                 and na.max_value <= nb.max_value and quantum(nb) <= quantum(na)
                                 and (not na.has_inf or nb.has_inf) and (not na.has_nan or nb.has_nan))
        return self._widens[key]

    def bitcaster(self, src: Type, dst: Type) -> Callable:
        key = (src, dst)
        if key not in self._bitcast:
            to, frm = self.to_bits(src), self.from_bits(dst)
            self._bitcast[key] = lambda v: frm(to(v))
        return self._bitcast[key]

    def zero(self, t: Type):
        return self.from_bits(t)(0)


# ---- storage ---------------------------------------------------------------------------------------

class _Access:
    """Reads and writes one register file, state item or memory in a machine's arrays."""

    def __init__(self, tp: _Types, store: Store):
        self.name = store.name
        self.store = store
        self.type = store.type
        vec = isinstance(store.type, VecT)
        self.lanes = store.type.count if vec else 0
        self.dims = store.shape[:len(store.shape) - (1 if vec else 0)]
        self.zero = store.zero
        self.zero_value = tp.zero(store.type)
        elem = store.elem
        self.elem_t = elem.type
        if isinstance(elem.type, BoolT):
            self.rd1, self.wr1 = bool, (lambda v: 1 if v else 0)
            self.rdv = lambda xs: [bool(x) for x in xs]
        elif isinstance(elem.type, IntT):
            self.rd1, self.wr1, self.rdv = int, None, None
        elif elem.fmt is not None and elem.fmt.native:
            self.rd1, self.rdv = float, None
            self.wr1 = lambda v: _NAN_CANON if v != v else v  # a stored NaN is the canonical quiet NaN
        else:
            dec, enc = tp.from_bits(elem.type), tp.to_bits(elem.type)
            self.rd1 = lambda x: dec(int(x))
            self.wr1 = enc
            self.rdv = lambda xs: [dec(x) for x in xs]
        self.tp = tp

    # -- bounds
    def check(self, idx: tuple) -> None:
        for i, d in zip(idx, self.dims):
            if not 0 <= i < d:
                raise SimTrap(f"out of bounds: {self.name}[{_ll(i)}] (size {d})", "memory")

    def check_lane(self, idx: tuple, j: int) -> None:
        if not 0 <= j < self.lanes:
            raise SimTrap(f"out of bounds: {self.name} lane[{_ll(j)}] (size {self.lanes})", "memory")

    # -- whole elements (a vector register reads as a list)
    def get(self, A, idx: tuple):
        self.check(idx)
        if self.zero and idx[0] in self.zero:
            return list(self.zero_value) if self.lanes else self.zero_value
        x = A[self.name][idx]
        if self.lanes:
            xs = x.tolist()
            return self.rdv(xs) if self.rdv else xs
        return self.rd1(x)

    def put(self, A, idx: tuple, v) -> None:
        self.check(idx)
        if self.zero and idx[0] in self.zero:
            return
        if self.lanes:
            if len(v) != self.lanes:
                raise SimTrap(f"{self.name}: a vector of {len(v)} lanes written to {self.type}", "internal")
            A[self.name][idx] = [self.wr1(x) for x in v] if self.wr1 else v
        else:
            A[self.name][idx] = self.wr1(v) if self.wr1 else v

    def get_lane(self, A, idx: tuple, j: int):
        self.check(idx)
        self.check_lane(idx, j)
        if self.zero and idx[0] in self.zero:
            return self.zero_value[j]
        return self.rd1(A[self.name][idx + (j,)])

    def put_lane(self, A, idx: tuple, j: int, v) -> None:
        self.check(idx)
        self.check_lane(idx, j)
        if self.zero and idx[0] in self.zero:
            return
        A[self.name][idx + (j,)] = self.wr1(v) if self.wr1 else v

    # -- multi-element memory access (load/store)
    def _span(self, what: str, tname: str, a: int, k: int) -> None:
        if a < 0 or a + k > self.dims[0]:
            raise SimTrap(f"out of bounds: {self.name}[{_ll(a)}..{_ll(a + k - 1)}] (size {self.dims[0]})", "memory")
        if a % min(k, self.store.align):
            raise SimTrap(f"misaligned {what}({self.name}, {tname}, {_hex(a)})", "misaligned")

    def _raw(self) -> bool:
        """Elements are stored in exactly their width: the array's bytes are the bit patterns."""
        return _LITTLE and self.store.elem.dtype.itemsize * 8 == self.elem_t.bits

    def loader(self, t: Type) -> Callable:
        k = t.bits // self.elem_t.bits
        eb = self.elem_t.bits
        tname = str(t)
        conv = self.tp.from_bits(t)
        name = self.name
        if self._raw():
            def load(A, a):
                self._span("load", tname, a, k)
                return conv(int.from_bytes(A[name][a:a + k].tobytes(), "little"))
        else:
            elem = self.tp.to_bits(self.elem_t)

            def load(A, a):
                self._span("load", tname, a, k)
                bits = 0
                for j in range(k):
                    bits |= elem(self.get(A, (a + j,))) << (j * eb)
                return conv(bits)
        return load

    def storer(self, t: Type) -> Callable:
        k = t.bits // self.elem_t.bits
        eb = self.elem_t.bits
        emask = (1 << eb) - 1
        tname = str(t)
        conv = self.tp.to_bits(t)
        name = self.name
        if self._raw():
            nbytes = k * self.store.elem.dtype.itemsize

            def store(A, a, v):
                self._span("store", tname, a, k)
                arr = A[name]
                arr[a:a + k] = np.frombuffer(conv(v).to_bytes(nbytes, "little"), dtype=arr.dtype)
        else:
            elem = self.tp.from_bits(self.elem_t)

            def store(A, a, v):
                self._span("store", tname, a, k)
                bits = conv(v)
                for j in range(k):
                    self.put(A, (a + j,), elem((bits >> (j * eb)) & emask))
        return store


class _GroupAccess:
    """A grouped register file: register n is its parts concatenated, first part lowest."""

    def __init__(self, tp: _Types, name: str, count: int, t: Type, parts: list, part_access: dict):
        self.name = name
        self.type = t
        self.dims = (count,)
        self.lanes = t.count if isinstance(t, VecT) else 0
        self.parts = parts  # per n: [(access, index)]
        self.acc = part_access
        self.tp = tp
        self.to_t, self.from_t = tp.to_bits(t), tp.from_bits(t)

    def check(self, idx):
        if not 0 <= idx[0] < self.dims[0]:
            raise SimTrap(f"out of bounds: {self.name}[{_ll(idx[0])}] (size {self.dims[0]})", "memory")

    def check_lane(self, j):
        if not 0 <= j < self.lanes:
            raise SimTrap(f"out of bounds: {self.name} lane[{_ll(j)}] (size {self.lanes})", "memory")

    def get(self, A, idx):
        self.check(idx)
        bits, shift = 0, 0
        for acc, i in self.parts[idx[0]]:
            bits |= self.tp.to_bits(acc.type)(acc.get(A, (i,))) << shift
            shift += acc.type.bits
        return self.from_t(bits)

    def put(self, A, idx, v):
        self.check(idx)
        bits, shift = self.to_t(v), 0
        for acc, i in self.parts[idx[0]]:
            w = acc.type.bits
            acc.put(A, (i,), self.tp.from_bits(acc.type)((bits >> shift) & ((1 << w) - 1)))
            shift += w

    def get_lane(self, A, idx, j):
        self.check(idx)
        self.check_lane(j)
        return self.get(A, idx)[j]

    def put_lane(self, A, idx, j, x):
        self.check(idx)
        self.check_lane(j)
        v = self.get(A, idx)
        v[j] = x
        self.put(A, idx, v)


def _hex(v: int) -> str:
    return hex(v)


def _ll(v: int) -> int:
    """An index as messages print it: its 64-bit pattern read as signed (C's %lld)."""
    return ((v + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


def _vget(v: list, j: int):
    if not 0 <= j < len(v):
        raise SimTrap(f"out of bounds: vector lane[{_ll(j)}] (size {len(v)})", "memory")
    return v[j]


def _vset(v: list, j: int, x) -> None:
    if not 0 <= j < len(v):
        raise SimTrap(f"out of bounds: vector lane[{_ll(j)}] (size {len(v)})", "memory")
    v[j] = x


def _fold(fn, acc, items):
    for x in items:
        acc = fn(acc, x)
    return acc


# ---- code generation ---------------------------------------------------------------------------------

def _ieee_acc(state, A, result):
    """The value of an ieee_* builtin's (value, flags), its flags OR-ed into the ieee_flags state."""
    v, flags = result
    if flags:
        state.put(A, (), state.get(A, ()) | flags)
    return v


_RUNTIME = {
    "_div": _div, "_mod": _mod, "_shl": _shl, "_shr": _shr, "_pow": _pow, "_slice": _slice, "_bit": _bit,
    "_clz": _clz, "_ctz": _ctz, "_popcount": _popcount, "_clamp": _clamp, "_sext": _sext,
    "_r32": _r32, "_fdiv": _fdiv, "_fma": _fma, "_fma_odd": _fma_odd, "_ldexp": _ldexp, "_isinf": _isinf, "_isnan": _isnan, "_INF": _INF,
    "_NAN": _NAN, "_vget": _vget, "_vset": _vset, "_fold": _fold, "_fail": _fail, "_num": _num,
    "_exp": _exp, "_log": _log, "_sqrt": _sqrt, "_recip": _recip, "_tanh": _tanh, "_erf": _erf,
    "_fmin": _fmin, "_fmax": _fmax, "_ieee": _ieee, "_ieee_acc": _ieee_acc,
}


_INT_LITERAL = re.compile(r"-?[0-9]+")


def _pyname(s: str) -> str:
    return re.sub(r"\W", "_", s)


class _Gen:
    """Python source for one body of typed semantics."""

    def __init__(self, cc: "Compiled", body: TypedBody, depth: int = 1):
        self.cc = cc
        self.spec = cc.spec
        self.types = body.types
        self.body = body
        self.operands = body.operands
        self.lines: list[str] = []
        self.depth = depth
        self.scopes: list[dict[str, tuple[str, Type]]] = [{}]
        self._const: dict[int, bool] = {}

    # -- plumbing
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fresh(self, base: str) -> str:
        return self.cc.fresh(base)

    def const(self, obj, hint: str = "K") -> str:
        return self.cc.const(obj, hint)

    def T(self, e: ir.Expr) -> Type:
        return self.types[id(e)]

    def lookup(self, name: str) -> Optional[tuple[str, Type]]:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # -- types
    def wrap(self, code: str, t: Type) -> str:
        t = I64 if isinstance(t, IntLitT) else t
        mask = (1 << t.width) - 1
        if not t.signed:
            return f"(({code}) & {mask:#x})"
        half = 1 << (t.width - 1)
        return f"(((({code}) + {half:#x}) & {mask:#x}) - {half:#x})"

    def rnd(self, code: str, t: Type) -> str:
        """Round a double to float format t."""
        if isinstance(t, FloatT):
            native = self.cc.floats[t.name].native
            if native == "double":
                return code
            if native == "float":
                return f"_r32({code})"
            return f"{self.const(self.cc.tp.rounder(t), 'RF_' + t.name)}({code})"
        return code

    def const_value(self, e: ir.Expr, to: Type):
        """A literal converted to type `to`, at compile time."""
        if isinstance(e, ir.Num):
            v = e.value
        elif isinstance(e, ir.FloatLit):
            v = float(e.text)
        else:  # inf / nan
            v = _INF if e.id == "inf" else _NAN
        if isinstance(to, IntT):
            return _wrap_fn(to)(int(v))
        if isinstance(to, FloatT):
            return self.cc.tp.int_to_float(to)(v) if isinstance(v, int) else self.cc.tp.rounder(to)(v)
        return v

    def lit(self, v) -> str:
        if isinstance(v, bool):
            return repr(v)
        if isinstance(v, float):
            return _flit(v)
        return repr(v)

    def coerce(self, e: ir.Expr, to: Type, code: Optional[str] = None) -> str:
        """e's value as type `to` (implicit conversions: literals and widening)."""
        frm = self.T(e)
        is_lit = isinstance(e, (ir.Num, ir.FloatLit)) or (isinstance(e, ir.Name) and e.id in ("inf", "nan")
                                                          and self.lookup(e.id) is None
                                                          and e.id not in self.operands)
        if is_lit and isinstance(to, (IntT, FloatT)) and frm != to:
            return self.lit(self.const_value(e, to))
        if code is None:
            code = self.ex(e)
        if frm == to:
            return code
        if isinstance(frm, IntLitT) and isinstance(to, IntT):
            if _INT_LITERAL.fullmatch(code):
                return repr(_wrap_fn(to)(int(code)))
            return self.wrap(code, to)
        if isinstance(frm, IntLitT) and isinstance(to, FloatT):
            return f"{self.const(self.cc.tp.int_to_float(to), 'I2F_' + to.name)}({code})"
        if isinstance(frm, FloatLitT) and isinstance(to, FloatT):
            return self.rnd(code, to)
        return code  # widening of the same signedness, literal to literal: the value is unchanged

    def convert(self, code: str, frm: Type, to: Type) -> str:
        """The explicit conversion T(e)."""
        if frm == to:
            return code
        if isinstance(to, BoolT):
            if isinstance(frm, BoolT):
                return code
            return f"(({code}) != 0)"
        if isinstance(to, IntT):
            if isinstance(frm, BoolT):
                return self.wrap(f"(1 if {code} else 0)", to)
            if is_int(frm):
                return self.wrap(code, to)
            return f"_num.f2i({code}, {to.width}, {to.signed})"
        if isinstance(to, FloatT):
            if isinstance(frm, BoolT):
                return self.rnd(f"(1.0 if {code} else 0.0)", to)
            if is_int(frm):
                return f"{self.const(self.cc.tp.int_to_float(to), 'I2F_' + to.name)}({code})"
            if isinstance(frm, FloatT) and self.cc.tp.widens(frm, to):
                return code  # every value of frm is a value of to
            return self.rnd(code, to)
        raise TypeError(f"cannot convert {frm} to {to}")

    def unify(self, a: Type, b: Type) -> Type:
        if isinstance(a, IntLitT):
            return b
        if isinstance(b, IntLitT):
            return a
        if isinstance(a, IntT) and isinstance(b, IntT):
            return a if a.width >= b.width else b
        if isinstance(a, FloatLitT):
            return b
        return a

    # -- statements
    def block(self, stmts) -> None:
        self.scopes.append({})
        n = len(self.lines)
        for s in stmts:
            self.stmt(s)
        if len(self.lines) == n:
            self.emit("pass")
        self.scopes.pop()

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Let):
            t = local_type(self.body, self.spec, s)
            code = self.coerce(s.value, t)
            if isinstance(t, VecT) and self.may_alias(s.value):
                code = f"list({code})"
            py = self.fresh(("v_" if s.mutable else "l_") + _pyname(s.name))
            self.emit(f"{py} = {code}")
            self.scopes[-1][s.name] = (py, t)
        elif isinstance(s, ir.Assign):
            self.assign(s)
        elif isinstance(s, ir.If):
            self.emit(f"if {self.ex(s.cond)}:")
            self.depth += 1
            self.block(s.then)
            self.depth -= 1
            if s.orelse:
                self.emit("else:")
                self.depth += 1
                self.block(s.orelse)
                self.depth -= 1
        elif isinstance(s, ir.For):
            py = self.fresh("i_" + _pyname(s.var))
            self.emit(f"for {py} in range({self.ex(s.lo)}, {self.ex(s.hi)}):")
            self.depth += 1
            self.scopes.append({s.var: (py, IntLitT())})
            self.block(s.body)
            self.scopes.pop()
            self.depth -= 1
        elif isinstance(s, ir.Require):
            self.emit(f"if not {self.ex(s.cond)}:")
            self.emit(f"    _fail({s.message!r}, 'require')")
        elif isinstance(s, ir.Trap):
            self.emit(f"_fail({s.message!r}, 'user')")
        elif isinstance(s, ir.Halt):
            self.emit("m.halted = True")
        elif isinstance(s, ir.CallStmt):
            c = s.call
            if isinstance(c, ir.Call) and c.func == "store":
                self.emit(self.store(c))
            else:
                self.emit(self.ex(c))
        else:
            raise TypeError(f"unknown statement {s!r}")

    def assign(self, s: ir.Assign) -> None:
        target = s.target
        root, path = ir.index_path(target)
        name = root.id
        local = self.lookup(name)
        if local is not None:
            py, t = local
            if not path:
                code = self.coerce(s.value, t)
                self.emit(f"{py} = {'list(' + code + ')' if isinstance(t, VecT) and self.may_alias(s.value) else code}")
                return
            value = self.coerce(s.value, self.T(target))
            self.emit(f"_vset({py}, {self.ex(path[0])}, {value})")
            return
        if name == "pc" and not path:
            self.emit(f"m.next_pc = {self.coerce(s.value, self.cc.pc_type)}")
            self.emit("m.jumped = True")
            return
        acc = self.cc.access[name]
        ndims = len(acc.dims)
        idx = ", ".join(self.ex(p) for p in path[:ndims])
        idx = f"({idx},)" if ndims else "()"
        ttype = self.T(target) if id(target) in self.types else acc.type
        value = self.coerce(s.value, ttype)
        a = self.const(acc, "S_" + name)
        if len(path) == ndims:
            self.emit(f"{a}.put(A, {idx}, {value})")
        else:
            self.emit(f"{a}.put_lane(A, {idx}, {self.ex(path[ndims])}, {value})")

    def may_alias(self, e: ir.Expr) -> bool:
        """Whether a vector value may be a list some other local holds (then it is copied)."""
        if isinstance(e, ir.Call) and e.func in ("bitcast", "load"):
            return False
        if isinstance(e, ir.Index):
            root, _ = ir.index_path(e)
            return not (isinstance(root, ir.Name) and self.lookup(root.id) is None and root.id in self.cc.access)
        return True

    def store(self, c: ir.Call) -> str:
        mem = self.cc.access[c.args[0].id]
        t = self.spec.context.resolve_type(_as_typeref(c.args[1]))
        fn = self.const(self.cc.storer(mem, t), f"ST_{mem.name}_{_pyname(str(t))}")
        return f"{fn}(A, {self.ex(c.args[2])}, {self.coerce(c.args[3], t)})"

    # -- expressions
    def ex(self, e: ir.Expr) -> str:
        code = getattr(self, "x_" + type(e).__name__)(e)
        if isinstance(e, (ir.Unary, ir.Binary, ir.Cond, ir.Slice, ir.Call)) and \
                isinstance(self.T(e), (IntT, IntLitT, BoolT)) and self.is_const(e):
            try:
                return repr(eval(code, self.cc.ns))  # noqa: S307 (our own generated code)
            except SimTrap:
                pass  # e.g. a constant division by zero: it traps when it runs
        return code

    def is_const(self, e: ir.Expr) -> bool:
        """An integer or bool expression of literals and parameters only (folded at compile time)."""
        key = id(e)
        hit = self._const.get(key)
        if hit is None:
            if isinstance(e, ir.Num):
                hit = True
            elif isinstance(e, ir.Name):
                hit = self.lookup(e.id) is None and e.id not in self.operands and \
                    (e.id in self.spec.params or e.id in ("true", "false"))
            elif isinstance(e, ir.Unary):
                hit = self.is_const(e.operand)
            elif isinstance(e, ir.Binary):
                hit = self.is_const(e.left) and self.is_const(e.right)
            elif isinstance(e, ir.Cond):
                hit = self.is_const(e.cond) and self.is_const(e.then) and self.is_const(e.orelse)
            elif isinstance(e, ir.Slice):
                hit = self.is_const(e.base) and self.is_const(e.hi) and self.is_const(e.lo)
            elif isinstance(e, ir.Call) and len(e.args) == 1 and self.lookup(e.func) is None and \
                    e.func not in self.operands and e.func not in self.spec.context.functions:
                t = self.spec.context.resolve_type(ir.TypeRef(e.func))
                hit = isinstance(t, (IntT, BoolT)) and isinstance(self.T(e.args[0]), (IntT, IntLitT, BoolT)) \
                    and self.is_const(e.args[0])
            else:
                hit = False
            self._const[key] = hit
        return hit

    def x_Num(self, e: ir.Num) -> str:
        return repr(e.value)

    def x_FloatLit(self, e: ir.FloatLit) -> str:
        return _flit(float(e.text))

    def x_Name(self, e: ir.Name) -> str:
        local = self.lookup(e.id)
        if local is not None:
            return local[0]
        if e.id in self.operands:
            return "o_" + _pyname(e.id)
        if e.id in self.spec.params:
            return repr(self.spec.params[e.id])
        if e.id in ("true", "false"):
            return "True" if e.id == "true" else "False"
        if e.id in ("inf", "nan"):
            return "_INF" if e.id == "inf" else "_NAN"
        if e.id == "pc":
            return "m.cur_pc"
        acc = self.cc.access[e.id]
        return f"{self.const(acc, 'S_' + e.id)}.get(A, ())"

    def x_Index(self, e: ir.Index) -> str:
        root, path = ir.index_path(e)
        if isinstance(root, ir.Name) and self.lookup(root.id) is None and root.id in self.cc.access:
            acc = self.cc.access[root.id]
            ndims = len(acc.dims)
            idx = ", ".join(self.ex(p) for p in path[:ndims])
            idx = f"({idx},)" if ndims else "()"
            a = self.const(acc, "S_" + root.id)
            if len(path) == ndims:
                return f"{a}.get(A, {idx})"
            return f"{a}.get_lane(A, {idx}, {self.ex(path[ndims])})"
        return f"_vget({self.ex(e.base)}, {self.ex(e.index)})"

    def x_Slice(self, e: ir.Slice) -> str:
        t = self.T(e.base)
        base = self.ex(e.base)
        try:
            hi, lo = self.static(e.hi), self.static(e.lo)
        except _NotStatic:
            return self.wrap(f"_slice({base}, {self.ex(e.hi)}, {self.ex(e.lo)}, {t.bits})", self.T(e))
        return f"((({base}) >> {lo}) & {(1 << (hi - lo + 1)) - 1:#x})"

    def static(self, e: ir.Expr) -> int:
        def lookup(n: ir.Name) -> int:
            if self.lookup(n.id) is None and n.id not in self.operands and n.id in self.spec.params:
                return self.spec.params[n.id]
            raise _NotStatic()
        try:
            return evaluate(e, lookup)
        except _NotStatic:
            raise
        except Exception:
            raise _NotStatic() from None

    def x_Unary(self, e: ir.Unary) -> str:
        t = self.T(e)
        a = self.coerce(e.operand, t) if e.op == "-" else self.ex(e.operand)
        if e.op == "!":
            return f"(not {a})"
        if e.op == "~":
            return self.wrap(f"~({a})", t)
        if is_float(t):
            return self.rnd(f"(-({a}))", t)
        return self.wrap(f"-({a})", t)

    def x_Binary(self, e: ir.Binary) -> str:
        op = e.op
        t = self.T(e)
        if op in ("&&", "||"):
            return f"({self.ex(e.left)} {'and' if op == '&&' else 'or'} {self.ex(e.right)})"
        lt, rt = self.T(e.left), self.T(e.right)
        if op == "**":
            return self.wrap(f"_pow({self.ex(e.left)}, {self.ex(e.right)})", I64)
        if op in ("<<", ">>"):
            a = self.ex(e.left)
            amount = self.ex(e.right)
            rt_ = I64 if isinstance(rt, IntLitT) else rt
            if rt_.signed:
                amount = f"(({amount}) & {(1 << rt_.width) - 1:#x})"
            width = t.bits
            if op == "<<":
                return self.wrap(f"_shl({a}, {amount}, {width})", t)
            return f"_shr({a}, {amount}, {width})"
        if t == BOOL and lt == BOOL and rt == BOOL:
            pyop = {"&": "&", "|": "|", "^": "^", "==": "==", "!=": "!="}[op]
            return f"({self.ex(e.left)} {pyop} {self.ex(e.right)})"
        if op in ("==", "!=", "<", "<=", ">", ">="):
            u = self.unify(lt, rt)
            return f"({self.coerce(e.left, u)} {op} {self.coerce(e.right, u)})"
        a, b = self.coerce(e.left, t), self.coerce(e.right, t)
        if is_float(t):
            if op == "/":
                return self.rnd(f"_fdiv({a}, {b})", t)
            return self.rnd(f"({a} {op} {b})", t)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "/":
            return self.wrap(f"_div({a}, {b})", t)
        if op == "%":
            return self.wrap(f"_mod({a}, {b})", t)
        return self.wrap(f"{a} {op} {b}", t)

    def x_Cond(self, e: ir.Cond) -> str:
        t = self.T(e)
        return f"({self.coerce(e.then, t)} if {self.ex(e.cond)} else {self.coerce(e.orelse, t)})"

    def x_Reduce(self, e: ir.Reduce) -> str:
        t = self.T(e)
        bt = self.T(e.body)
        py = self.fresh("r_" + _pyname(e.var))
        lo, hi = self.ex(e.lo), self.ex(e.hi)
        self.scopes.append({e.var: (py, IntLitT())})
        body = self.coerce(e.body, t) if t != bt and not isinstance(t, IntLitT) else self.ex(e.body)
        self.scopes.pop()
        items = f"({body} for {py} in range({lo}, {hi}))"
        op = e.op
        if isinstance(t, BoolT):
            init = "True" if op == "and" else "False"
            pyop = {"and": "&", "or": "|", "xor": "^"}[op]
            return f"_fold(lambda a, b: a {pyop} b, {init}, {items})"
        if is_int(t):
            it = I64 if isinstance(t, IntLitT) else t
            if op == "sum":
                return self.wrap(f"sum({items})", it)
            if op == "prod":
                return f"_fold(lambda a, b: {self.wrap('a * b', it)}, 1, {items})"
            if op in ("max", "min"):
                init = it.min if op == "max" else it.max
                return f"_fold({op}, {init}, {items})"
            init = {"and": -1 if it.signed else it.max, "or": 0, "xor": 0}[op]
            pyop = {"and": "&", "or": "|", "xor": "^"}[op]
            return f"_fold(lambda a, b: a {pyop} b, {init}, {items})"
        # floats
        rf = self.rnd("X", t) if isinstance(t, FloatT) else "X"
        if op == "sum":
            return f"_fold(lambda a, b: {rf.replace('X', '(a + b)')}, 0.0, {items})"
        if op == "prod":
            return f"_fold(lambda a, b: {rf.replace('X', '(a * b)')}, 1.0, {items})"
        if op in ("max", "min"):
            return f"_fold(_f{op}, {'-_INF' if op == 'max' else '_INF'}, {items})"
        raise TypeError(f"'{op}' reduction of {t}")

    # -- calls
    def x_Call(self, e: ir.Call) -> str:
        f = e.func
        if f in self.spec.context.functions:
            fn = self.spec.context.functions[f]
            self.cc.function(f)
            args = [self.coerce(a, self.spec.context.resolve_type(p.type)) for a, p in zip(e.args, fn.params)]
            return f"F_{_pyname(f)}(m, A{''.join(', ' + a for a in args)})"
        shadowed = self.lookup(f) is not None or f in self.operands
        scalar = self.spec.context.resolve_type(ir.TypeRef(f)) if not shadowed else None
        if scalar is not None:
            return self.convert(self.ex(e.args[0]), self.T(e.args[0]), scalar)
        if f in MATH_UNARY:
            t = self.T(e)
            return self.rnd(f"_{f}({self.coerce(e.args[0], t)})", t)
        return getattr(self, "c_" + f)(e)

    def _args_as(self, e: ir.Call, t: Type) -> list[str]:
        return [self.coerce(a, t) for a in e.args]

    def c_min(self, e):
        t = self.T(e)
        a, b = self._args_as(e, t)
        return f"_fmin({a}, {b})" if is_float(t) else f"min({a}, {b})"

    def c_max(self, e):
        t = self.T(e)
        a, b = self._args_as(e, t)
        return f"_fmax({a}, {b})" if is_float(t) else f"max({a}, {b})"

    def c_abs(self, e):
        t = self.T(e)
        (a,) = self._args_as(e, t)
        return f"abs({a})" if is_float(t) else self.wrap(f"abs({a})", t)

    def c_fma(self, e):
        t = self.T(e)
        a, b, c = self._args_as(e, t)
        odd = isinstance(t, FloatT) and self.cc.floats[t.name].exact_products
        return self.rnd(f"{'_fma_odd' if odd else '_fma'}({a}, {b}, {c})", t)

    def c_sext(self, e):
        t = self.T(e.args[0])
        return f"_sext({self.ex(e.args[0])}, {t.width})"

    def c_zext(self, e):
        t = self.T(e.args[0])
        return f"(({self.ex(e.args[0])}) & {(1 << t.width) - 1:#x})"

    def _type_arg(self, a: ir.Expr) -> Type:
        return self.spec.context.resolve_type(_as_typeref(a))

    def c_bitcast(self, e):
        src, dst = self.T(e.args[0]), self._type_arg(e.args[1])
        fn = self.const(self.cc.tp.bitcaster(src, dst), f"BC_{_pyname(str(src))}_{_pyname(str(dst))}")
        return f"{fn}({self.ex(e.args[0])})"

    def c_sat(self, e):
        src, dst = self.T(e.args[0]), self._type_arg(e.args[1])
        code = self.ex(e.args[0])
        if isinstance(dst, IntT):
            if is_int(src):
                return f"_clamp({code}, {dst.min}, {dst.max})"
            return f"_num.f2i({code}, {dst.width}, {dst.signed})"
        if is_int(src):
            return f"{self.const(self.cc.tp.int_to_float(dst, saturate=True), 'I2FS_' + dst.name)}({code})"
        return f"{self.const(self.cc.tp.saturator(dst), 'SAT_' + dst.name)}({code})"

    def c_bit(self, e):
        t = self.T(e.args[0])
        i = self.ex(e.args[1])
        it = self.T(e.args[1])
        it = I64 if isinstance(it, IntLitT) else it
        if it.signed:
            i = f"(({i}) & {(1 << it.width) - 1:#x})"
        return f"_bit({self.ex(e.args[0])}, {i}, {t.bits})"

    def _count(self, e, fn):
        t = self.T(e)
        return self.wrap(f"{fn}({self.ex(e.args[0])}, {t.width})", t)

    def c_clz(self, e):
        return self._count(e, "_clz")

    def c_ctz(self, e):
        return self._count(e, "_ctz")

    def c_popcount(self, e):
        return self._count(e, "_popcount")

    def c_ldexp(self, e):
        t = self.T(e)
        return self.rnd(f"_ldexp({self.coerce(e.args[0], t)}, {self.ex(e.args[1])})", t)

    def c_ilogb(self, e):
        return f"_num.ilogb({self.ex(e.args[0])})"

    def c_isnan(self, e):
        return f"_isnan({self.ex(e.args[0])})"

    def c_isinf(self, e):
        return f"_isinf({self.ex(e.args[0])})"

    # ---- ieee_*: IEEE 754 on bit patterns, exact (kcgen/sim/ieee.py) ----------------------------------
    def _ieee_flagged(self, call: str) -> str:
        """`call` (a (value, flags) pair) as its value, its flags OR-ed into the ieee_flags state."""
        name = self.spec.ieee_flags_state
        if name is None:
            return f"({call})[0]"
        return f"_ieee_acc({self.const(self.cc.access[name], 'S_' + name)}, A, {call})"

    def _ieee_bits(self, arg) -> tuple[str, int]:
        w = self.T(arg).width
        return f"(({self.ex(arg)}) & {(1 << w) - 1:#x})", w

    def _ieee_op(self, e, fn: str, n: int) -> str:
        args = [self._ieee_bits(a) for a in e.args[:n]]
        w = args[0][1]
        call = f"_ieee.{fn}({', '.join(a for a, _ in args)}, {w}, {self.ex(e.args[n])})"
        return self.wrap(self._ieee_flagged(call), self.T(e))

    def c_ieee_add(self, e):
        return self._ieee_op(e, "add", 2)

    def c_ieee_sub(self, e):
        return self._ieee_op(e, "sub", 2)

    def c_ieee_mul(self, e):
        return self._ieee_op(e, "mul", 2)

    def c_ieee_div(self, e):
        return self._ieee_op(e, "div", 2)

    def c_ieee_sqrt(self, e):
        return self._ieee_op(e, "sqrt", 1)

    def c_ieee_fma(self, e):
        return self._ieee_op(e, "fma", 3)

    def _ieee_min_max(self, e, want_max: bool) -> str:
        (a, w), (b, _) = self._ieee_bits(e.args[0]), self._ieee_bits(e.args[1])
        return self.wrap(self._ieee_flagged(f"_ieee.min_max({a}, {b}, {w}, {want_max})"), self.T(e))

    def c_ieee_min(self, e):
        return self._ieee_min_max(e, False)

    def c_ieee_max(self, e):
        return self._ieee_min_max(e, True)

    def _ieee_compare(self, e, kind: int) -> str:
        (a, w), (b, _) = self._ieee_bits(e.args[0]), self._ieee_bits(e.args[1])
        return self._ieee_flagged(f"_ieee.compare({a}, {b}, {w}, {kind})")

    def c_ieee_eq(self, e):
        return self._ieee_compare(e, 0)

    def c_ieee_lt(self, e):
        return self._ieee_compare(e, 1)

    def c_ieee_le(self, e):
        return self._ieee_compare(e, 2)

    def c_ieee_to_int(self, e):
        a, w = self._ieee_bits(e.args[0])
        t = self.T(e)
        return self._ieee_flagged(f"_ieee.to_int({a}, {w}, {self.ex(e.args[1])}, {t.width}, {t.signed})")

    def c_ieee_from_int(self, e):
        t = self.T(e)
        return self.wrap(self._ieee_flagged(f"_ieee.from_int({self.ex(e.args[0])}, {t.width}, {self.ex(e.args[1])})"), t)

    def c_ieee_convert(self, e):
        a, w = self._ieee_bits(e.args[0])
        t = self.T(e)
        return self.wrap(self._ieee_flagged(f"_ieee.convert({a}, {w}, {t.width}, {self.ex(e.args[1])})"), t)

    def c_load(self, e):
        mem = self.cc.access[e.args[0].id]
        t = self._type_arg(e.args[1])
        fn = self.const(self.cc.loader(mem, t), f"LD_{mem.name}_{_pyname(str(t))}")
        return f"{fn}(A, {self.ex(e.args[2])})"

    def c_store(self, e):
        return self.store(e)

    def _mx(self, e) -> str:
        """The element format of an mx format (kcgen.numeric.Format), as a constant."""
        return self.const(self.cc.mx_elem(e.args[0].id), "MX_" + e.args[0].id)

    def _rule(self, e) -> str:
        return repr(self.cc.mxs[e.args[0].id][3])

    def c_mx_decode(self, e):
        u8 = IntT(False, 8)
        return (f"_r32(_num.mx_decode({self._mx(e)}, {self.coerce(e.args[1], u8)}, {self.coerce(e.args[2], u8)}, "
                f"{self._rule(e)}))")

    def c_mx_scale(self, e):
        return f"_num.mx_scale({self._mx(e)}, {self.coerce(e.args[1], F32)}, {self._rule(e)})"

    def c_mx_encode(self, e):
        u8 = IntT(False, 8)
        return (f"_num.mx_encode({self._mx(e)}, {self.coerce(e.args[1], F32)}, {self.coerce(e.args[2], u8)}, "
                f"{self._rule(e)})")


class _NotStatic(Exception):
    pass


# ---- the compiled form of one Spec ----------------------------------------------------------------------

@dataclass
class ExampleCode:
    """An example compiled for the reference interpreter: `given(m, A)` and one check per expect."""
    given: Callable
    checks: list  # (text, check(m, A) -> bool, sides: [(text, fn(m, A))])
    source: str


class Compiled:
    """Every instruction and function of one Spec as Python functions (built once per Spec)."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.layout: Layout = make_layout(spec)
        self.floats = self.layout.floats
        self.mxs = self.layout.mxs
        self.pc_type: IntT = spec.context.pc_type
        self.tp = _Types(self.floats)
        self.ns: dict = dict(_RUNTIME)
        self._names: dict[int, str] = {}
        self._count = 0
        self.sources: dict[str, str] = {}
        self.function_sources: dict[str, str] = {}
        self.access: dict = {}
        for name, st in self.layout.stores.items():
            self.access[name] = _Access(self.tp, st)
        for name, g in self.layout.groups.items():
            parts = []
            for n in range(g.count):
                def lookup(x: ir.Name, n=n) -> int:
                    return n if x.id == "n" else spec.params[x.id]
                parts.append([(self.access[f], evaluate(ix, lookup)) for f, ix in g.parts])
            self.access[name] = _GroupAccess(self.tp, name, g.count, g.type, parts, self.access)
        self._loaders: dict = {}
        self._storers: dict = {}
        self._mx: dict = {}
        self._functions_done: set[str] = set()
        self.dis = Disassembler(spec)
        isa = spec.isa
        self.entry = spec.params_eval(isa.abi.entry) if isa.abi and isa.abi.entry is not None else 0
        self.pcrel_next = self.dis.pcrel_next
        self.wrap_pc = _wrap_fn(self.pc_type)
        # operand normalisation: decoded values wrapped to the type semantics see
        self.operand_wraps: dict[str, tuple] = {}
        for name, s in spec.instructions.items():
            ops = spec.semantic_operands(s.operands)
            self.operand_wraps[name] = tuple((k, _wrap_fn(v.type)) for k, v in ops.items() if isinstance(v.type, IntT))
        self.insns: dict[str, Callable] = {}
        for name in spec.instructions:
            self.insns[name] = self._instruction(name)
        self._examples: dict[int, tuple] = {}

    # -- namespace
    def fresh(self, base: str) -> str:
        self._count += 1
        return f"{base}_{self._count}"

    def const(self, obj, hint: str) -> str:
        key = id(obj)
        if key in self._names and self.ns.get(self._names[key]) is obj:
            return self._names[key]
        name = _pyname(hint)
        if name in self.ns:
            name = self.fresh(name)
        self.ns[name] = obj
        self._names[key] = name
        return name

    def mx_elem(self, mx: str):
        if mx not in self._mx:
            self._mx[mx] = numeric_format(self.floats[self.mxs[mx][0]])
        return self._mx[mx]

    def loader(self, acc: _Access, t: Type):
        key = (acc.name, t)
        if key not in self._loaders:
            self._loaders[key] = acc.loader(t)
        return self._loaders[key]

    def storer(self, acc: _Access, t: Type):
        key = (acc.name, t)
        if key not in self._storers:
            self._storers[key] = acc.storer(t)
        return self._storers[key]

    def _define(self, src: str, fname: str, label: str) -> Callable:
        filename = f"<pyref {self.spec.isa.name}:{label}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        exec(compile(src, filename, "exec"), self.ns)
        return self.ns[fname]

    # -- functions and instructions
    def function(self, name: str) -> None:
        if name in self._functions_done:
            return
        self._functions_done.add(name)
        fn = self.spec.context.functions[name]
        body = type_function(self.spec, fn)
        g = _Gen(self, body)
        params = []
        for p in fn.params:
            py = "p_" + _pyname(p.name)
            params.append(py)
            g.scopes[-1][p.name] = (py, self.spec.context.resolve_type(p.type))
        result = g.coerce(fn.body, self.spec.context.resolve_type(fn.result))
        g.emit(f"return {result}")
        fname = "F_" + _pyname(name)
        src = f"def {fname}(m, A{''.join(', ' + p for p in params)}):\n" + "\n".join(g.lines) + "\n"
        self.function_sources[name] = src
        self._define(src, fname, "function " + name)

    def _instruction(self, name: str) -> Callable:
        body = type_instruction(self.spec, name)
        g = _Gen(self, body)
        for op in body.operands:
            g.emit(f"o_{_pyname(op)} = o[{op!r}]")
        g.block(body.stmts)
        fname = "I_" + _pyname(name)
        src = f"def {fname}(m, A, o):\n" + "\n".join(g.lines) + "\n"
        self.sources[name] = src
        return self._define(src, fname, name)

    def example(self, ex: ir.Example) -> ExampleCode:
        key = id(ex)
        hit = self._examples.get(key)
        if hit is not None and hit[0] is ex:
            return hit[1]
        body = type_example(self.spec, ex)
        g = _Gen(self, body)
        g.block(ex.given)
        gname = self.fresh("G")
        parts = [f"def {gname}(m, A):\n" + "\n".join(g.lines) + "\n"]
        checks = []
        for e in ex.expect:
            cname = self.fresh("E")
            g = _Gen(self, body)
            parts.append(f"def {cname}(m, A):\n    return {g.ex(e)}\n")
            sides = []
            if isinstance(e, ir.Binary) and e.op in ("==", "!=", "<", "<=", ">", ">="):
                for side in (e.left, e.right):
                    if isinstance(side, (ir.Num, ir.FloatLit)):
                        continue
                    sname = self.fresh("V")
                    parts.append(f"def {sname}(m, A):\n    return {_Gen(self, body).ex(side)}\n")
                    sides.append((show(side), sname))
            checks.append((show(e), cname, sides))
        src = "\n".join(parts)
        self._define(src, gname, f"example line {ex.loc.line}")
        code = ExampleCode(self.ns[gname], [(text, self.ns[c], [(st, self.ns[s]) for st, s in sides])
                                            for text, c, sides in checks], src)
        self._examples[key] = (ex, code)
        return code


def compiled(spec: Spec) -> Compiled:
    """The compiled reference semantics of a Spec: built on first use and kept on the Spec object
    (so it lives exactly as long as the Spec)."""
    cc = spec.__dict__.get("_kcgen_pyref")
    if cc is None or cc.spec is not spec:
        cc = Compiled(spec)
        spec.__dict__["_kcgen_pyref"] = cc
    return cc


def example_code(spec: Spec, ex: ir.Example) -> ExampleCode:
    return compiled(spec).example(ex)


# ---- the machine -------------------------------------------------------------------------------------------

@dataclass
class _Insn:
    address: int
    size: int
    word: int
    ops: Optional[tuple]  # (function, name, operands) per slot; None: undecodable
    line: Optional[int]


class RefMachine:
    """The reference interpreter of one ISA: arrays, pc, load(program), step(), run(max_steps)."""

    def __init__(self, spec: Spec, layout: Optional[Layout] = None):
        self.spec = spec
        self.code = compiled(spec)
        self.layout = layout if layout is not None else self.code.layout
        self.arrays: dict[str, np.ndarray] = self.layout.allocate()
        self.pc: int = self.code.entry
        self.program = None
        self._text: dict[int, _Insn] = {}
        self._lo = self._hi = self.pc
        self.steps = 0
        self.counts: Counter = Counter()
        self.status: Optional[str] = None  # None while the machine can run
        self.trap: Optional[Trap] = None
        # per-instruction state the generated code uses: reads of pc give cur_pc (the address of the
        # instruction or bundle) even after a write; a write sets next_pc
        self.cur_pc = self.next_pc = self.pc
        self.jumped = False
        self.halted = False
        # VLIW control (docs/simulator.md, "Semantics"): delay slots of jumps and register-driven
        # zero-overhead loops, as kcgen.sim.cgen's redirect_c
        t = spec.isa.timing
        self._delay = 0
        if t is not None and t.model == "vliw":
            self._delay = int(next((spec.params_eval(p.value) for p in t.props if p.name == "delay_slots"), 0))
        h = spec.isa.hwloop
        self._zol = tuple(h.registers) if h is not None and h.registers else ()
        self.branch: Optional[tuple[int, int]] = None  # (target, bundles still to run) of a jump in flight
        # an exposed pipeline (timing vliw { exposed = 1 }, as kcgen.sim.cgen's exposed_c): a result
        # written through an operand lands `latency` bundles after its bundle; readers see the old value
        self._exposed = t is not None and t.model == "vliw" and bool(
            next((spec.params_eval(p.value) for p in t.props if p.name == "exposed"), 0))
        self._waits: dict[str, tuple] = {}  # instruction -> ((file, operand), ...) and its latency
        self._branch_cost = int(next((spec.params_eval(p.value) for p in t.props if p.name == "branch_delay"), 0)) \
            if t is not None and t.model == "vliw" else 0
        if self._exposed:
            from .cgen import _static_regs  # the registers the C simulator's timing tracks, alike
            regs = {}
            for name, s in spec.instructions.items():
                reads, writes = _static_regs(s.insn.semantics, s.operands)
                regs[name] = reads, [(f, o) for f, o in writes
                                     if f in self.layout.groups or self.layout.stores[f].kind == "reg"]
            files = {f for _, w in regs.values() for f, _ in w}
            for name, s in spec.instructions.items():
                reads, writes = regs[name]
                lat = s.insn.latency if s.insn.latency is not None else s.insn.cycles
                lat = int(spec.params_eval(lat)) if lat is not None else 1
                # a forwarding path (bypass NAME N): results of the path in flight reach its readers N early
                peeks = tuple((f, o) for f, o in reads if f in files) if s.insn.bypass else ()
                if writes or peeks:
                    self._waits[name] = (tuple(writes), lat, s.insn.bypass, s.insn.bypass_cycles, peeks)
        self.clock = 0  # bundles run (plus taken-branch costs): the cycle of the next bundle
        self.in_flight: list = []  # (due cycle, issue order, [(array, index, value)]) of results not yet written
        self._issued = 0

    # -- introspection
    def source(self, name: str) -> str:
        """The generated Python of an instruction (or of a function of the ISA)."""
        if name in self.code.sources:
            return self.code.sources[name]
        if name in self.spec.context.functions:
            self.code.function(name)
            return self.code.function_sources[name]
        raise KeyError(name)

    # -- loading
    def load(self, program) -> None:
        """Copy the sections into the byte memories holding them; decode the text once."""
        mems = [s for s in self.layout.stores.values() if s.kind == "mem" and s.placed and s.type == IntT(False, 8)]
        for sec in program.sections.values():
            if not sec.data:
                continue
            home = next((s for s in mems if s.base <= sec.base and sec.end <= s.base + s.shape[0]), None)
            if home is None:
                if sec.name == ".text":
                    continue
                raise LoadError(f"section {sec.name} ({sec.base:#x}..{sec.end:#x}) is outside every byte memory")
            off = sec.base - home.base
            self.arrays[home.name][off:off + len(sec.data)] = np.frombuffer(bytes(sec.data), dtype=np.uint8)
        self.program = program
        text = program.sections.get(".text")
        data = bytes(text.data) if text is not None else b""
        base = text.base if text is not None else program.entry
        self._text = {}
        pos = 0
        while pos < len(data):
            insn = self._decode(data, pos, base + pos)
            self._text[insn.address] = insn
            pos += insn.size
        self._lo, self._hi = base, base + len(data)
        from .abi import apply
        apply(self.spec, self.arrays, program)  # the kernel ABI's start state (stack, return address)
        self.pc = self.code.wrap_pc(program.entry)
        self.branch = None
        self.clock, self.in_flight = 0, []
        self.steps = 0
        self.counts = Counter()
        self.status = None
        self.trap = None

    def _decode(self, data: bytes, pos: int, address: int) -> _Insn:
        dis = self.code.dis
        line = self.program.source_line(address) if hasattr(self.program, "source_line") else None
        if dis.bundles:
            found = dis.bundle_slots(data, pos)
            if found is not None:  # every slot runs, filler nops included
                _, n, word, hits = found
                return _Insn(address, n, word, tuple(self._op(hit, address, n) for _, hit in hits), line)
        else:
            d = dis.decode_at(data, pos, address)
            if d.ok:
                name, vals = d.ops[0]
                e = dis.encs[name]
                return _Insn(address, d.size, d.word, (self._op((e, vals), address, d.size, targets=False),), line)
        n = min(dis.word_bytes, len(data) - pos)
        return _Insn(address, n, int.from_bytes(data[pos:pos + n], dis.order), None, line)

    def _op(self, hit, address: int, size: int, targets: bool = True) -> tuple:
        e, vals = hit
        vals = dict(vals)
        if targets:
            for b in e.bindings:
                if b.operand.kind == "pcrel":
                    vals[b.operand.name] += address + (size if self.code.pcrel_next else 0)
        for k, wrap in self.code.operand_wraps.get(e.name, ()):
            if k in vals:
                vals[k] = wrap(vals[k])
        return (self.code.insns[e.name], e.name, vals)

    # -- running
    def _stop(self, pc: int, line: Optional[int], message: str, kind: str) -> str:
        self.trap = Trap(pc, line, message, kind)
        self.status = "trap"
        self._land(None)  # what issued before the trap still lands
        return self.status

    def step(self) -> Optional[str]:
        """Run one instruction (one bundle). Returns None while the machine can go on, else its status."""
        if self.status is not None:
            return self.status
        pc = self.pc
        insn = self._text.get(pc)
        if insn is None:
            if pc == self._hi:
                self.status = "halted"
                self._land(None)
                return self.status
            if self._lo <= pc < self._hi:
                return self._stop(pc, None, f"pc {pc:#x} is not at the start of an instruction", "pc")
            return self._stop(pc, None, f"pc {pc:#x} is outside the program", "pc")
        if insn.ops is None:
            return self._stop(pc, insn.line, f"illegal instruction {insn.word:#x}", "illegal")
        self.cur_pc = pc
        self.next_pc = pc + insn.size
        self.jumped = False
        self.halted = False
        A = self.arrays
        counts = self.counts
        waits = self._waits
        try:
            for fn, name, ops in insn.ops:
                wait = waits.get(name)
                if wait is None:
                    fn(self, A, ops)
                else:
                    self._deferred(fn, A, ops, wait)
                counts[name] += 1
        except SimTrap as t:
            return self._stop(pc, insn.line, t.message, t.kind)
        except Exception as exc:  # a bug of the interpreter, not of the program: still never raise out
            return self._stop(pc, insn.line, f"internal error: {type(exc).__name__}: {exc}", "internal")
        if self._delay or self._zol:
            message = self._redirect(pc, pc + insn.size)
            if message:
                return self._stop(pc, insn.line, message, "pc")
        self.steps += 1
        if self._exposed:
            self.clock += 1 + (self._branch_cost if self.next_pc != pc + insn.size else 0)
            self._land(self.clock)
        self.pc = self.code.wrap_pc(self.next_pc)
        if self.halted:
            self.status = "halted"
            self._land(None)
            return self.status
        return None

    # -- an exposed pipeline's results in flight
    def _cells(self, file: str, n: int) -> list[tuple[str, int]]:
        """The storage of register n of `file`: (array, index) per part; [] when n is out of range."""
        acc = self.code.access[file]
        if not 0 <= n < acc.dims[0]:
            return []
        if isinstance(acc, _GroupAccess):
            return [(part.name, i) for part, i in acc.parts[n]]
        return [(file, n)]

    def _deferred(self, fn, A, ops, wait) -> None:
        """Run one operation; what it wrote through its operands waits for its latency, the old value stays.
        On a forwarding path it first sees the path's results in flight that reach it (kc_xpeek)."""
        writes, lat, path, saves, peeks = wait
        targets = [(f, int(ops[o]), self._cells(f, int(ops[o]))) for f, o in writes]
        old = [[A[a][i].copy() for a, i in cells] for _, _, cells in targets]
        restore = []
        for f, o in peeks:
            n = int(ops[o])
            seen = [e for e in self.in_flight if e[2] == f and e[3] == n and e[4] == path and e[5] <= self.clock]
            cells = self._cells(f, n)
            if seen and cells:
                restore.append([(a, i, A[a][i].copy()) for a, i in cells])
                for a, i, v in max(seen, key=lambda e: (e[0], e[1]))[6]:
                    A[a][i] = v
        fn(self, A, ops)
        for (f, n, cells), before in zip(targets, old):
            if cells:
                self._issued += 1
                early = self.clock + (lat - saves if lat > saves else 1)
                self.in_flight.append((self.clock + lat, self._issued, f, n, path, early,
                                       [(a, i, A[a][i].copy()) for a, i in cells]))
                for (a, i), v in zip(cells, before):
                    A[a][i] = v
        for values in reversed(restore):
            for a, i, v in values:
                A[a][i] = v

    def _land(self, upto: Optional[int]) -> None:
        """Write the results due by cycle `upto` (None: all), earliest due first, then in issue order."""
        if not self.in_flight:
            return
        due = sorted((e for e in self.in_flight if upto is None or e[0] <= upto), key=lambda e: (e[0], e[1]))
        if not due:
            return
        for e in due:
            for a, i, v in e[6]:
                self.arrays[a][i] = v
        self.in_flight = [] if upto is None else [e for e in self.in_flight if e[0] > upto]

    def _redirect(self, pc: int, seq: int) -> Optional[str]:
        """After the bundle at pc (next in order: seq): a jump waits for its delay slots, and the bundle
        at the loop end register loops back to the loop start while the count stays above zero. Returns
        a trap message, or None."""
        taken = self.next_pc != seq
        landed = False
        if self._delay:
            if self.branch is not None:
                target, left = self.branch
                if taken:
                    return f"a jump in the delay slots of the jump to {target:#x}"
                self.branch = (target, left - 1) if left > 1 else None
                if left == 1:
                    self.next_pc, landed = target, True
            elif taken:
                self.branch = (self.next_pc, self._delay)
                self.next_pc = seq
        if self._zol and not landed:
            A = self.arrays
            lc, ls, le = (A[n] for n in self._zol)
            if int(lc[()]) != 0 and int(le[()]) == pc:
                lc[()] = int(lc[()]) - 1
                if int(lc[()]) != 0:
                    self.next_pc = int(ls[()])
        return None

    def run(self, max_steps: int = 1_000_000) -> RunResult:
        """Run until halt, trap, or max_steps steps (status 'budget'; another run() resumes).

        As in the C simulator, a step is one attempt to fetch and execute: reaching the end of
        the text is noticed by the step after the last instruction, so a program of n
        instructions run with max_steps=n ends with 'budget' (and a further run() with 'halted')."""
        before = Counter(self.counts)
        for _ in range(max_steps):
            if self.step() is not None:
                break
        counts = {k: v - before[k] for k, v in self.counts.items() if v != before[k]}
        return RunResult(self.status or "budget", self.steps, self.trap, counts)
