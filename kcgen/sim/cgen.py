"""The C simulator generator: checked ISA → one readable C file.

The file holds, in order: the numeric formats as `kc_fmt` constants; the state struct (pointers
to the numpy arrays of kcgen.sim.layout, pc, counters, timing bookkeeping); one `x_NAME`
function per instruction compiled from its semantics; the decoder (mask/match per slot or width
group, most specific first, as the disassembler decodes); the pre-decoder that turns a text
section into an array of decoded operations once per program; and the run loop, one `switch`
over the operations with each instruction's timing written out beside its call.

Values inside semantics are held as: `int` (bool), `int64_t`/`uint64_t` (integers, always
wrapped to their type), `double` (floats, rounded to their format after every operation) and
byte containers for vectors. docs/simulator.md states the rules this code implements; the
Python reference interpreter implements the same rules independently.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

from isadl import ir
from isadl.check import Spec
from isadl.params import evaluate
from isadl.semantics import MATH_UNARY
from isadl.types import BoolT, FloatLitT, FloatT, IntLitT, IntT, Type, VecT, is_float, is_int

from kcgen.asm.tables import Encoding, bundle_formats, encodings, pcrel_base

from . import structures
from .layout import FloatFormat, Layout, Scalar, Store, layout
from .loops import Region, render_index
from .typed import TypedBody, local_type, type_function, type_instruction
from .work import Work

GENERATOR_VERSION = "3"
MAX_WRITES = 64  # memory blocks one instruction may mark as pending (more: the rest count as ready)
BLOCK_SHIFT = 6  # memories are tracked for readiness in blocks of 64 elements
CAL_WORDS = 64  # ooo: each unit copy's calendar covers the next 64 x 64 = 4096 cycles (one bit a cycle)

STATUS = {"running": 0, "halted": 1, "trap": 2, "budget": 3, "timeout": 4}
TRAP_KINDS = {"none": 0, "require": 1, "illegal": 2, "memory": 3, "misaligned": 4, "budget": 5, "user": 6,
              "arith": 7, "pc": 8, "timeout": 9}
# The wall-clock limit (run(s, max_steps) with s->wall_ns set): the run loop reads the clock every
# `poll_steps` instructions, a power of two chosen so that at most POLL_STEP_WORK loop iterations
# of the ISA's longest instruction run between two reads (between 16 and 65536 instructions); a
# loop nest that may run POLL_WORK iterations or more in one instruction reads it itself, about
# every POLL_WORK iterations (kcgen.sim.work bounds the iterations).
POLL_WORK = 1 << 22
POLL_STEP_WORK = 1 << 26
POLL_STEPS_MAX = 1 << 16
POLL_STEPS_MIN = 16


class Unsupported(Exception):
    """A construct the C generator cannot compile yet (reported at build time, never at run time)."""


def c_ident(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def c_string(text: str) -> str:
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("%", "%%")
    return f'"{out}"'


def comp_ctype(t: Type) -> str:
    """The C type that holds a value of semantic type t while computing."""
    if isinstance(t, BoolT):
        return "int"
    if isinstance(t, IntLitT) or (isinstance(t, IntT) and t.signed):
        return "int64_t"
    if isinstance(t, IntT):
        return "uint64_t"
    if isinstance(t, (FloatT, FloatLitT)):
        return "double"
    if isinstance(t, VecT):
        return f"kcv{t.bits // 8}"
    raise Unsupported(f"no C type for {t}")


def _lit(v: int, t: Type) -> str:
    if isinstance(t, IntT) and not t.signed:
        return f"UINT64_C({v & ((1 << 64) - 1)})"
    if v == -(1 << 63):
        return "INT64_MIN"
    return f"INT64_C({v})"


@dataclass
class _Access:
    """A storage element as C: `ptr` points at its storage; `scalar` says how it is stored."""
    ptr: str
    scalar: Scalar
    store: Optional[Store]
    tracked: bool = False  # a memory whose blocks carry ready times
    index: str = ""
    site: int = 0  # id() of the memory index expression (loops.Region)
    dyn: Optional[tuple[int, str]] = None  # a register reached through a computed index: (tracking slot, C index)
    cached: bool = False  # an element of the memory the data cache caches


class CGen:
    def __init__(self, spec: Spec, prefix: Optional[str] = None):
        self.spec = spec
        self.L: Layout = layout(spec)
        self.prefix = prefix or f"kc_{c_ident(spec.isa.name)}"
        self.encs: dict[str, Encoding] = encodings(spec)
        self.names = list(self.encs)  # operation numbers: 1.. in this order; 0 is "illegal"
        self.opnum = {n: i + 1 for i, n in enumerate(self.names)}
        self.max_ops = max([len(e.insn.operands) for e in self.encs.values()] + [1])
        self.bundles = bundle_formats(spec)
        self.pcrel_next = pcrel_base(spec) == "next"
        self.vec_sizes: set[int] = set()
        self.canon_formats: set[str] = set()  # float formats of vector lanes that get canonical NaNs
        self.timing = spec.isa.timing
        self.units = [u.name for u in self.timing.units] if self.timing and self.timing.model != "vliw" else []
        self.props = {p.name: spec.params_eval(p.value) for p in self.timing.props} if self.timing else {}
        self.tracked = self._tracked_memories()
        # registers reached through a computed index (vector register groups): tracked per instruction
        self.dyn_files, self.dyn_fns, self.dyn_insns = self._dynamic_registers()
        self.tstate: dict[str, tuple[int, int]] = {}  # timing scratch words (s->tstate): name -> (offset, size)
        self.tstate_keep: list[tuple[int, int]] = []  # the ranges a warm reset keeps
        if self.dyn_files:  # per file, the registers read and written (bit masks) by the last tracked instruction
            self._tstate("trk", 2 * len(self.dyn_files))
        for f in self.dyn_files:
            self._tstate(f"rend_{f}", self.L.stores[f].shape[0])  # per register: last cycle an issued reader reads it
        self._trk_declared = False  # the instruction being compiled holds `trk` (the masks of what it touches)
        # caches and branch predictor (kcgen.sim.structures)
        self.caches, self.predictor, self.load_extra = structures.read(spec, self._tstate)
        self.dcache = next((c for c in self.caches if c.serves == "data"), None)
        self.icache = next((c for c in self.caches if c.serves == "fetch"), None)
        if self.icache is not None:
            self._tstate("fetch_line", 1, keep=True)  # the line of the last fetch (+ 1): the same line hits
        self.cache_insns = self._memory_users(self.dcache.memory) if self.dcache else set()
        self._tmp = 0
        self._region = None  # the loops.Region being compiled (its fast version when _plan is set)
        self._no_regions = False  # compile every statement as the plain checked code
        self._regions = 0  # fast versions made in the current instruction
        self._side_by_side = False
        self._fmaf = False  # some semantics compute a fused multiply-add (b_fma on f32, b_ieee_fma)
        self._plan = None
        self._anchors: dict = {}  # id(for statement) -> reductions computed at the start of its body
        self.functions = {}
        self._work: Optional[Work] = None  # bounds of the instruction being compiled (polls of long loops)
        self._work_mult = 1  # iterations of the loops around the code being compiled
        self._polled = False  # an enclosing loop reads the clock often enough
        self._fn_work: dict[str, int] = {}
        self.max_work = 0  # the most loop iterations one instruction may run (kcgen.sim.work)
        self.max_work_unpolled = 0  # the same over the instructions whose loops never read the clock
        self.polled_insns: list[str] = []  # instructions with loops that read the clock themselves

    # ---- analysis --------------------------------------------------------------------------------
    def _tracked_memories(self) -> set[str]:
        """Memories written by instructions whose results take more than a cycle: readers wait on them."""
        out = set()
        for name, s in self.spec.instructions.items():
            lat = s.insn.latency if s.insn.latency is not None else s.insn.cycles
            slow = self._unit(s.insn) is not None and self._unit(s.insn).is_async
            if lat is not None:
                try:
                    slow = slow or evaluate(lat, lambda n: self.spec.params[n.id]) > 1
                except Exception:  # depends on operands: assume slow
                    slow = True
            if slow:
                out |= _written_storage(s.insn.semantics) & {m.name for m in self.spec.isa.memories}
        return out

    def _unit(self, insn: ir.Instruction):
        if not self.timing:
            return None
        return next((u for u in self.timing.units if u.name == insn.unit), None)

    def _tstate(self, name: str, size: int, keep: bool = False) -> int:
        """Reserve `size` words of timing scratch (cleared at reset; `keep`: not at a warm reset, which
        keeps caches and predictor trained); returns the offset."""
        off = sum(n for _, n in self.tstate.values())
        self.tstate[name] = (off, size)
        if keep:
            self.tstate_keep.append((off, size))
        return off

    def _reg_file(self, name: str) -> Optional[str]:
        """The register file a register file or a group of one part (`group v[n]`) is stored in, when
        it has at most 64 registers (one bit each in a mask), else None."""
        if name in self.L.groups:
            g = self.L.groups[name]
            if len(g.parts) != 1 or not (isinstance(g.parts[0][1], ir.Name) and g.parts[0][1].id == "n"):
                return None
            name = g.parts[0][0]
        st = self.L.stores.get(name)
        return name if st is not None and st.kind == "reg" and st.shape[0] <= 64 else None

    def _dynamic_registers(self) -> tuple[list[str], set[str], set[str]]:
        """Register files some semantics reach through a computed index (not `FILE[operand]`), the
        functions and instructions that do (directly or through a function): their reads and writes
        are recorded as they run and the timing model waits on them (in-order and ooo models)."""
        if not self.timing or self.timing.model not in ("inorder", "ooo"):
            return [], set(), set()
        files: list[str] = []

        def scan(stmts_or_expr, operands) -> set[str]:
            found = set()
            nodes = _walk(stmts_or_expr) if isinstance(stmts_or_expr, (list, tuple)) else _walk_expr(stmts_or_expr)
            for n in nodes:
                if isinstance(n, ir.Index) and isinstance(n.base, ir.Name):
                    f = self._reg_file(n.base.id)
                    if f is not None and not (isinstance(n.index, ir.Name) and n.index.id in operands):
                        found.add(f)
            return found

        calls = lambda body: {n.func for n in (_walk(body) if isinstance(body, (list, tuple)) else _walk_expr(body))  # noqa: E731
                              if isinstance(n, ir.Call)}
        fns = {f.name: f for f in self.spec.isa.functions}
        direct = {name: scan(f.body, ()) for name, f in fns.items()}
        dyn_fns = self._callers({n for n, found in direct.items() if found})  # a caller of one tracks too
        insns = set()
        for name, ins in self.spec.instructions.items():
            found = scan(ins.insn.semantics, set(ins.operands))
            if found or calls(ins.insn.semantics) & dyn_fns:
                insns.add(name)
            for f in found:
                if f not in files:
                    files.append(f)
        for name in dyn_fns:
            for f in sorted(direct[name]):
                if f not in files:
                    files.append(f)
        return files, dyn_fns, insns

    def _callers(self, seeds: set[str]) -> set[str]:
        """The functions in `seeds` and every function that calls one of them, directly or not."""
        fns = {f.name: f for f in self.spec.isa.functions}
        out = set(seeds)
        grown = True
        while grown:
            grown = False
            for name, f in fns.items():
                if name not in out and any(isinstance(c, ir.Call) and c.func in out for c in _walk_expr(f.body)):
                    out.add(name)
                    grown = True
        return out

    def _memory_users(self, mem: str) -> set[str]:
        """Instructions whose semantics (or the functions they call) access memory `mem`."""
        def touches(nodes) -> bool:
            return any((isinstance(n, ir.Index) and isinstance(n.base, ir.Name) and n.base.id == mem) or
                       (isinstance(n, ir.Call) and n.func in ("load", "store") and n.args and
                        isinstance(n.args[0], ir.Name) and n.args[0].id == mem) for n in nodes)
        users = self._callers({f.name for f in self.spec.isa.functions if touches(_walk_expr(f.body))})
        return {name for name, ins in self.spec.instructions.items()
                if touches(_walk(ins.insn.semantics)) or
                any(isinstance(c, ir.Call) and c.func in users for c in _walk(ins.insn.semantics))}

    def _track(self, acc: _Access, write: bool) -> str:
        """The C statement recording that `acc` (a register reached through a computed index) is read/written."""
        slot, idx = acc.dyn
        return f"trk[{2 * slot + int(write)}] |= UINT64_C(1) << ({idx});"

    # ---- naming ----------------------------------------------------------------------------------
    def tmp(self, stem: str = "t") -> str:
        self._tmp += 1
        return f"{stem}{self._tmp}"

    @property
    def P(self) -> str:
        return self.prefix

    # ---- value conversions ------------------------------------------------------------------------
    def wrap(self, code: str, t: Type) -> str:
        """`code` (any integer C expression) wrapped to type t."""
        if isinstance(t, IntLitT):
            return f"(int64_t)({code})"
        if isinstance(t, BoolT):
            return f"(({code}) != 0)"
        assert isinstance(t, IntT), t
        if t.signed:
            return f"(int64_t)({code})" if t.width == 64 else f"kc_sx((uint64_t)({code}), {t.width})"
        return f"(uint64_t)({code})" if t.width == 64 else f"((uint64_t)({code}) & UINT64_C({(1 << t.width) - 1:#x}))"

    def round(self, code: str, t: Type) -> str:
        if isinstance(t, FloatLitT):
            return code
        fmt = self.L.floats[t.name]
        if fmt.native == "double":
            return code
        if fmt.native == "float":
            return f"(double)(float)({code})"
        return f"kc_round_{t.name}({code})"

    def conv(self, code: str, src: Type, dst: Type) -> str:
        """Convert a computed value between semantic types (implicit coercions and T(e))."""
        if src == dst or isinstance(dst, VecT):
            return code
        if isinstance(dst, BoolT):
            return f"(({code}) != 0)"
        if isinstance(dst, (IntT, IntLitT)):
            if isinstance(src, (FloatT, FloatLitT)):
                if isinstance(dst, IntLitT):
                    return f"kc_f2i({code}, 64)"
                return f"kc_f2i({code}, {dst.width})" if dst.signed else f"kc_f2u({code}, {dst.width})"
            if isinstance(src, BoolT):
                return f"({comp_ctype(dst)})({code})"
            if isinstance(src, IntT) and isinstance(dst, IntT) and src.signed == dst.signed and src.width <= dst.width:
                return code
            return self.wrap(code, dst)
        if isinstance(dst, FloatT):
            if isinstance(src, (IntT, IntLitT, BoolT)):
                return self.round(f"(double)({code})", dst)
            if isinstance(src, FloatT) and self.L.floats[dst.name].native == "double":
                return code
            return self.round(code, dst)
        if isinstance(dst, FloatLitT):
            return f"(double)({code})"
        raise Unsupported(f"cannot convert {src} to {dst}")

    def load_scalar(self, ptr: str, sc: Scalar) -> str:
        """Read a stored element as a computed value."""
        t = sc.type
        if isinstance(t, BoolT):
            return f"(int)(*{ptr})"
        if isinstance(t, IntT):
            return f"({comp_ctype(t)})(*{ptr})"
        if sc.fmt.native:
            return f"(double)(*{ptr})"
        return f"kc_unpack_{t.name}(*{ptr})"

    def store_scalar(self, value: str, sc: Scalar) -> str:
        t = sc.type
        if isinstance(t, FloatT) and not sc.fmt.native:
            return f"({sc.ctype})kc_pack_{t.name}({value})"
        if isinstance(t, FloatT):  # NaNs are stored canonical: their payload is not architectural
            return f"kc_canon_{'f32' if sc.fmt.native == 'float' else 'f64'}({value})"
        return f"({sc.ctype})({value})"

    # ---- expressions ---------------------------------------------------------------------------------
    def expr(self, e: ir.Expr, want: Optional[Type] = None) -> str:
        """C for e, converted to `want` when given."""
        t = self.body.type(e)
        code = getattr(self, "e_" + type(e).__name__)(e, t)
        return self.conv(code, t, want) if want is not None else code

    def e_Num(self, e: ir.Num, t):
        return _lit(e.value, t)

    def e_FloatLit(self, e: ir.FloatLit, t):
        v = float(e.text)
        return repr(v) if v == v and abs(v) != float("inf") else ("NAN" if v != v else ("INFINITY" if v > 0 else "-INFINITY"))

    def e_Name(self, e: ir.Name, t):
        n = e.id
        if n in self.locals:
            return self.locals[n]
        if n in self.body.operands:
            k = self.operand_index[n]
            return f"(({comp_ctype(t)})d->a[{k}])"
        if n in self.spec.params:
            return _lit(self.spec.params[n], t)
        if n in ("true", "false"):
            return "1" if n == "true" else "0"
        if n == "inf":
            return "INFINITY"
        if n == "nan":
            return "NAN"
        if n == "pc":
            return "pc"
        acc = self.access(e)
        return self.read(acc, t)

    def read(self, acc: _Access, t: Type) -> str:
        if acc.dyn is not None:
            self.pre.append(self._track(acc, False))
        if acc.cached:
            self.pre.append(f"kc_daccess(s, {acc.index}, 0);")
        if isinstance(t, VecT):
            self.vec_sizes.add(t.bits // 8)
            return self.canon_vec(f"(*(const kcv{t.bits // 8} *)({acc.ptr}))", t)
        code = self.load_scalar(acc.ptr, acc.scalar)
        if acc.tracked and not (self._plan is not None and acc.site in self._plan.hoisted):
            return f"(kc_needl(need, s->b_{acc.store.name}[({acc.index}) >> {BLOCK_SHIFT}]), {code})"
        return code

    def e_Index(self, e: ir.Index, t):
        root, path = ir.index_path(e)
        if isinstance(root, ir.Name) and root.id not in self.locals and \
                (root.id in self.L.stores or root.id in self.L.groups):
            return self.read(self.access(e), t)
        # indexing a vector value (a local or a bitcast): lane i of its bytes
        base_t = self.body.type(e.base)
        assert isinstance(base_t, VecT)
        base = self.expr(e.base)
        sc = self.L_scalar(base_t.elem)
        idx = self.checked_index(self.expr(e.index, IntLitT()), base_t.count, "vector lane")
        holder = self.tmp("v")
        self.pre.append(f"kcv{base_t.bits // 8} {holder} = {base};")
        return self.load_scalar(f"(({sc.ctype} *){holder}.b + {idx})", sc)

    def canon_vec(self, code: str, t: VecT) -> str:
        """A vector value with float lanes, NaN lanes made canonical (vector values are compared and
        stored as bits, and a NaN's payload is not architectural)."""
        if not isinstance(t.elem, FloatT):
            return code
        holder = self.tmp("cv")
        size = t.bits // 8
        self.vec_sizes.add(size)
        self.pre.append(f"kcv{size} {holder} = {code}; kc_canon_lanes_{t.elem.name}({holder}.b, {t.count});")
        self.canon_formats.add(t.elem.name)
        return holder

    def L_scalar(self, t: Type) -> Scalar:
        from .layout import scalar_storage
        return scalar_storage(t, self.L.floats)

    def checked_index(self, code: str, n: int, what: str) -> str:
        return f"kc_idx(s, (uint64_t)({code}), {n}, {c_string(what)})"

    def index_c(self, ix: ir.Expr, n: int, what: str) -> str:
        """An index expression, bounds-checked unless the fast version of a loop nest proved it."""
        fast = self._plan.fast.get(id(ix)) if self._plan is not None else None
        if fast is not None:
            return render_index(fast[0], fast[1], self.locals, self._region.vars)
        return self.checked_index(self.expr(ix, IntLitT()), n, what)

    def access(self, e: ir.Expr) -> _Access:
        """Where a register element, lane, state element or memory element lives."""
        root, path = ir.index_path(e)
        name = root.id
        if name in self.L.groups:
            return self.group_access(name, path)
        st = self.L.stores[name]
        dims = st.shape
        lanes = 0
        if isinstance(st.type, VecT):
            lanes = dims[-1]
            dims = dims[:-1]
        if st.kind == "mem":
            tmp = self.tmp("i")
            self.pre.append(f"uint64_t {tmp} = {self.index_c(path[0], dims[0], name)};")
            return _Access(f"(s->{st.cname} + {tmp})", st.elem, st, name in self.tracked, tmp, id(path[0]),
                           cached=self.dcache is not None and name == self.dcache.memory)
        flat = None
        dyn = None
        for k, dim in enumerate(dims):
            if k >= len(path):
                break
            ix = path[k]
            if st.kind == "reg" and k == 0 and self.operand_in_range(ix, st):
                code = f"d->a[{self.operand_index[ix.id]}]"
            else:
                code = self.index_c(ix, dim, name)
                if st.kind == "reg" and k == 0 and name in self.dyn_files and self._trk_declared:
                    r = self.tmp("r")
                    self.pre.append(f"uint64_t {r} = {code};")
                    code = r
                    dyn = (self.dyn_files.index(name), r)
            flat = code if flat is None else f"({flat}) * {dim} + {code}"
        flat = flat or "0"
        rest = path[len(dims):]
        if lanes:
            if rest:
                lane = self.checked_index(self.expr(rest[0], IntLitT()), lanes, f"{name} lane")
                return _Access(f"(s->{st.cname} + ({flat}) * {lanes} + {lane})", st.elem, st, dyn=dyn)
            return _Access(f"(s->{st.cname} + ({flat}) * {lanes})", st.elem, st, dyn=dyn)
        return _Access(f"(s->{st.cname} + {flat})", st.elem, st, dyn=dyn)

    def operand_in_range(self, ix: ir.Expr, st: Store) -> bool:
        if not (isinstance(ix, ir.Name) and ix.id in self.body.operands and ix.id not in self.locals):
            return False
        spec = self.insn_operands.get(ix.id)
        bits = self.field_bits.get(ix.id, 0)  # what the decoder can deliver: the field's width
        return spec is not None and spec.kind == "reg" and spec.regfile == st.name and \
            spec.offset + (1 << bits) <= st.shape[0]

    def group_access(self, name: str, path) -> _Access:
        g = self.L.groups[name]
        n = self.checked_index(self.expr(path[0], IntLitT()), g.count, name)
        tmp = self.tmp("g")
        self.pre.append(f"uint64_t {tmp} = {n};")
        t = g.type
        file = self._reg_file(name)
        dyn = (self.dyn_files.index(file), tmp) if file in self.dyn_files and self._trk_declared else None
        if isinstance(t, VecT) and len(path) > 1:
            sc = self.L_scalar(t.elem)
            lane = self.checked_index(self.expr(path[1], IntLitT()), t.count, f"{name} lane")
            return _Access(f"(({sc.ctype} *)kc_grp_{name}(s, {tmp}, ({lane}) * {sc.dtype.itemsize}))", sc, None, dyn=dyn)
        # the whole register: bytes gathered into a container, written back by group_store
        holder = self.tmp("gv")
        size = t.bits // 8
        self.vec_sizes.add(size)
        self.pre.append(f"kcv{size} {holder}; kc_gget_{name}(s, {tmp}, {holder}.b);")
        sc = self.L_scalar(t) if not isinstance(t, VecT) else None
        return _Access(f"(&{holder})" if sc is None else f"(({sc.ctype} *){holder}.b)", sc, None,
                       index=f"{tmp}:{holder}", dyn=dyn)

    def e_Slice(self, e: ir.Slice, t):
        base_t = self.body.type(e.base)
        v = self.expr(e.base)
        hi = self.expr(e.hi, IntLitT())
        lo = self.expr(e.lo, IntLitT())
        return f"kc_slice((uint64_t)({v}) & {self.mask(base_t)}, {hi}, {lo})"

    def mask(self, t: Type) -> str:
        w = t.width if isinstance(t, IntT) else 64
        return f"UINT64_C({(1 << w) - 1:#x})"

    def e_Unary(self, e: ir.Unary, t):
        v = self.expr(e.operand, t if e.op != "!" else None)
        if e.op == "!":
            return f"(!({v}))"
        if is_float(t):
            return f"(-({v}))"
        if e.op == "-":
            return self.wrap(f"UINT64_C(0) - (uint64_t)({v})", t)
        return self.wrap(f"~(uint64_t)({v})", t)

    def e_Binary(self, e: ir.Binary, t):
        op = e.op
        lt, rt = self.body.type(e.left), self.body.type(e.right)
        if op in ("&&", "||"):
            a = self.expr(e.left)
            r_pre, b = self.sub_expr(e.right, None)
            if not r_pre:
                return f"({a} {op} {b})"
            r = self.tmp("b")  # the right side has checks of its own: evaluate it only when needed
            self.pre.append(f"int {r} = {a};")
            self.pre.append(f"if ({'' if op == '&&' else '!'}{r}) {{ {' '.join(r_pre)} {r} = {b}; }}")
            return r
        if op == "**":
            return _lit(self.spec.params_eval(e), t)
        if op in ("<<", ">>"):
            a = self.expr(e.left, t)
            b = self.expr(e.right)
            amount = f"(uint64_t)({b})"
            w = t.width if isinstance(t, IntT) else 64
            signed = isinstance(t, IntLitT) or t.signed
            if op == "<<":
                return self.wrap(f"kc_shl((uint64_t)({a}), {amount}, {w})", t)
            return f"kc_shr_s({a}, {amount})" if signed else f"kc_shr_u({a}, {amount})"
        if isinstance(t, BoolT) and op in ("&", "|", "^", "==", "!=") and lt == rt:
            return f"({self.expr(e.left)} {op} {self.expr(e.right)})"
        # numeric: both sides in the unified type
        u = t if not isinstance(t, BoolT) else _unified(lt, rt)
        a, b = self.expr(e.left, u), self.expr(e.right, u)
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        if is_float(u) and not isinstance(u, FloatLitT) and self.L.floats[u.name].native == "float" and op in ("+", "-", "*", "/"):
            # f32 values are exact in float, and a float operation is the correctly rounded result:
            # what rounding the double result gives (53 >= 2 * 24 + 2 bits: double rounding is innocuous)
            return f"(double)((float)({a}) {op} (float)({b}))"
        if is_float(u):
            return self.round(f"({a}) {op} ({b})", u)
        if op in ("/", "%"):
            signed = isinstance(u, IntLitT) or u.signed
            fn = ("kc_div_s" if op == "/" else "kc_rem_s") if signed else ("kc_div_u" if op == "/" else "kc_rem_u")
            return self.wrap(f"{fn}(s, {a}, {b})", u)
        return self.wrap(f"(uint64_t)({a}) {op} (uint64_t)({b})", u)

    def e_Cond(self, e: ir.Cond, t):
        c = self.expr(e.cond)
        # both branches are evaluated only when taken: their side conditions go into the branch
        a_pre, a = self.sub_expr(e.then, t)
        b_pre, b = self.sub_expr(e.orelse, t)
        if not a_pre and not b_pre:
            return f"(({c}) ? ({a}) : ({b}))"
        r = self.tmp("c")
        self.pre.append(f"{comp_ctype(t)} {r};")
        self.pre.append(f"if ({c}) {{ {' '.join(a_pre)} {r} = {a}; }} else {{ {' '.join(b_pre)} {r} = {b}; }}")
        return r

    def sub_expr(self, e: ir.Expr, want: Optional[Type]) -> tuple[list[str], str]:
        outer = self.pre
        self.pre = []
        try:
            code = self.expr(e, want)
            return self.pre, code
        finally:
            self.pre = outer

    def e_Reduce(self, e: ir.Reduce, t):
        if self._plan is not None and id(e) in self._plan.interchange:
            ic = self._plan.interchange[id(e)]  # computed before the loops around it (reduce_ahead)
            return self._reduce_value(f"{ic.acc}{self._acc_index(ic)}", e, t)
        acc = self.tmp("acc")
        var = self.tmp("r_" + c_ident(e.var))
        lo, hi = self.expr(e.lo, IntLitT()), self.expr(e.hi, IntLitT())
        hi_v = self.tmp("hi")
        self.pre.append(f"{self._reduce_ctype(e, t)} {acc} = {_reduce_init(e.op, t)};")
        self.pre.append(f"int64_t {hi_v} = {hi};")
        poll, saved = self._loop_enter(e.var, e.lo, e.hi, lambda w: w.reduce_iteration(e))
        try:
            body_pre, step = self._reduce_body(e, t, var, acc)
        finally:
            self._loop_exit(e.var, saved)
        body_pre = ([poll] if poll else []) + body_pre
        self.pre.append(f"for (int64_t {var} = {lo}; {var} < {hi_v}; {var}++) {{ {' '.join(body_pre)} {acc} = {step}; }}")
        return self._reduce_value(acc, e, t)

    def _loop_enter(self, var: str, lo: ir.Expr, hi: ir.Expr, per_iteration) -> tuple[Optional[str], tuple]:
        """Entering a loop of the instruction being compiled: the statement that reads the wall
        clock once per iteration, when the nest may run POLL_WORK iterations or more and no loop
        around it reads the clock often enough already (else None); and what _loop_exit restores."""
        w = self._work
        saved = (self._work_mult, self._polled, None)
        if w is None:
            return None, saved
        trips = w.trips(lo, hi)
        per = per_iteration(w)
        poll = None
        if not self._polled and self._work_mult * trips * per >= POLL_WORK:
            poll = f"if (__builtin_expect((s->poll_left -= {min(per, POLL_WORK)}) < 0, 0)) kc_poll(s);"
            self._polled = per <= POLL_WORK >> 8  # inner loops need not read it again
            if self.insn_name not in self.polled_insns:
                self.polled_insns.append(self.insn_name)
        self._work_mult *= max(trips, 1)
        return poll, (saved[0], saved[1], (var, w.bind(var, hi)))

    def _loop_exit(self, var: str, saved: tuple) -> None:
        self._work_mult, self._polled, bound = saved
        if bound is not None and self._work is not None:
            self._work.unbind(*bound)

    def _native_f32_sum(self, e: ir.Reduce, t) -> bool:
        # An f32 sum accumulates in a C float: a float add is the correctly rounded sum, exactly what
        # rounding the double sum to float gives, without two conversions on the carried chain (the
        # body is already a float-representable value, so its cast is exact).
        return e.op == "sum" and isinstance(t, FloatT) and self.L.floats[t.name].native == "float"

    def _reduce_ctype(self, e: ir.Reduce, t) -> str:
        return "float" if self._native_f32_sum(e, t) else comp_ctype(t)

    def _reduce_value(self, acc: str, e: ir.Reduce, t) -> str:
        return f"((double){acc})" if self._native_f32_sum(e, t) else acc

    def _reduce_body(self, e: ir.Reduce, t, var: str, acc: str) -> tuple[list[str], str]:
        """The body's side statements and the new accumulator value, with e.var bound to `var`."""
        saved = self.locals.get(e.var)
        self.locals[e.var] = var
        body_pre, body = self.sub_expr(e.body, t)
        if saved is None:
            del self.locals[e.var]
        else:
            self.locals[e.var] = saved
        if self._native_f32_sum(e, t):
            step = f"{acc} + (float)({body})"
        elif e.op == "sum":
            step = self.round(f"{acc} + {body}", t) if is_float(t) else self.wrap(f"(uint64_t){acc} + (uint64_t)({body})", t)
        elif e.op == "prod":
            step = self.round(f"{acc} * {body}", t) if is_float(t) else self.wrap(f"(uint64_t){acc} * (uint64_t)({body})", t)
        elif e.op in ("max", "min"):
            step = self._minmax(e.op, acc, body, t)
        else:
            cop = {"and": "&", "or": "|", "xor": "^"}[e.op]
            step = f"({acc} {cop} ({body}))" if isinstance(t, BoolT) else self.wrap(f"(uint64_t){acc} {cop} (uint64_t)({body})", t)
        return body_pre, step

    def _acc_index(self, ic) -> str:
        out = ""
        for f in ic.loops:
            v = self._region.vars[f.var]
            out += f"[{self.locals[f.var]}{f' - {v.lo}' if v.lo else ''}]"
        return out

    def reduce_ahead(self, ic, ind: str) -> list[str]:
        """The sums of reduction ic.node for every iteration of the loops ic.loops, computed before
        them with the reduction's own loop outermost: the sums run side by side, and each still adds
        its terms in order from the low bound."""
        e = ic.node
        t = self.body.type(e)
        self._side_by_side = True
        outer = self.pre
        self.pre = []
        lo, hi = self.expr(e.lo, IntLitT()), self.expr(e.hi, IntLitT())
        lines = self.pre
        self.pre = outer
        vs = [self._region.vars[f.var] for f in ic.loops]
        ic.acc = self.tmp("kc_sums")
        dims = "".join(f"[{v.hi - v.lo}]" for v in vs)
        var = self.tmp("r_" + c_ident(e.var))
        hi_v = self.tmp("hi")
        saved = dict(self.locals)
        names = []
        for f in ic.loops:
            self.locals[f.var] = f"l_{c_ident(f.var)}"
            names.append(self.locals[f.var])
        cell = f"{ic.acc}{self._acc_index(ic)}"
        heads = [f"for (int64_t {n} = {v.lo}; {n} < {v.hi}; {n}++)" for n, v in zip(names, vs)]
        body_pre, step = self._reduce_body(e, t, var, cell)
        self.locals = saved
        count = 1
        for v in vs:
            count *= v.hi - v.lo
        out = [f"/* the {count} {e.op}s over {e.var} of the loops below, {e.var} outermost so that they run side by side; "
               f"each still takes its terms in order from {e.var} = low bound */"]
        out += lines + [f"{self._reduce_ctype(e, t)} {ic.acc}{dims};",
                        " ".join(heads) + f" {cell} = {_reduce_init(e.op, t)};",
                        f"int64_t {hi_v} = {hi};",
                        f"for (int64_t {var} = {lo}; {var} < {hi_v}; {var}++) {{"]
        inner = "    "
        outer_n = 1
        for k, (h, v) in enumerate(zip(heads, vs)):
            outer_n *= v.hi - v.lo
            if k < len(heads) - 1 and outer_n <= self.UNROLL_SUMS:
                # the outer loops unrolled: the sums stay in registers (gcc vectorises the innermost loop)
                out.append(f"{inner}#pragma GCC unroll {v.hi - v.lo}")
            out.append(inner + h + " {")
            inner += "    "
        out += [inner + p for p in body_pre] + [f"{inner}{cell} = {step};"]
        for _ in heads:
            inner = inner[:-4]
            out.append(inner + "}")
        out.append("}")
        return [ind + x for x in out]

    def _minmax(self, op: str, a: str, b: str, t: Type) -> str:
        if is_float(t):
            return f"f{op}({a}, {b})"
        signed = isinstance(t, IntLitT) or t.signed
        return f"kc_{op}_{'s' if signed else 'u'}({a}, {b})"

    # ---- calls --------------------------------------------------------------------------------------
    def e_Call(self, e: ir.Call, t):
        f = e.func
        if f in self.functions:
            fn = self.functions[f]
            args = ", ".join(self.expr(a, self.spec.context.resolve_type(p.type)) for a, p in zip(e.args, fn.params))
            trk = (", trk" if self._trk_declared else ", 0") if self.dyn_files else ""
            return f"fn_{f}(s, d, pc, need{trk}{', ' + args if args else ''})"
        if f in ("store",):
            raise AssertionError("store is a statement")
        conv_t = self.spec.context.resolve_type(ir.TypeRef(f)) if f not in self.locals else None
        if conv_t is not None and not hasattr(self, "b_" + f):
            return self.conv(self.expr(e.args[0]), self.body.type(e.args[0]), conv_t)
        if f in MATH_UNARY:
            x = self.expr(e.args[0], t)
            cfn = {"recip": None}.get(f, f)
            return self.round(f"1.0 / ({x})" if cfn is None else f"{cfn}({x})", t)
        return getattr(self, "b_" + f)(e, t)

    def b_min(self, e, t):
        return self._minmax("min", self.expr(e.args[0], t), self.expr(e.args[1], t), t)

    def b_max(self, e, t):
        return self._minmax("max", self.expr(e.args[0], t), self.expr(e.args[1], t), t)

    def b_abs(self, e, t):
        x = self.expr(e.args[0], t)
        if is_float(t):
            return f"fabs({x})"
        return self.wrap(f"kc_abs({x})", t) if (isinstance(t, IntLitT) or t.signed) else x

    def b_fma(self, e, t):
        """One rounding to t, not two (docs/simulator.md): C's fmaf for f32 (one instruction where
        the run loop is also built for x86-64-v3), the product exact in double and the sum rounded
        to odd for narrower formats, fma for f64."""
        a, b, c = (self.expr(x, t) for x in e.args)
        fmt = self.L.floats[t.name] if isinstance(t, FloatT) else None
        if fmt is not None and fmt.native == "float":
            self._fmaf = True
            return f"(double)fmaf((float)({a}), (float)({b}), (float)({c}))"
        if fmt is not None and fmt.exact_products:
            return self.round(f"kc_fma_odd({a}, {b}, {c})", t)
        return self.round(f"fma({a}, {b}, {c})", t)

    def b_ldexp(self, e, t):
        return self.round(f"ldexp({self.expr(e.args[0], t)}, kc_clampi({self.expr(e.args[1], IntLitT())}))", t)

    def b_ilogb(self, e, t):
        return f"(int64_t)kc_ilogb({self.expr(e.args[0])})"

    # ---- ieee_*: IEEE 754 on bit patterns in RISC-V's rounding modes (native/kc_ieee.h) -------------
    def _ieee_flagged(self, call: str, ctype: str) -> str:
        """`call` (given the flags' address as `&kc_fl`) with its flags OR-ed into the ieee_flags
        state (dropped when the ISA has none)."""
        name = self.spec.ieee_flags_state
        if name is None:
            return f"({{ unsigned kc_fl = 0; {ctype} kc_r = {call}; kc_r; }})"
        # starting from the flags accrued so far spares the host's flag register a write (kc_ieee.h)
        flags = f"*(s->{self.L.stores[name].cname})"
        return f"({{ unsigned kc_fl = (unsigned){flags}; {ctype} kc_r = {call}; {flags} |= kc_fl; kc_r; }})"

    def _ieee_bits(self, arg) -> tuple[str, int]:
        at = self.body.type(arg)
        mask = "UINT64_C(0xffffffff)" if at.width == 32 else "UINT64_C(0xffffffffffffffff)"
        return f"((uint64_t)({self.expr(arg)}) & {mask})", at.width

    def _ieee_op(self, e, t, op: str, n: int) -> str:
        args = [self._ieee_bits(a) for a in e.args[:n]]
        w = args[0][1]
        ops = [a for a, _ in args] + ["0"] * (3 - n)
        if n == 1:
            ops = [ops[0], "0", "0"]
        mode = f"(unsigned)({self.expr(e.args[n])})"
        return self.wrap(self._ieee_flagged(f"kc_ieee_op({op}, {', '.join(ops)}, {w}, {mode}, &kc_fl)", "uint64_t"), t)

    def b_ieee_add(self, e, t):
        return self._ieee_op(e, t, "KC_ADD", 2)

    def b_ieee_sub(self, e, t):
        return self._ieee_op(e, t, "KC_SUB", 2)

    def b_ieee_mul(self, e, t):
        return self._ieee_op(e, t, "KC_MUL", 2)

    def b_ieee_div(self, e, t):
        return self._ieee_op(e, t, "KC_DIV", 2)

    def b_ieee_sqrt(self, e, t):
        return self._ieee_op(e, t, "KC_SQRT", 1)

    def b_ieee_fma(self, e, t):
        self._fmaf = True  # the x86-64-v3 run loop makes the host's fma one instruction (run_clone)
        return self._ieee_op(e, t, "KC_FMA", 3)

    def _ieee_min_max(self, e, t, want_max: int) -> str:
        (a, w), (b, _) = self._ieee_bits(e.args[0]), self._ieee_bits(e.args[1])
        return self.wrap(self._ieee_flagged(f"kc_ie_min_max({a}, {b}, {w}, {want_max}, &kc_fl)", "uint64_t"), t)

    def b_ieee_min(self, e, t):
        return self._ieee_min_max(e, t, 0)

    def b_ieee_max(self, e, t):
        return self._ieee_min_max(e, t, 1)

    def _ieee_compare(self, e, kind: int) -> str:
        (a, w), (b, _) = self._ieee_bits(e.args[0]), self._ieee_bits(e.args[1])
        return self._ieee_flagged(f"kc_ie_compare({a}, {b}, {w}, {kind}, &kc_fl)", "int")

    def b_ieee_eq(self, e, t):
        return self._ieee_compare(e, 0)

    def b_ieee_lt(self, e, t):
        return self._ieee_compare(e, 1)

    def b_ieee_le(self, e, t):
        return self._ieee_compare(e, 2)

    def b_ieee_to_int(self, e, t):
        a, w = self._ieee_bits(e.args[0])
        mode = f"(unsigned)({self.expr(e.args[1])})"
        call = f"kc_ie_to_int({a}, {w}, {mode}, {t.width}, {int(t.signed)}, &kc_fl)"
        return self.wrap(self._ieee_flagged(call, "uint64_t"), t)

    def b_ieee_from_int(self, e, t):
        xt = self.body.type(e.args[0])
        x = self.tmp("x")
        self.pre.append(f"{comp_ctype(xt)} {x} = {self.expr(e.args[0])};")
        mode = f"(unsigned)({self.expr(e.args[1])})"
        if xt.signed:  # the magnitude of the most negative value is its own bit pattern, unsigned
            mag, neg = f"({x} < 0 ? (uint64_t)0 - (uint64_t){x} : (uint64_t){x})", f"({x} < 0)"
        else:
            mag, neg = f"(uint64_t){x}", "0"
        return self.wrap(self._ieee_flagged(f"kc_ie_from_int({mag}, {neg}, {t.width}, {mode}, &kc_fl)", "uint64_t"), t)

    def b_ieee_convert(self, e, t):
        a, w = self._ieee_bits(e.args[0])
        mode = f"(unsigned)({self.expr(e.args[1])})"
        return self.wrap(self._ieee_flagged(f"kc_ie_convert({a}, {w}, {t.width}, {mode}, &kc_fl)", "uint64_t"), t)

    def b_isnan(self, e, t):
        return f"isnan({self.expr(e.args[0])})"

    def b_isinf(self, e, t):
        return f"isinf({self.expr(e.args[0])})"

    def b_bit(self, e, t):
        x = self.expr(e.args[0])
        return f"kc_bit((uint64_t)({x}) & {self.mask(self.body.type(e.args[0]))}, (uint64_t)({self.expr(e.args[1])}))"

    def _count(self, e, t, fn):
        x = self.expr(e.args[0], t)
        return f"({comp_ctype(t)}){fn}((uint64_t)({x}) & {self.mask(t)}, {t.width})"

    def b_clz(self, e, t):
        return self._count(e, t, "kc_clz")

    def b_ctz(self, e, t):
        return self._count(e, t, "kc_ctz")

    def b_popcount(self, e, t):
        return self._count(e, t, "kc_popcount")

    def b_sext(self, e, t):
        st = self.body.type(e.args[0])
        x = self.expr(e.args[0])
        return self.wrap(f"kc_sx((uint64_t)({x}), {st.width})", t)

    def b_zext(self, e, t):
        st = self.body.type(e.args[0])
        return self.wrap(f"(uint64_t)({self.expr(e.args[0])}) & {self.mask(st)}", t)

    def b_sat(self, e, t):
        st = self.body.type(e.args[0])
        x = self.expr(e.args[0])
        if isinstance(t, IntT):
            if is_float(st):
                return self.conv(x, st, t)
            lo, hi = (-(1 << (t.width - 1)), (1 << (t.width - 1)) - 1) if t.signed else (0, (1 << t.width) - 1)
            if isinstance(st, IntT) and not st.signed:
                return f"({comp_ctype(t)})((uint64_t)({x}) > UINT64_C({hi}) ? UINT64_C({hi}) : (uint64_t)({x}))"
            return f"({comp_ctype(t)})kc_clamp_s((int64_t)({x}), {_lit(lo, IntLitT())}, {_lit(hi, IntLitT())})"
        fmt = self.L.floats[t.name]
        val = self.conv(x, st, FloatLitT()) if not is_float(st) else x
        if fmt.native == "double":
            return val
        if fmt.native == "float":
            return f"kc_sat_f32({val})"
        return f"kc_decode(&F_{t.name}, kc_encode(&F_{t.name}, {val}, 1))"

    def b_bitcast(self, e, t):
        st = self.body.type(e.args[0])
        x = self.expr(e.args[0])
        if isinstance(st, VecT) and isinstance(t, VecT):
            self.vec_sizes.add(t.bits // 8)
            return self.canon_vec(f"(*(const kcv{t.bits // 8} *)&({x}))", t)
        if isinstance(st, VecT):  # a vector's bytes as one scalar (lane 0 in the low bits)
            holder, raw = self.tmp("v"), self.tmp("raw")
            self.pre.append(f"kcv{st.bits // 8} {holder} = {x}; uint64_t {raw} = 0; "
                            f"memcpy(&{raw}, {holder}.b, {st.bits // 8});")
            return self.from_bits(raw, t)
        if isinstance(t, VecT):  # a scalar's bits spread over the lanes
            self.vec_sizes.add(t.bits // 8)
            holder, raw = self.tmp("v"), self.tmp("raw")
            self.pre.append(f"kcv{t.bits // 8} {holder}; uint64_t {raw} = {self.bits_of(x, st)}; "
                            f"memcpy({holder}.b, &{raw}, {t.bits // 8});")
            return self.canon_vec(holder, t)
        bits = self.bits_of(x, st)
        return self.from_bits(bits, t)

    def bits_of(self, code: str, t: Type) -> str:
        if isinstance(t, FloatT):
            fmt = self.L.floats[t.name]
            if fmt.native == "float":
                return f"(uint64_t)kc_f32_bits(kc_canon_f32({code}))"
            if fmt.native == "double":
                return f"kc_f64_bits(kc_canon_f64({code}))"
            return f"kc_pack_{t.name}({code})"
        return f"((uint64_t)({code}) & {self.mask(t)})"

    def from_bits(self, bits: str, t: Type) -> str:
        if isinstance(t, FloatT):
            fmt = self.L.floats[t.name]
            if fmt.native == "float":
                return f"(double)kc_bits_f32((uint32_t)({bits}))"
            if fmt.native == "double":
                return f"kc_bits_f64({bits})"
            return f"kc_unpack_{t.name}({bits})"
        if isinstance(t, BoolT):
            return f"(({bits}) != 0)"
        return self.wrap(bits, t)

    def b_load(self, e, t):
        mem = e.args[0].id
        st = self.L.stores[mem]
        k = t.bits // st.elem.type.bits
        addr = self.tmp("a")
        self.pre.append(f"uint64_t {addr} = kc_span(s, (uint64_t)({self.expr(e.args[2], IntLitT())}), {k}, "
                        f"{st.shape[0]}, {min(k, st.align)}, {c_string(mem)}, {c_string(f'load({mem}, {t}')});")
        nbytes = t.bits // 8
        raw = self.tmp("raw")
        self.pre.append(f"uint64_t {raw} = 0; memcpy(&{raw}, s->{st.cname} + {addr}, {nbytes});")
        if self.dcache is not None and mem == self.dcache.memory:
            self.pre.append(f"kc_daccess(s, {addr}, 0);")
        if mem in self.tracked:
            self.pre.append(f"kc_need_span(need, s->b_{mem}, {addr}, {k});")
        return self.from_bits(raw, t)

    def _mx(self, e) -> tuple[str, str]:
        """(element format, C function prefix) of an mx format: kc_mx_ (OCP) or kc_mx_plena_."""
        elem, _, _, rule = self.L.mxs[e.args[0].id]
        return elem, "kc_mx_" if rule == "ocp" else f"kc_mx_{rule}_"

    def b_mx_decode(self, e, t):
        elem, fn = self._mx(e)
        value = f"{fn}decode(&F_{elem}, (uint8_t)({self.expr(e.args[1])}), (uint8_t)({self.expr(e.args[2])}))"
        return self.round(value, t)  # an f32, as the language types it

    def b_mx_scale(self, e, t):
        elem, fn = self._mx(e)
        return f"(uint64_t){fn}scale(&F_{elem}, {self.expr(e.args[1], FloatLitT())})"

    def b_mx_encode(self, e, t):
        elem, fn = self._mx(e)
        return (f"(uint64_t){fn}encode(&F_{elem}, {self.expr(e.args[1], FloatLitT())}, "
                f"(uint8_t)({self.expr(e.args[2])}))")

    # ---- statements -----------------------------------------------------------------------------------
    def block(self, stmts, ind: str) -> list[str]:
        out = []
        for s in stmts:
            out += self.stmt(s, ind)
        return out

    def stmt(self, s: ir.Stmt, ind: str) -> list[str]:
        self.pre = []
        if self._region is None and not self._no_regions and (isinstance(s, ir.For) or
                                     (not isinstance(s, ir.If) and any(isinstance(n, ir.Reduce) for n in _walk([s])))):
            region = Region(self, s)
            plan = region.plan(self.tmp) if region.ok else None
            if plan is not None:
                self._regions += 1
                return self.versioned(region, plan, s, ind)
        return self.stmt_plain(s, ind)

    def versioned(self, region, plan, s: ir.Stmt, ind: str) -> list[str]:
        """A loop nest (or a statement with a reduction) whose indices the analysis of loops.Region
        could bound: its fast version, behind a test made once when the bounds are known only at
        run time, else the checked version."""
        self._region = region
        try:
            let = isinstance(s, ir.Let)
            inner = ind + "    " if plan.conds else ind
            self._plan = plan
            self._anchors = {}
            for ic in plan.interchange.values():
                self._anchors.setdefault(id(ic.anchor) if ic.anchor is not None else None, []).append(ic)
            fast = []
            for ic in self._anchors.get(None, []):
                fast += self.reduce_ahead(ic, inner)
            fast = [f"{inner}kc_need_blocks(need, s->b_{m}, {lo}, {hi});" for m, lo, hi in plan.hoist] + fast
            fast += self.stmt_plain(s, inner, as_assign=let and bool(plan.conds))
            self._plan = None
            self._anchors = {}
            if not plan.conds:  # everything proven when generating: one version
                return [ind + "/* indices proven in bounds for the whole loop: no per-element checks */"] + fast
            out = [ind + "/* loop nest with indices affine in its loop variables: when they stay in bounds for "
                   "every iteration, without wrapping, run it unchecked (kcgen.sim.loops) */"]
            out += [ind + p for p in plan.pre]
            if let:
                t = local_type(self.body, self.spec, s)
                out.append(f"{ind}{comp_ctype(t)} l_{c_ident(s.name)};")
            out.append(f"{ind}if ({' && '.join(plan.conds)}) {{")
            out += fast
            out.append(f"{ind}}} else {{")
            out += self.stmt_plain(s, inner, as_assign=let)
            out.append(f"{ind}}}")
            return out
        finally:
            self._region = None
            self._plan = None
            self._anchors = {}

    def stmt_plain(self, s: ir.Stmt, ind: str, as_assign: bool = False) -> list[str]:
        if as_assign:  # a `let` compiled inside a branch: the variable is declared before it
            self.pre = []
            t = local_type(self.body, self.spec, s)
            value = self.expr(s.value, t)
            self.locals[s.name] = f"l_{c_ident(s.name)}"
            lines = [f"{ind}l_{c_ident(s.name)} = {value};"]
            pre = [ind + p for p in self.pre]
            self.pre = []
            return pre + lines
        self.pre = []
        lines = getattr(self, "s_" + type(s).__name__)(s, ind)
        pre = [ind + p for p in self.pre]
        self.pre = []
        if pre and lines and lines[0].lstrip().startswith(("for ", "if ")) and getattr(self, "_inner_pre", False):
            pass
        return pre + lines

    def s_Let(self, s: ir.Let, ind):
        t = local_type(self.body, self.spec, s)
        name = f"l_{c_ident(s.name)}"
        if isinstance(t, VecT):
            self.vec_sizes.add(t.bits // 8)
        value = self.expr(s.value, t)
        self.locals[s.name] = name
        return [f"{ind}{comp_ctype(t)} {name} = {value};"]

    def s_Assign(self, s: ir.Assign, ind):
        target = s.target
        tt = self.body.type(target)
        root, path = ir.index_path(target)
        if isinstance(root, ir.Name) and root.id in self.locals and not path:
            return [f"{ind}{self.locals[root.id]} = {self.expr(s.value, tt)};"]
        if isinstance(root, ir.Name) and root.id == "pc":
            return [f"{ind}*npc = {self.expr(s.value, tt)};"]
        if isinstance(root, ir.Name) and root.id in self.locals:
            # a lane of a vector local
            base_t = self.body.type(root)
            sc = self.L_scalar(base_t.elem)
            idx = self.checked_index(self.expr(path[0], IntLitT()), base_t.count, "vector lane")
            v = self.expr(s.value, tt)
            return [f"{ind}(({sc.ctype} *){self.locals[root.id]}.b)[{idx}] = {self.store_scalar(v, sc)};"]
        value = self.expr(s.value, tt)
        packed = None
        if not isinstance(tt, VecT):  # evaluate the value (and its traps) whether or not the write happens
            v = self.tmp("v")
            inner = _call_arg(value, f"kc_round_{tt.name}") if isinstance(tt, FloatT) else None
            if inner is not None and self.L.floats[tt.name].native is None:
                # rounded only to be stored: round and encode in one step (kc_rpack_F)
                self.pre.append(f"uint64_t {v} = kc_rpack_{tt.name}({inner});")
                packed = v
            else:
                self.pre.append(f"{comp_ctype(tt)} {v} = {value};")
            value = v
        acc = self.access(target)
        out = []
        if packed is not None and acc.scalar is not None and acc.scalar.type == tt and \
                not (isinstance(root, ir.Name) and root.id in self.L.groups):
            return self.write(acc, path, f"*{acc.ptr} = ({acc.scalar.ctype}){packed};", ind)
        if packed is not None:  # not a plain store after all: back to a value
            value = f"kc_unpack_{tt.name}({packed})"
        if isinstance(root, ir.Name) and root.id in self.L.groups and acc.index:
            tmp, holder = acc.index.split(":")
            if isinstance(tt, VecT):
                out.append(f"{ind}{holder} = {value};")
            else:
                out.append(f"{ind}*{acc.ptr} = {self.store_scalar(value, acc.scalar)};")
            out.append(f"{ind}kc_gset_{root.id}(s, {tmp}, {holder}.b);")
            if acc.dyn is not None:
                out.append(ind + self._track(acc, True))
            return out
        if isinstance(tt, VecT):
            return self.write(acc, path, f"memcpy({acc.ptr}, &({value}), sizeof(kcv{tt.bits // 8}));", ind)
        return self.write(acc, path, f"*{acc.ptr} = {self.store_scalar(value, acc.scalar)};", ind)

    def write(self, acc: _Access, path, write: str, ind: str) -> list[str]:
        """A store statement, skipped for a hard-wired zero register, and its tracked memory block
        marked pending (one entry per block: consecutive writes to a block are the common case)."""
        out = []
        st = acc.store
        if st is not None and st.kind == "reg" and st.zero and path:
            first = path[0]
            idx = f"d->a[{self.operand_index[first.id]}]" if self.operand_in_range(first, st) else None
            if idx is None:
                idx = self.tmp("z")
                out.append(f"{ind}uint64_t {idx} = (uint64_t)({self.expr(first, IntLitT())});")
            write = f"if ({' && '.join(f'{idx} != {z}' for z in sorted(st.zero))}) {write}"
        out.append(ind + write)
        if acc.dyn is not None:
            out.append(ind + self._track(acc, True))
        if acc.cached:
            out.append(f"{ind}kc_daccess(s, {acc.index}, 1);")
        if acc.tracked:
            out.append(f"{ind}{{ uint64_t *bp = &s->b_{st.name}[{acc.index} >> {BLOCK_SHIFT}]; "
                       f"if (bp != kc_last) {{ kc_last = bp; kc_pending(s, bp); }} }}")
        return out

    def s_If(self, s: ir.If, ind):
        c = self.expr(s.cond)
        pre = [ind + p for p in self.pre]
        self.pre = []
        scope = dict(self.locals)
        then = self.block(s.then, ind + "    ")
        self.locals = dict(scope)
        out = pre + [f"{ind}if ({c}) {{"] + then
        if s.orelse:
            orelse = self.block(s.orelse, ind + "    ")
            self.locals = dict(scope)
            out += [f"{ind}}} else {{"] + orelse
        return out + [f"{ind}}}"]

    def s_For(self, s: ir.For, ind):
        lo, hi = self.expr(s.lo, IntLitT()), self.expr(s.hi, IntLitT())
        pre = [ind + p for p in self.pre]
        self.pre = []
        var = f"l_{c_ident(s.var)}"
        hi_v = self.tmp("hi")
        scope = dict(self.locals)
        self.locals[s.var] = var
        poll, saved = self._loop_enter(s.var, s.lo, s.hi, lambda w: w.per_iteration(s))
        body = [f"{ind}    {poll}"] if poll else []
        try:
            for ic in self._anchors.get(id(s), []):
                body += self.reduce_ahead(ic, ind + "    ")
            body += self.block(s.body, ind + "    ")
        finally:
            self._loop_exit(s.var, saved)
        self.locals = scope
        return pre + [f"{ind}for (int64_t {var} = {lo}, {hi_v} = {hi}; {var} < {hi_v}; {var}++) {{"] + body + [f"{ind}}}"]

    def s_Require(self, s: ir.Require, ind):
        c = self.expr(s.cond)
        pre = [ind + p for p in self.pre]
        self.pre = []
        return pre + [f"{ind}if (!({c})) kc_fail(s, KC_TRAP_REQUIRE, {c_string(s.message)});"]

    def s_Trap(self, s: ir.Trap, ind):
        return [f"{ind}kc_fail(s, KC_TRAP_USER, {c_string(s.message)});"]

    def s_Halt(self, s: ir.Halt, ind):
        return [f"{ind}halt = 1;"]

    def s_CallStmt(self, s: ir.CallStmt, ind):
        call = s.call
        if isinstance(call, ir.Call) and call.func == "store":
            mem = call.args[0].id
            st = self.L.stores[mem]
            t = self.spec.context.resolve_type(_typeref(call.args[1]))
            k = t.bits // st.elem.type.bits
            addr = self.tmp("a")
            value = self.expr(call.args[3], t)
            pre = [ind + p for p in self.pre]
            self.pre = []
            bits = self.tmp("bits")
            out = pre + [f"{ind}uint64_t {addr} = kc_span(s, (uint64_t)({self.expr(call.args[2], IntLitT())}), {k}, "
                         f"{st.shape[0]}, {min(k, st.align)}, {c_string(mem)}, {c_string(f'store({mem}, {t}')});"]
            out = [ind + p for p in self.pre] + out
            self.pre = []
            out += [f"{ind}uint64_t {bits} = {self.bits_of(value, t)};",
                    f"{ind}memcpy(s->{st.cname} + {addr}, &{bits}, {t.bits // 8});"]
            if self.dcache is not None and mem == self.dcache.memory:
                out.append(f"{ind}kc_daccess(s, {addr}, 1);")
            if mem in self.tracked:
                out.append(f"{ind}kc_pending_span(s, s->b_{mem}, {addr}, {k});")
            return out
        code = self.expr(call)
        return [f"{ind}(void)({code});"]

    # ---- whole file ---------------------------------------------------------------------------------
    def generate(self) -> str:
        """The simulator as one C file (sim.h, then sim.c, then sim_ops.c, joined)."""
        files = self.generate_files()
        body = lambda name: files[name].replace('#include "sim.h"\n', "")  # noqa: E731
        return files["sim.h"] + body("sim.c") + body("sim_ops.c")

    def generate_files(self) -> dict[str, str]:
        """sim.h (formats, state, helpers: shared), sim.c (the run loop, the decoder and the short
        instructions inlined into it) and sim_ops.c (the long instructions, out of line). The two
        .c files compile in parallel; a long instruction costs a call, nothing next to its loops."""
        P = self.P
        self.functions = {f.name: f for f in self.spec.isa.functions}
        head = [f"/* Generated by kcgen {GENERATOR_VERSION} from ISA '{self.spec.isa.name}'. Do not edit: change the .isa file. */",
                "#include <stdint.h>", "#include <string.h>", "#include <math.h>", "#include <setjmp.h>",
                "#include <stdarg.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <time.h>",
                '#include "kc_numeric.h"', '#include "kc_ieee.h"', '#include "kc_trap.h"', '#include "kc_sim.h"', ""]
        head += ["/* the run loop's helpers are small and called from one switch: always inline them */",
                 "#define KC_HOT __attribute__((always_inline))",
                 "/* instructions whose reductions run side by side (vectorised) are compiled twice on x86-64,",
                 "   for the baseline and for AVX2 (x86-64-v3), and the loader picks the one the CPU runs.",
                 "   Only when built with -ffp-contract=off (kcgen.sim.build): AVX2 has fused multiply-add, and",
                 "   a * b + c must stay two roundings. */",
                 "#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && \\",
                 "    defined(KC_FP_CONTRACT_OFF)",
                 "#define KC_VECTOR __attribute__((target_clones(\"arch=x86-64-v3\", \"default\")))",
                 "#else",
                 "#define KC_VECTOR",
                 "#endif", ""]
        head += self.formats_c()
        inline, outline, decls = self.instructions_c()
        fns = self.functions_c()
        head += self.state_c()
        head += self.prelude_c()
        head += [f"typedef struct {{ uint8_t b[{n}]; }} kcv{n};" for n in sorted(self.vec_sizes)] + [""]
        head += self.canon_lanes_c()
        head += self.groups_c()
        head += self.exposed_c()
        head += self.structures_c()
        head += fns
        head += ["/* instructions compiled in sim_ops.c */"] + decls + [""]
        decoder = self.decoder_c()
        if self.run_clone:  # the v3 build is the run loop alone
            decoder = ["#ifndef KC_RUN_V3"] + decoder + ["#endif"]
        main = ['#include "sim.h"', ""] + inline + decoder + self.run_c()
        ops = ['#include "sim.h"', ""] + outline
        return {"sim.h": "\n".join(head) + "\n", "sim.c": "\n".join(main) + "\n", "sim_ops.c": "\n".join(ops) + "\n"}

    def canon_lanes_c(self) -> list[str]:
        out = []
        for name in sorted(self.canon_formats):
            f = self.L.floats[name]
            sc = self.L_scalar(FloatT(name, f.width))
            if f.native:
                nan = "kc_bits_f32(0x7fc00000u)" if f.native == "float" else "kc_bits_f64(UINT64_C(0x7ff8000000000000))"
                test, canon = "x != x", nan
            else:
                test, canon = f"isnan(kc_unpack_{name}(x))", f"({sc.ctype})kc_fmt_nan_code(&F_{name})"
            out += [f"static inline void kc_canon_lanes_{name}(uint8_t *b, int n) {{",
                    f"    for (int i = 0; i < n; i++) {{",
                    f"        {sc.ctype} x; memcpy(&x, b + i * sizeof x, sizeof x);",
                    f"        if ({test}) {{ x = {canon}; memcpy(b + i * sizeof x, &x, sizeof x); }}",
                    "    }", "}"]
        return out

    def formats_c(self) -> list[str]:
        """Each declared format: its kc_fmt, and round/pack/unpack with a fast path for normal numbers.

        The fast paths handle values whose exponent lies strictly inside the format's normal range
        (not its top binade) with plain bit operations on the double; everything else (zeros,
        subnormals, the top binade, overflow, NaN) goes to the exact generic code in kc_numeric.h.
        """
        out = ["/* ---- number formats ---- */",
               "static inline uint32_t kc_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }",
               "static inline float kc_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }",
               "static inline uint64_t kc_f64_bits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }",
               "static inline double kc_bits_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }",
               "/* a NaN written to storage (or bitcast) is the positive quiet NaN with no payload */",
               "static inline float kc_canon_f32(double x) { return x != x ? kc_bits_f32(0x7fc00000u) : (float)x; }",
               "static inline double kc_canon_f64(double x) { return x != x ? kc_bits_f64(UINT64_C(0x7ff8000000000000)) : x; }"]
        for name, f in self.L.floats.items():
            out.append(f"static const kc_fmt F_{name} __attribute__((unused)) = {{ .exp = {f.exp}, .man = {f.man}, "
                       f".bias = {f.bias}, .finite = {int(f.finite)}, .is_unsigned = {int(f.unsigned)}, "
                       f".nonan = {int(f.nonan)} }};")
            if f.native:
                continue
            generic_round = f"kc_decode(&F_{name}, kc_encode(&F_{name}, x, 0))"
            if f.man == 0 or f.man >= 52:
                out += [f"static inline KC_HOT double kc_round_{name}(double x) {{ return {generic_round}; }}",
                        f"static inline KC_HOT uint64_t kc_pack_{name}(double x) {{ return kc_encode(&F_{name}, x, 0); }}",
                        f"static inline KC_HOT double kc_unpack_{name}(uint64_t b) {{ return kc_decode(&F_{name}, b); }}",
                        f"static inline KC_HOT uint64_t kc_rpack_{name}(double x) {{ return kc_encode(&F_{name}, x, 0); }}"]
                continue
            if (f.exp, f.man, f.bias, f.finite, f.unsigned, f.nonan) == (8, 7, 127, False, False, False):
                # bf16 is the top half of an f32: unpack is a shift, pack of a bf16 value a shift back
                out += [f"static inline KC_HOT double kc_round_{name}(double x) {{",
                        "    uint64_t u = kc_f64_bits(x), e = (u >> 52) & 0x7ff;",
                        "    if (e >= 897 && e < 1150) {  /* normal bf16 range below the top binade */",
                        "        u += (UINT64_C(1) << 44) - 1 + ((u >> 45) & 1);  /* to nearest, ties to even */",
                        "        u &= ~((UINT64_C(1) << 45) - 1);",
                        "        if (((u >> 52) & 0x7ff) < 1150) return kc_bits_f64(u);",
                        "    }",
                        f"    return {generic_round};",
                        "}",
                        f"static inline KC_HOT uint64_t kc_pack_{name}(double x) {{",
                        "    float f = (float)x;",
                        "    uint32_t u = kc_f32_bits(f);",
                        "    if ((double)f == x && (u & 0xffff) == 0) return u >> 16;  /* x is a bf16 value */",
                        f"    return kc_encode(&F_{name}, x, 0);",
                        "}",
                        f"static inline KC_HOT double kc_unpack_{name}(uint64_t b) {{ return (double)kc_bits_f32((uint32_t)b << 16); }}",
                        f"static inline KC_HOT uint64_t kc_rpack_{name}(double x) {{  /* round to bf16 and encode */",
                        "    uint64_t u = kc_f64_bits(x), e = (u >> 52) & 0x7ff;",
                        "    if (e >= 897 && e < 1150) {",
                        "        u += (UINT64_C(1) << 44) - 1 + ((u >> 45) & 1);",
                        "        e = (u >> 52) & 0x7ff;",
                        "        if (e < 1151) return ((u >> 48) & 0x8000) | ((e - 896) << 7) | ((u >> 45) & 0x7f);",
                        "    }",
                        f"    return kc_encode(&F_{name}, x, 0);",
                        "}"]
                continue
            lo = 1023 + 1 - f.bias  # biased double exponent of the smallest normal
            top = (1 << f.exp) - 2 - f.bias + 1023  # the top binade: left to the generic code
            drop = 52 - f.man
            sign_ok = "(u >> 63) == 0 && " if f.unsigned else ""
            sign_bits = "" if f.unsigned else f"(((u >> 63) & 1) << {f.exp + f.man}) | "
            sign_in = "" if f.unsigned else f"((uint64_t)((b >> {f.exp + f.man}) & 1) << 63) | "
            out += [f"static inline KC_HOT double kc_round_{name}(double x) {{",
                    "    uint64_t u = kc_f64_bits(x), e = (u >> 52) & 0x7ff;",
                    f"    if ({sign_ok}e >= {lo} && e < {top}) {{",
                    f"        u += (UINT64_C(1) << {drop - 1}) - 1 + ((u >> {drop}) & 1);  /* to nearest, ties to even */",
                    f"        u &= ~((UINT64_C(1) << {drop}) - 1);",
                    f"        if (((u >> 52) & 0x7ff) < {top}) return kc_bits_f64(u);",
                    "    }",
                    f"    return {generic_round};",
                    "}",
                    f"static inline KC_HOT uint64_t kc_pack_{name}(double x) {{  /* encode; exact when x is representable */",
                    "    uint64_t u = kc_f64_bits(x), e = (u >> 52) & 0x7ff;",
                    f"    if ({sign_ok}e >= {lo} && e < {top} && (u & ((UINT64_C(1) << {drop}) - 1)) == 0)",
                    f"        return {sign_bits}((e - {1023 - f.bias}) << {f.man}) | ((u >> {drop}) & {(1 << f.man) - 1:#x});",
                    *([f"    if ((u << 1) == 0) return {sign_bits}0;  /* +-0 */"] if not f.unsigned else []),
                    f"    return kc_encode(&F_{name}, x, 0);",
                    "}",
                    f"static inline KC_HOT uint64_t kc_rpack_{name}(double x) {{ return kc_pack_{name}(kc_round_{name}(x)); }}",
                    f"static inline KC_HOT double kc_unpack_{name}(uint64_t b) {{",
                    f"    uint64_t e = (b >> {f.man}) & {(1 << f.exp) - 1:#x};",
                    f"    if (e >= 1 && e + {1023 - f.bias} < {top})",
                    f"        return kc_bits_f64({sign_in}((e + {1023 - f.bias}) << 52) | ((b & {(1 << f.man) - 1:#x}) << {drop}));",
                    f"    return kc_decode(&F_{name}, b);",
                    "}"]
        return out + [""]

    def state_struct(self) -> list[str]:
        """The state struct, shared verbatim by the C file and the cffi cdef."""
        P = self.P
        lines = [f"typedef struct {P}_op {{ uint32_t op; uint32_t size; uint32_t last; uint32_t pad; uint64_t pc; const void *h; "
                 f"int64_t a[{self.max_ops}]; }} {P}_op;",
                 f"typedef struct {P}_state {{",
                 "    uint64_t pc;", "    uint64_t cycles;", "    uint64_t instret;", "    int32_t status;",
                 "    int32_t halted;", "    kc_trap trap;", "    uint64_t *counts;", "    uint64_t *unit_busy;",
                 "    uint64_t now, horizon, nissued, t_need;", "    uint64_t *unit_free;",
                 f"    uint64_t *t_pend[{MAX_WRITES}];", f"    uint64_t t_plat[{MAX_WRITES}];",
                 "    uint32_t t_npend;", "    uint32_t nops;", "    uint32_t threaded;",
                 "    uint32_t untimed;  /* 1: run the semantics alone, no timing model (a correctness-only run) */",
                 "    int32_t t_predict_taken, t_branch;",
                 "    uint64_t t_cyc, t_lat, t_dispatched, t_retire, t_retired, t_resolve, t_step;",
                 "    uint64_t *rob;", "    uint64_t *queue;", "    uint64_t *qhead;",
                 f"    {P}_op *ops;", "    int64_t *index;", "    uint64_t text_base, text_len;",
                 "    void *jmp;",
                 "    uint64_t wall_ns;  /* the wall-clock limit of a run in ns, 0: none (set by the caller) */",
                 "    uint64_t deadline;  /* kc_now_ns() at which the run stops, 0: none (set by run) */",
                 "    int64_t poll_left;  /* loop iterations until a long instruction reads the clock */",
                 "    uint64_t *tstate;  /* timing scratch: register tracking, caches, predictors (cleared at reset) */"]
        if self.exposed:  # results in flight (exposed_c); cleared by reset
            width = max([self._exposed_bytes(f) for f in self._exposed_files()] + [8])
            lines += ["    uint64_t x_clock, x_due;", "    uint32_t x_n;",
                      f"    uint64_t x_at[{self.x_depth}];", f"    uint32_t x_file[{self.x_depth}];",
                      f"    uint64_t x_reg[{self.x_depth}];", f"    uint64_t x_early[{self.x_depth}];",
                      f"    uint32_t x_byp[{self.x_depth}];",
                      # a result's value stays in its slot; x_slot[0..x_n) are the queue's, the rest free
                      f"    uint32_t x_slot[{self.x_depth}];", f"    uint8_t x_val[{self.x_depth}][{width}];"]
        if self.delay_slots:  # a taken jump waiting for its delay slots (redirect_c); cleared by reset
            lines += ["    uint64_t br_target;", "    uint64_t br_left;"]
        for st in self.L.stores.values():
            lines.append(f"    {st.elem.ctype} *{st.cname};")
            if st.kind == "reg" or st.kind == "state":
                lines.append(f"    uint64_t *rdy_{st.name};")
        for m in sorted(self.tracked):
            lines.append(f"    uint64_t *b_{m};")
        if self._ooo:  # the unit calendars (commit_c); cleared by run() when nothing has issued yet
            n = self._ncopies
            lines += ["    uint64_t t_cal_lo, t_ovf_max;",
                      f"    uint64_t t_ovf_lo[{n}], t_ovf_hi[{n}], t_run_lo[{n}], t_run_hi[{n}];",
                      f"    uint64_t t_cal[{n * CAL_WORDS}];"]
        lines.append(f"}} {P}_state;")
        return lines

    def state_c(self) -> list[str]:
        return (["/* ---- machine state: arrays owned by Python (kcgen.sim.layout) ---- */"] + self.state_struct() +
                ["", f"/* the public API (native/kc_sim.h) */", f"KC_SIM_API({self.P})", ""])

    def api_decls(self) -> list[str]:
        P = self.P
        return [f"int {P}_predecode({P}_state *s, const uint8_t *text, uint64_t len, uint64_t base);",
                f"int {P}_run({P}_state *s, uint64_t max_steps);",
                f"int {P}_decode_one(const uint8_t *bytes, uint64_t len, uint64_t pc, {P}_op *out);",
                f"uint64_t {P}_layout_size(void);"]

    def cdef(self) -> str:
        trap = "typedef struct { int kind; uint64_t pc; char message[160]; } kc_trap;"
        return "\n".join([trap] + self.state_struct() + self.api_decls()) + "\n"

    def prelude_c(self) -> list[str]:
        P = self.P
        return [f"""/* ---- helpers: integer rules of docs/simulator.md, traps ---- */
typedef {P}_state kc_s;
static void kc_fail(kc_s *restrict s, int kind, const char *fmt, ...) __attribute__((noreturn, format(printf, 3, 4)));
static void kc_fail(kc_s *restrict s, int kind, const char *fmt, ...) {{
    va_list ap;
    va_start(ap, fmt);
    s->trap.kind = kind;
    s->trap.pc = s->pc;
    vsnprintf(s->trap.message, sizeof s->trap.message, fmt, ap);
    va_end(ap);
    longjmp(*(jmp_buf *)s->jmp, 1);
}}
/* the wall-clock limit: the monotonic clock. The deadline is set from the precise clock; the
   checks read the coarse one where there is (a few ns; it is the same clock as of the last tick,
   never ahead of it, so a run never stops early and at most a tick late) */
static inline uint64_t kc_now_ns(int coarse) {{
    struct timespec t;
#ifdef CLOCK_MONOTONIC_COARSE
    clock_gettime(coarse ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC, &t);
#else
    (void)coarse;
    clock_gettime(CLOCK_MONOTONIC, &t);
#endif
    return (uint64_t)t.tv_sec * UINT64_C(1000000000) + (uint64_t)t.tv_nsec;
}}
/* a long loop inside an instruction: every POLL_WORK iterations, the clock; past the deadline the
   instruction stops half done, does not retire, and the run ends with status timeout */
static void kc_poll(kc_s *restrict s) __attribute__((noinline, cold));
static void kc_poll(kc_s *restrict s) {{
    if (!s->deadline) {{ s->poll_left = INT64_MAX; return; }}
    if (kc_now_ns(1) >= s->deadline) {{
        s->t_step--;
        kc_fail(s, KC_TRAP_TIMEOUT, "wall-clock limit of %g s exceeded", (double)s->wall_ns / 1e9);
    }}
    s->poll_left = {POLL_WORK};
}}
static inline int64_t kc_sx(uint64_t v, int w) {{ return (int64_t)(v << (64 - w)) >> (64 - w); }}
static inline uint64_t kc_shl(uint64_t a, uint64_t n, int w) {{ return n >= (uint64_t)w ? 0 : a << n; }}
static inline int64_t kc_shr_s(int64_t a, uint64_t n) {{ return n >= 64 ? (a < 0 ? -1 : 0) : a >> n; }}
static inline uint64_t kc_shr_u(uint64_t a, uint64_t n) {{ return n >= 64 ? 0 : a >> n; }}
static inline int64_t kc_div_s(kc_s *restrict s, int64_t a, int64_t b) {{
    if (b == 0) kc_fail(s, KC_TRAP_ARITH, "division by zero");
    return (a == INT64_MIN && b == -1) ? INT64_MIN : a / b;
}}
static inline int64_t kc_rem_s(kc_s *restrict s, int64_t a, int64_t b) {{
    if (b == 0) kc_fail(s, KC_TRAP_ARITH, "division by zero");
    return b == -1 ? 0 : a % b;
}}
static inline uint64_t kc_div_u(kc_s *restrict s, uint64_t a, uint64_t b) {{
    if (b == 0) kc_fail(s, KC_TRAP_ARITH, "division by zero");
    return a / b;
}}
static inline uint64_t kc_rem_u(kc_s *restrict s, uint64_t a, uint64_t b) {{
    if (b == 0) kc_fail(s, KC_TRAP_ARITH, "division by zero");
    return a % b;
}}
static inline int64_t kc_min_s(int64_t a, int64_t b) {{ return a < b ? a : b; }}
static inline int64_t kc_max_s(int64_t a, int64_t b) {{ return a > b ? a : b; }}
static inline uint64_t kc_min_u(uint64_t a, uint64_t b) {{ return a < b ? a : b; }}
static inline uint64_t kc_max_u(uint64_t a, uint64_t b) {{ return a > b ? a : b; }}
static inline uint64_t kc_abs(int64_t a) {{ return a < 0 ? UINT64_C(0) - (uint64_t)a : (uint64_t)a; }}
static inline int64_t kc_clamp_s(int64_t v, int64_t lo, int64_t hi) {{ return v < lo ? lo : (v > hi ? hi : v); }}
static inline int kc_clampi(int64_t k) {{ return k < -100000 ? -100000 : (k > 100000 ? 100000 : (int)k); }}
static inline uint64_t kc_slice(uint64_t v, int64_t hi, int64_t lo) {{
    uint64_t x = lo >= 64 ? 0 : v >> lo;
    int w = (int)(hi - lo + 1);
    return w >= 64 ? x : x & ((UINT64_C(1) << w) - 1);
}}
static inline int kc_bit(uint64_t v, uint64_t i) {{ return i >= 64 ? 0 : (int)((v >> i) & 1); }}
static inline uint64_t kc_clz(uint64_t v, int w) {{ return v == 0 ? (uint64_t)w : (uint64_t)(__builtin_clzll(v) - (64 - w)); }}
static inline uint64_t kc_ctz(uint64_t v, int w) {{ return v == 0 ? (uint64_t)w : (uint64_t)__builtin_ctzll(v); }}
static inline uint64_t kc_popcount(uint64_t v, int w) {{ (void)w; return (uint64_t)__builtin_popcountll(v); }}
static inline double kc_sat_f32(double x) {{
    if (x > 3.4028234663852886e38) return 3.4028234663852886e38;
    if (x < -3.4028234663852886e38) return -3.4028234663852886e38;
    return (double)(float)x;
}}
static inline uint64_t kc_idx(kc_s *restrict s, uint64_t i, uint64_t n, const char *what) {{
    if (i >= n) kc_fail(s, KC_TRAP_MEMORY, "out of bounds: %s[%lld] (size %llu)", what, (long long)i, (unsigned long long)n);
    return i;
}}
/* a load/store of k elements at a: in bounds, and aligned to min(k, the memory's align); `op` is
   "load(MEM, T" or "store(MEM, T" for the message */
static inline uint64_t kc_span(kc_s *restrict s, uint64_t a, uint64_t k, uint64_t n, uint64_t align, const char *what,
                               const char *op) {{
    if (a >= n || n - a < k)
        kc_fail(s, KC_TRAP_MEMORY, "out of bounds: %s[%lld..%lld] (size %llu)", what, (long long)a,
                (long long)(a + k - 1), (unsigned long long)n);
    if (a & (align - 1)) kc_fail(s, KC_TRAP_MISALIGNED, "misaligned %s, %#llx)", op, (unsigned long long)a);
    return a;
}}
/* loop nests with indices proven in bounds (kcgen.sim.loops): exact index ranges, block waits */
typedef __int128 kc_wide;
static inline int kc_within(kc_wide lo, kc_wide hi, uint64_t n) {{ return lo >= 0 && hi < (kc_wide)n; }}
static inline void kc_need_blocks(uint64_t *need, const uint64_t *blocks, kc_wide lo, kc_wide hi) {{
    for (uint64_t b = (uint64_t)lo >> {BLOCK_SHIFT}; b <= (uint64_t)hi >> {BLOCK_SHIFT}; b++) if (blocks[b] > *need) *need = blocks[b];
}}
static inline KC_HOT void kc_need(kc_s *restrict s, uint64_t ready) {{ if (ready > s->t_need) s->t_need = ready; }}
/* `need`: the latest ready time an operation has read so far (a local of the run loop) */
static inline KC_HOT void kc_needl(uint64_t *need, uint64_t ready) {{ if (ready > *need) *need = ready; }}
static inline void kc_need_span(uint64_t *need, const uint64_t *blocks, uint64_t a, uint64_t k) {{
    for (uint64_t b = a >> {BLOCK_SHIFT}; b <= (a + k - 1) >> {BLOCK_SHIFT}; b++) kc_needl(need, blocks[b]);
}}
static inline void kc_pending(kc_s *restrict s, uint64_t *block) {{
    if (s->t_npend && s->t_pend[s->t_npend - 1] == block) return;
    if (s->t_npend < {MAX_WRITES}) {{ s->t_plat[s->t_npend] = s->t_lat; s->t_pend[s->t_npend++] = block; }}
}}
static inline void kc_pending_span(kc_s *restrict s, uint64_t *blocks, uint64_t a, uint64_t k) {{
    for (uint64_t b = a >> {BLOCK_SHIFT}; b <= (a + k - 1) >> {BLOCK_SHIFT}; b++) kc_pending(s, &blocks[b]);
}}
"""]

    def groups_c(self) -> list[str]:
        out = []
        for g in self.L.groups.values():
            parts = self._flat_parts(g, "(int64_t)n")
            total = sum(p[2] for p in parts)
            if total * 8 != g.type.bits:
                raise Unsupported(f"register group {g.name}: parts are not byte-aligned")
            self.vec_sizes.add(total)
            get = [f"static inline void kc_gget_{g.name}(kc_s *restrict s, uint64_t n, uint8_t *out) {{", "    uint64_t i;"]
            put = [f"static inline void kc_gset_{g.name}(kc_s *restrict s, uint64_t n, const uint8_t *in) {{", "    uint64_t i;"]
            ptr = [f"static inline void *kc_grp_{g.name}(kc_s *restrict s, uint64_t n, uint64_t byte) {{", "    uint64_t i;"]
            off = 0
            for st, idx, per in parts:
                count = st.shape[0]
                chk = f"i = kc_idx(s, (uint64_t)({idx}), {count}, {c_string(st.name)});"
                get += [f"    {chk}", f"    memcpy(out + {off}, (uint8_t *)(s->{st.cname}) + i * {per}, {per});"]
                if not st.readonly:
                    put += [f"    {chk}"] + ([f"    if ({' && '.join(f'i != {z}' for z in sorted(st.zero))})"] if st.zero else []) + \
                           [f"    {'    ' if st.zero else ''}memcpy((uint8_t *)(s->{st.cname}) + i * {per}, in + {off}, {per});"]
                ptr += [f"    if (byte < {off + per}) {{ {chk} return (uint8_t *)(s->{st.cname}) + i * {per} + (byte - {off}); }}"]
                off += per
            get.append("}")
            put.append("}")
            need = [f"static inline void kc_gneed_{g.name}(kc_s *restrict s, uint64_t n, uint64_t *need) {{",
                    "    int64_t i;"]
            pend = [f"static inline void kc_gpend_{g.name}(kc_s *restrict s, uint64_t n) {{", "    int64_t i;"]
            ready = [f"static inline void kc_gready_{g.name}(kc_s *restrict s, uint64_t n, uint64_t done) {{", "    int64_t i;"]
            for st, idx, per in parts:
                ok = f"i = {idx}; if (i >= 0 && i < {st.shape[0]})"
                need.append(f"    {ok} {{ if (s->rdy_{st.name}[i] > *need) *need = s->rdy_{st.name}[i]; }}")
                pend.append(f"    {ok} kc_pending(s, &s->rdy_{st.name}[i]);")
                ready.append(f"    {ok} s->rdy_{st.name}[i] = done;")
            out += need + ["}"] + pend + ["}"] + ready + ["}"]
            ptr += ["    kc_fail(s, KC_TRAP_MEMORY, \"out of bounds: register group lane\");", "}"]
            out += get + put + ptr
        return out + [""]

    def _flat_parts(self, g, n: str) -> list[tuple]:
        """The storage a group register is made of, low bytes first: (store, C index, bytes) per part.
        A part that is itself a group is replaced by its own parts, indexed through it."""
        out = []
        for file, index_expr in g.parts:
            code = self._index_c(index_expr, n)
            if file in self.L.groups:
                out += self._flat_parts(self.L.groups[file], f"({code})")
                continue
            st = self.L.stores[file]
            if st.elem.dtype.itemsize * 8 != st.elem.type.bits:
                raise Unsupported(f"register group {g.name}: part {file} is not stored at its width")
            out.append((st, code, st.elem.dtype.itemsize * (st.shape[1] if len(st.shape) > 1 else 1)))
        return out

    def _index_c(self, e: ir.Expr, n: str = "(int64_t)n") -> str:
        """Group part index expressions: integer arithmetic over `n` and parameters."""
        if isinstance(e, ir.Num):
            return str(e.value)
        if isinstance(e, ir.Name):
            return n if e.id == "n" else str(self.spec.params[e.id])
        if isinstance(e, ir.Binary) and e.op in "+-*/%":
            return f"({self._index_c(e.left, n)} {e.op} {self._index_c(e.right, n)})"
        raise Unsupported(f"register group index expression {e}")

    def functions_c(self) -> list[str]:
        out = []
        for fn in self.spec.isa.functions:
            self.body = type_function(self.spec, fn)
            self.operand_index, self.insn_operands, self.field_bits = {}, {}, {}
            self.locals = {p.name: f"p_{c_ident(p.name)}" for p in fn.params}
            params = "".join(f", {comp_ctype(self.spec.context.resolve_type(p.type))} p_{c_ident(p.name)}" for p in fn.params)
            rt = self.spec.context.resolve_type(fn.result)
            self.pre = []
            self._trk_declared = fn.name in self.dyn_fns
            value = self.expr(fn.body, rt)
            self._trk_declared = False
            trk = ", uint64_t *trk" if self.dyn_files else ""
            # always inlined: a helper called per element (a vector lane's read) costs a call and keeps
            # its constant arguments (the element width) from folding away at the call site
            out += [f"static inline KC_HOT {comp_ctype(rt)} fn_{fn.name}(kc_s *restrict s, const {self.P}_op *d, uint64_t pc, "
                    f"uint64_t *need{trk}{params}) {{",
                    "    (void)s; (void)d; (void)pc; (void)need;" + (" (void)trk;" if trk else "")] + \
                ["    " + p for p in self.pre] + [f"    return {value};", "}"]
        return out + [""]

    def instructions_c(self) -> list[str]:
        out = ["/* ---- instructions: one function each, from its semantics ---- */"]
        outline = ["/* ---- the long instructions (vector loops and the like), out of line ---- */"]
        decls = []
        for name in self.names:
            e = self.encs[name]
            self.body: TypedBody = type_instruction(self.spec, name)
            self.insn_name = name
            self._work = Work(self.spec, self.body, self.fn_work)
            work = self._work.stmts(e.insn.insn.semantics)
            self.max_work = max(self.max_work, work)
            self._work_mult, self._polled = 1, False
            self.insn_operands = e.insn.operands
            self.field_bits = {b.operand.name: b.field.value_width for b in e.bindings}
            self.operand_index = {op: k for k, op in enumerate(e.insn.operands)}
            self.locals = {}
            self._tmp = 0
            self._side_by_side = False  # has reductions computed side by side (reduce_ahead)
            self._regions = 0
            self._trk_declared = name in self.dyn_insns
            body = self.block(e.insn.insn.semantics, "    ")
            plain = len(body)
            if self._regions:  # inline or not as without fast versions: measure the plain body
                side, self._no_regions = self._side_by_side, True
                plain = len(self.block(e.insn.insn.semantics, "    "))
                self._side_by_side, self._no_regions = side, False
            if self._trk_declared:  # the registers it reached through computed indices, for timing_c
                n = 2 * len(self.dyn_files)
                base = self.tstate["trk"][0]
                body = [f"    uint64_t trk[{n}] = {{0}};"] + body + \
                    [f"    memcpy(s->tstate + {base}, trk, sizeof trk);"]
            self._trk_declared = False
            short = plain <= self.INLINE_LINES
            doc = f"/* {e.insn.template.text} */"
            # Short bodies are inlined into their handler (the run loop stays fast); long ones (vector
            # loops) stay functions: inlining hundreds of them makes one giant function that gcc
            # takes minutes to compile, and a call costs nothing next to their loops.
            sig = (f"int x_{c_ident(name)}(kc_s *restrict s, const {self.P}_op *d, uint64_t pc, "
                   "uint64_t *npc, uint64_t *need)")
            self._work = None
            if name not in self.polled_insns:
                self.max_work_unpolled = max(self.max_work_unpolled, work)
            fn = [doc, ("static inline KC_HOT " if short else "KC_VECTOR " if self._side_by_side else "") + sig + " {",
                  "    int halt = 0;", "    uint64_t *kc_last = 0;  /* the memory block last marked pending */",
                  "    (void)s; (void)d; (void)pc; (void)npc; (void)need; (void)kc_last;"] + body + ["    return halt;", "}", ""]
            if short:
                out += fn
            else:
                outline += fn
                decls.append(f"__attribute__((visibility(\"hidden\"))) {sig};")
            self.cost_c(name)
        return out, outline, decls

    def fn_work(self, name: str) -> int:
        """The loop iterations of one call of semantics function `name` (0 for a builtin)."""
        fn = self.functions.get(name)
        if fn is None:
            return 0
        if name not in self._fn_work:
            self._fn_work[name] = 0  # (the language has no recursion)
            self._fn_work[name] = Work(self.spec, type_function(self.spec, fn), self.fn_work).expr(fn.body)
        return self._fn_work[name]

    @property
    def poll_steps(self) -> int:
        """Instructions the run loop executes between two reads of the wall clock: a power of two,
        at most POLL_STEPS_MAX, fewer when one instruction may loop long (at most POLL_STEP_WORK
        iterations of the longest instruction between reads), at least POLL_STEPS_MIN. Loops that
        read the clock themselves do not count: their reads share one countdown (s->poll_left),
        so together they read it every POLL_WORK iterations."""
        n = POLL_STEPS_MAX
        while n > POLL_STEPS_MIN and n * min(max(self.max_work_unpolled, 1), POLL_WORK) > POLL_STEP_WORK:
            n >>= 1
        return n

    def cost_c(self, name: str) -> None:
        """cycles/latency as C over operands and params, evaluated before the semantics run."""
        e = self.encs[name]
        insn = e.insn.insn
        self.locals = {}
        self.pre = []
        cyc = self.expr(insn.cycles, IntLitT()) if insn.cycles is not None else "1"
        lat = self.expr(insn.latency, IntLitT()) if insn.latency is not None else cyc
        if self.pre:
            raise Unsupported(f"{name}: cycles/latency may not read memories")
        self.costs = getattr(self, "costs", {})
        self.costs[name] = (cyc, lat, _static_regs(insn.semantics, e.insn.operands))

    def meta(self) -> dict:
        """What the Python side needs to drive the compiled simulator (stored beside it in the cache)."""
        return {"prefix": self.P, "isa": self.spec.isa.name, "generator": GENERATOR_VERSION, "delay_slots": self.delay_slots,
                "exposed": self.exposed, "x_depth": self.x_depth if self.exposed else 0,
                "ops": ["<illegal>"] + self.names, "units": self.units,
                "unit_copies": [self._copies(u) for u in self.units], "tracked": sorted(self.tracked),
                "block_shift": BLOCK_SHIFT, "granule": self.granule, "max_ops": self.max_ops,
                "max_slots": self.max_slots, "word_bytes": self.spec.word // 8,
                "rob": self.props.get("rob", 1) if self.timing and self.timing.model == "ooo" else 1,
                # per operation: [unit index or -1, cycles when constant else 0]; the Python side adds
                # counts x cycles to the run-time busy counts (which cover the operand-dependent ones)
                "static_busy": [[-1, 0]] + [self._static_busy(n) for n in self.names],
                # the wall-clock limit: instructions between reads of the clock in the run loop, the most
                # loop iterations of one instruction, the instructions whose loops read it themselves
                "poll_steps": self.poll_steps, "max_work": self.max_work, "max_work_unpolled": self.max_work_unpolled,
                "polled": list(self.polled_insns),
                "tstate": max(sum(n for _, n in self.tstate.values()), 1),
                "tstate_keep": self.tstate_keep,
                "structures": {"caches": {c.name: c.stats for c in self.caches},
                               "predictor": self.predictor.stats if self.predictor else None}}

    def _static_busy(self, name: str) -> list[int]:
        unit = self.encs[name].insn.insn.unit
        return [self.units.index(unit) if unit in self.units else -1, self._const_cycles(name) or 0]

    # ---- decoder -------------------------------------------------------------------------------------
    def decoder_c(self) -> list[str]:
        P = self.P
        groups: dict[str, list[Encoding]] = {}
        for e in self.encs.values():
            groups.setdefault(e.slot or f"w{e.width}", []).append(e)
        out = ["/* ---- decoder: most specific encoding first, as the disassembler decodes ---- */"]
        for g, encs in groups.items():
            encs = sorted(encs, key=lambda e: (-bin(e.insn.mask).count("1"), e.name))
            out.append(f"static int dec_{c_ident(g)}(uint64_t w, uint64_t pc, uint64_t size, {P}_op *o) {{")
            out.append("    (void)pc; (void)size;")
            for e in encs:
                legal = "".join(f" && {c}" for c in self._legal_c(e))
                out.append(f"    if ((w & UINT64_C({e.insn.mask:#x})) == UINT64_C({e.insn.match:#x}){legal}) {{")
                out.append(f"        o->op = {self.opnum[e.name]};  /* {e.name} */")
                for k, opname in enumerate(e.insn.operands):
                    b = next((b for b in e.bindings if b.operand.name == opname), None)
                    if b is None:
                        out.append(f"        o->a[{k}] = 0;")
                        continue
                    out.append(f"        o->a[{k}] = {self._extract(b, e)};")
                out.append("        return 1;")
                out.append("    }")
            out += ["    return 0;", "}"]
        out += self._predecode_c(groups)
        return out + [""]

    def _legal_c(self, e: Encoding) -> list[str]:
        """C conditions a word matching e must also meet to be e, as the disassembler decodes
        (Disassembler._reserved): a register inside its file, an immediate inside its operand's range,
        a named value of a closed enum (or the optional operand's default). Otherwise the next
        encoding is tried, and a word nothing takes is an illegal instruction."""
        closed = {en.name: {i.value for i in en.items} for en in self.spec.isa.enums if not en.numbers}
        out = []
        for b in e.bindings:
            o, v = b.operand, self._raw(b)
            if o.kind == "reg" and (1 << b.field.value_width) > o.count:
                out.append(f"{v} < {o.offset + o.count}")
            elif o.kind == "imm" and (self._field_range(b) != (o.lo, o.hi)):
                out.append(f"({v} >= {o.lo}LL && {v} <= {o.hi}LL)")
            elif o.kind == "enum" and o.regfile in closed:
                values = sorted(closed[o.regfile] | ({o.default} if o.default is not None else set()))
                if set(range(1 << b.field.value_width)) - set(values):
                    out.append("(" + " || ".join(f"{v} == {x}" for x in values) + ")")
        return out

    @staticmethod
    def _field_range(b) -> tuple[int, int]:
        n = b.field.value_width
        return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if b.operand.signed else (0, (1 << n) - 1)

    def _raw(self, b) -> str:
        """An operand's value as the field holds it (sign-extended, register offset added)."""
        f, o = b.field, b.operand
        parts = [f"(((w >> {wlo}) & UINT64_C({(1 << width) - 1:#x})) << {vlo})" for vlo, wlo, width in f.pieces]
        v = "(" + " | ".join(parts) + ")" if parts else "0"
        if o.signed:
            v = f"kc_sx({v}, {f.value_width})"
        else:
            v = f"(int64_t){v}"
        if o.kind == "reg" and o.offset:
            v = f"({v} + {o.offset})"
        return v

    def _extract(self, b, e: Encoding) -> str:
        o = b.operand
        v = self._raw(b)
        if o.kind == "pcrel":
            base = "pc + size" if self.pcrel_next else "pc"
            v = f"(int64_t)((uint64_t)({base}) + (uint64_t){v})"
        # the value as semantics see it: wrapped to the operand's type (a field may be wider than a
        # u1 operand; a pc-relative target wraps at the width of pc)
        t = self.spec.semantic_operands({o.name: o})[o.name].type
        if isinstance(t, IntT) and t.width < 64:
            v = f"kc_sx((uint64_t)({v}), {t.width})" if t.signed else f"(int64_t)((uint64_t)({v}) & UINT64_C({(1 << t.width) - 1:#x}))"
        return v

    def _predecode_c(self, groups) -> list[str]:
        P = self.P
        order = "little" if (self.spec.isa.endian or "little") == "little" else "big"
        widths = sorted({e.width for e in self.encs.values() if not e.slot})
        granule = self.spec.word // 8  # an undecodable word is skipped as one ISA word
        for size in [w // 8 for w in widths] + [fmt.width // 8 for fmt in self.bundles]:
            granule = _gcd(granule, size)
        self.granule = granule
        read = ["static unsigned __int128 kc_word(const uint8_t *p, uint64_t n) {",
                "    unsigned __int128 w = 0;",
                "    for (uint64_t i = 0; i < n; i++)",
                ("        w |= (unsigned __int128)p[i] << (8 * i);" if order == "little" else
                 "        w = (w << 8) | p[i];"),
                "    return w;", "}"]
        out = read + [f"/* Decode one instruction or bundle at text[pos]; returns its size in bytes, 0 if undecodable. */",
                      f"static uint64_t dec_at(const uint8_t *text, uint64_t len, uint64_t pos, uint64_t pc, {P}_op *ops, uint32_t *n) {{"]
        if self.bundles:
            for fmt in self.bundles:
                size = fmt.width // 8
                out.append(f"    if (pos + {size} <= len) {{")
                out.append(f"        unsigned __int128 w = kc_word(text + pos, {size});")
                mlo, mhi = fmt.fixed_mask & ((1 << 64) - 1), fmt.fixed_mask >> 64
                clo, chi = fmt.fixed_match & ((1 << 64) - 1), fmt.fixed_match >> 64
                out.append(f"        if ((uint64_t)(w & UINT64_C({mlo:#x})) == UINT64_C({clo:#x}) && "
                           f"(uint64_t)((w >> 64) & UINT64_C({mhi:#x})) == UINT64_C({chi:#x})) {{")
                out.append("            uint32_t k = 0; int ok = 1;")
                for slot, field in fmt.fields.items():
                    parts = " | ".join(f"((uint64_t)((w >> {wlo}) & (unsigned __int128)UINT64_C({(1 << width) - 1:#x})) << {vlo})"
                                       for vlo, wlo, width in field.pieces)
                    out.append(f"            if (ok) {{ ops[k].pc = pc; ops[k].size = {size}; ops[k].last = 0; "
                               f"ok = dec_{c_ident(slot)}({parts}, pc, {size}, &ops[k]); k++; }}")
                out.append(f"            if (ok) {{ ops[k - 1].last = 1; *n = k; return {size}; }}")
                out.append("        }")
                out.append("    }")
        else:
            for wbits in widths:
                size = wbits // 8
                out.append(f"    if (pos + {size} <= len) {{")
                out.append(f"        uint64_t w = (uint64_t)kc_word(text + pos, {size});")
                out.append(f"        ops[0].pc = pc; ops[0].size = {size}; ops[0].last = 1;")
                out.append(f"        if (dec_w{wbits}(w, pc, {size}, &ops[0])) {{ *n = 1; return {size}; }}")
                out.append("    }")
        out += ["    *n = 0;", "    return 0;", "}", ""]
        max_slots = max([len(f.fields) for f in self.bundles] + [1])
        self.max_slots = max_slots
        out += [f"int {P}_decode_one(const uint8_t *bytes, uint64_t len, uint64_t pc, {P}_op *out) {{",
                "    uint32_t n = 0;",
                "    memset(out, 0, sizeof *out);",
                f"    {P}_op ops[{max_slots}];",
                "    uint64_t size = dec_at(bytes, len, 0, pc, ops, &n);",
                "    if (size && n) *out = ops[0];",
                "    return (int)size;", "}", ""]
        out += [f"/* Decode a text section once. s->ops gets one entry per operation (an undecodable granule becomes",
                f"   operation 0, which traps when executed); s->index maps each {granule}-byte granule to its first",
                "   operation, or -1 inside an instruction. The caller provides ops and index arrays large enough. */",
                f"int {P}_predecode({P}_state *s, const uint8_t *text, uint64_t len, uint64_t base) {{",
                "    uint64_t pos = 0; uint32_t nops = 0;",
                f"    for (uint64_t g = 0; g < (len + {granule - 1}) / {granule}; g++) s->index[g] = -1;",
                "    while (pos < len) {",
                "        uint32_t n = 0;",
                "        uint64_t size = dec_at(text, len, pos, base + pos, s->ops + nops, &n);",
                f"        s->index[pos / {granule}] = nops;",
                "        if (size == 0) {",
                f"            {P}_op *o = &s->ops[nops++];",
                f"            memset(o, 0, sizeof *o); o->pc = base + pos; o->last = 1;",
                f"            size = len - pos < {self.spec.word // 8} ? len - pos : {self.spec.word // 8};",
                "            o->size = (uint32_t)size;",
                "            o->a[0] = (int64_t)kc_word(text + pos, size);",
                "        } else nops += n;",
                "        pos += size;",
                "    }",
                "    s->nops = nops; s->text_base = base; s->text_len = len; s->threaded = 0;",
                "    return (int)nops;", "}"]
        return out

    # ---- run loop and timing -------------------------------------------------------------------------
    def timing_c(self, name: str, ind: str) -> list[str]:
        """After an operation ran: which ready times it waits for and which it sets (at commit)."""
        _, _, (reads, writes) = self.costs[name]
        insn = self.encs[name].insn.insn
        out = []
        vliw = self.timing is not None and self.timing.model == "vliw"
        # ooo: a pure store (writes a memory, no register or state) is two micro-operations: the
        # address part issues on its unit once the registers that form the address are ready, the
        # data part waits for the registers only the stored value reads (need_s)
        data = self._store_data(name) if self._ooo else set()
        # ready times the operation waits for: `need` (a local), plus s->t_need when semantics touched
        # a tracked memory or, under vliw, an earlier slot of the bundle did
        if data:
            out.append(f"{ind}uint64_t need_s = 0;  /* ready time of the stored data */")
        for file, opname in reads:
            k = self.operand_index_of(name, opname)
            var = "need_s" if (file, opname) in data else "need_v"
            if file in self.L.stores:
                out.append(f"{ind}if (s->rdy_{file}[d->a[{k}]] > {var}) {var} = s->rdy_{file}[d->a[{k}]];")
            elif file in self.L.groups:
                out.append(f"{ind}kc_gneed_{file}(s, (uint64_t)d->a[{k}], {'&need_s' if var == 'need_s' else 'need'});")
        for stname in sorted(_read_state(insn.semantics, self.L) - self._untimed):
            out.append(f"{ind}if (s->rdy_{stname}[0] > need_v) need_v = s->rdy_{stname}[0];")
        if vliw:
            out.append(f"{ind}kc_need(s, need_v);")
        states = (_written_storage(insn.semantics) & {n for n, st in self.L.stores.items() if st.kind == "state"}) - self._untimed
        targets = [f"s->rdy_{file}[d->a[{self.operand_index_of(name, opname)}]]"
                   for file, opname in writes if file in self.L.stores] + [f"s->rdy_{n}[0]" for n in sorted(states)]
        ui = self.units.index(insn.unit) if insn.unit in self.units else -1
        ui_track = self._track_unit(name)
        groups = [(file, self.operand_index_of(name, opname)) for file, opname in writes if file in self.L.groups]
        if vliw:
            out += [f"{ind}kc_pending(s, &{t});" for t in targets]  # settled when the whole bundle issues
            out += [f"{ind}kc_gpend_{file}(s, (uint64_t)d->a[{k}]);" for file, k in groups]
            out.append(f"{ind}(void)c;")
        else:
            dyn_post = self._dynamic_timing(name, ind, out) + self._cache_timing(name, ind, out)
            if self._ooo:  # returns when the operation is done (its store data included)
                call = (f"kc_issue(s, {ui_track}, " if self.replicate_tails else f"kc_issue_{self._unit_tag(ui_track)}(s, ")
                out.append(f"{ind}uint64_t done = {call}c, l, need_v, {'need_s' if data else 0});")
            else:
                out.append(f"{ind}uint64_t done = kc_issue(s, {ui_track}, c, l, need_v) + l;")
            out += [f"{ind}{t} = done;" for t in targets]
            out += [f"{ind}kc_gready_{file}(s, (uint64_t)d->a[{k}], done);" for file, k in groups]
            out += dyn_post
            if self.tracked:
                out.append(f"{ind}if (s->t_npend) kc_settle(s, done);")
            if not targets and not groups:  # otherwise `done` is in a ready time that run() reads at the end
                out.append(f"{ind}if (done > s->horizon) s->horizon = done;")
            if not self._const_cycles(name):
                out.append(f"{ind}if ({ui} >= 0) s->unit_busy[{ui}] += c;")
        pcrel = [k for k, o in enumerate(self.encs[name].insn.operands.values()) if o.kind == "pcrel"]
        if self.predictor is not None:
            out += self._branch_kind(name, ind, pcrel)
        elif pcrel and self.timing is not None and self.timing.model == "ooo":
            if any(isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.id == "pc"
                   for st in insn.semantics):  # an unconditional direct jump: the BTB knows it
                out.append(f"{ind}s->t_branch = 1; s->t_predict_taken = 1;")
            else:  # a conditional branch: backward predicted taken, forward not taken
                out.append(f"{ind}s->t_branch = 1; s->t_predict_taken = (uint64_t)d->a[{pcrel[0]}] < pc;")
        return out

    def _branch_kind(self, name: str, ind: str, pcrel: list[int]) -> list[str]:
        """For the predictor: what kind of control transfer the instruction is (1 conditional branch,
        2 direct jump, 3 indirect jump), whether it links (writes the link register: a call) and
        whether it returns (an indirect jump through the link register that does not link)."""
        insn = self.encs[name].insn.insn
        jumps = [st for st in _walk(insn.semantics) if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name)
                 and st.target.id == "pc"]
        if not jumps:
            return []
        if pcrel:
            kind = 2 if any(isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.id == "pc"
                            for st in insn.semantics) else 1
        else:
            kind = 3
        _, _, (reads, writes) = self.costs[name]
        link = self.predictor.link
        wk = [self.operand_index_of(name, op) for f, op in writes if f in self.L.stores and self.L.stores[f].kind == "reg"]
        rk = [self.operand_index_of(name, op) for f, op in reads if f in self.L.stores and self.L.stores[f].kind == "reg"]
        call = f"(d->a[{wk[0]}] == {link})" if wk and kind != 1 else "0"
        ret = f"(d->a[{rk[0]}] == {link} && !{call})" if rk and kind == 3 else "0"
        return [f"{ind}s->t_branch = {kind} | ({call} << 2) | ({ret} << 3);"]

    def structures_c(self) -> list[str]:
        """The caches' lookups, the data-access hook and the branch predictor (kcgen.sim.structures)."""
        if not self.caches and self.predictor is None:
            return []
        out = ["/* ---- caches and branch prediction ---- */"]
        out += structures.caches_c(self.caches, self.tstate["tick"][0])
        if self.dcache is not None:
            out += structures.data_access_c(self.dcache, self.load_extra)
        if self.predictor is not None:
            out += structures.predictor_c(self.predictor, self.props.get("mispredict_penalty", 0))
        return out + [""]

    def _cache_timing(self, name: str, ind: str, out: list[str]) -> list[str]:
        """A fetch in a new line looks it up in the instruction cache (a miss holds dispatch); a load
        that missed the data cache takes the extra cycles, once one of the cache's MSHRs is free."""
        if self.icache is not None:
            line = self.tstate["fetch_line"][0]
            shift = self.icache.line.bit_length() - 1
            restart = "s->t_dispatched = 0;" if self._ooo else "s->nissued = 0;"
            out.append(f"{ind}{{ uint64_t ln = (pc >> {shift}) + 1; if (ln != s->tstate[{line}]) {{ s->tstate[{line}] = ln; "
                       f"uint64_t x = kc_cache_{self.icache.name}(s, pc); if (x) {{ s->now += x; {restart} }} }} }}")
        if name not in self.cache_insns:
            return []
        c = self.dcache
        out.append(f"{ind}uint64_t xl = s->tstate[{self.load_extra}]; s->tstate[{self.load_extra}] = 0;")
        if not c.mshrs:
            out.append(f"{ind}l += xl;")
            return []
        out += [f"{ind}int ms = -1;",
                f"{ind}if (xl) {{ l += xl; ms = 0; for (int i = 1; i < {c.mshrs}; i++) if (s->tstate[{c.mshr} + i] < "
                f"s->tstate[{c.mshr} + ms]) ms = i; if (s->tstate[{c.mshr} + ms] > need_v) need_v = s->tstate[{c.mshr} + ms]; }}"]
        return [f"{ind}if (ms >= 0) s->tstate[{c.mshr} + ms] = done;"]

    def _dynamic_timing(self, name: str, ind: str, out: list[str]) -> list[str]:
        """Hazards on registers an instruction reached through computed indices (its masks, recorded as
        its semantics ran): it waits for those it read (RAW), and finishes a write no earlier than the
        register's last write (WAW) and after the last cycle an earlier reader reads it (WAR). Appends
        the waits to `out`; returns the updates to make once `done` is known."""
        if name not in self.dyn_insns:
            return []
        base = self.tstate["trk"][0]
        post = []
        for k, f in enumerate(self.dyn_files):
            rend = self.tstate[f"rend_{f}"][0]
            r, w = f"tr_{k}", f"tw_{k}"
            out += [f"{ind}uint64_t {r} = s->tstate[{base + 2 * k}], {w} = s->tstate[{base + 2 * k + 1}];",
                    f"{ind}for (uint64_t m = {r}; m; m &= m - 1) {{ uint64_t t = s->rdy_{f}[__builtin_ctzll(m)]; "
                    "if (t > need_v) need_v = t; }",
                    f"{ind}for (uint64_t m = {w}; m; m &= m - 1) {{ int i = __builtin_ctzll(m); "
                    f"uint64_t t = s->rdy_{f}[i], e = s->tstate[{rend} + i] + 1; if (e > t) t = e; "
                    "if (t > l && t - l > need_v) need_v = t - l; }"]
            post += [f"{ind}for (uint64_t m = {w}; m; m &= m - 1) s->rdy_{f}[__builtin_ctzll(m)] = done;",
                     f"{ind}if ({r}) {{ uint64_t e = done - l + (c ? c - 1 : 0); "
                     f"for (uint64_t m = {r}; m; m &= m - 1) {{ uint64_t *p = &s->tstate[{rend} + __builtin_ctzll(m)]; "
                     "if (e > *p) *p = e; } }"]
        return post

    @property
    def _untimed(self) -> set:
        """State declared `untimed`: instructions neither wait for it nor make it wait."""
        return {st.name for st in self.spec.isa.states if st.untimed}

    @property
    def _ooo(self) -> bool:
        return self.timing is not None and self.timing.model == "ooo"

    @property
    def _ncopies(self) -> int:
        """Unit copies in all (the ooo calendars: one per copy)."""
        return max(sum(self._copies(u) for u in self.units), 1)

    def _store_data(self, name: str) -> set:
        """A pure store's (file, operand) register reads that only feed the value it stores: empty
        for every other instruction (one that writes a register or state item, or reads nothing but
        the address)."""
        insn = self.encs[name].insn.insn
        _, _, (reads, writes) = self.costs[name]
        memories = {m.name for m in self.spec.isa.memories}
        written = _written_storage(insn.semantics)
        if writes or not (written & memories) or written - memories:
            return set()
        inside = set()  # expression nodes inside a stored value
        for st in _walk(insn.semantics):
            value = None
            if isinstance(st, ir.CallStmt) and isinstance(st.call, ir.Call) and st.call.func == "store":
                value = st.call.args[3]
            elif isinstance(st, ir.Assign):
                root, _ = ir.index_path(st.target)
                if isinstance(root, ir.Name) and root.id in memories:
                    value = st.value
            if value is not None:
                inside |= {id(n) for n in _walk_expr(value)}
        data, other = set(), set()
        for n in _walk(insn.semantics):
            if isinstance(n, ir.Index) and isinstance(n.base, ir.Name) and isinstance(n.index, ir.Name):
                (data if id(n) in inside else other).add((n.base.id, n.index.id))
        return {r for r in data - other if r in reads}

    def _copies(self, unit_name: str) -> int:
        u = next(u for u in self.timing.units if u.name == unit_name)
        return self.spec.params_eval(u.count) if u.count is not None else 1

    def operand_index_of(self, name: str, opname: str) -> int:
        return list(self.encs[name].insn.operands).index(opname)

    @property
    def delay_slots(self) -> int:
        """VLIW delay slots: a pc write takes effect after this many further bundles (0: at once)."""
        return int(self.props.get("delay_slots", 0)) if self.timing and self.timing.model == "vliw" else 0

    @property
    def exposed(self) -> bool:
        """`timing vliw { exposed = 1 }`: no interlock on registers. A result written through an operand
        (`FILE[operand] = ...`) lands `latency` bundles after its bundle issues; until then every
        reader sees the old value (docs/simulator.md, "Exposed pipelines"). kcgen.sim.pyref does the same."""
        return bool(self.timing and self.timing.model == "vliw" and self.props.get("exposed", 0))

    def _exposed_files(self) -> list[str]:
        """The register files (and groups) some instruction writes through an operand: their results wait."""
        out = []
        for name in self.names:
            for file, _ in self.costs[name][2][1]:
                if file not in out and (file in self.L.groups or self.L.stores[file].kind == "reg"):
                    out.append(file)
        return out

    def _exposed_writes(self, name: str) -> list[tuple[str, int]]:
        """(file, operand index) of each register `name` writes through an operand, when results wait."""
        if not self.exposed:
            return []
        return [(file, self.operand_index_of(name, opname)) for file, opname in self.costs[name][2][1]
                if file in self.L.groups or self.L.stores[file].kind == "reg"]

    def _bypass_of(self, name: str) -> tuple[int, int]:
        """(path number, cycles saved) of the forwarding path an instruction is on; (0, 0): none."""
        paths = sorted({self.encs[n].insn.insn.bypass for n in self.names} - {""})
        insn = self.encs[name].insn.insn
        return (paths.index(insn.bypass) + 1, insn.bypass_cycles) if insn.bypass else (0, 0)

    def _exposed_peeks(self, name: str) -> list[tuple[str, int]]:
        """(file, operand index) of each register an instruction on a forwarding path reads through an operand."""
        if not self.exposed or not self.encs[name].insn.insn.bypass:
            return []
        files = self._exposed_files()
        return [(file, self.operand_index_of(name, opname)) for file, opname in self.costs[name][2][0] if file in files]

    def _exposed_bytes(self, file: str) -> int:
        if file in self.L.groups:
            return sum(p[2] for p in self._flat_parts(self.L.groups[file], "(int64_t)n"))
        st = self.L.stores[file]
        return st.elem.dtype.itemsize * (st.shape[1] if len(st.shape) > 1 else 1)

    def _exposed_depth(self) -> int:
        """Results one run can have in flight at most: every slot of a bundle writing all its operands,
        each waiting the longest latency (an exposed pipeline needs latencies the operands do not change)."""
        lat, writes = 1, 1
        for name in self.names:
            insn = self.encs[name].insn.insn
            e = insn.latency if insn.latency is not None else insn.cycles
            try:
                lat = max(lat, int(self.spec.params_eval(e)) if e is not None else 1)
            except Exception:
                raise Unsupported(f"{name}: an exposed pipeline needs a latency the operands do not change")
            writes = max(writes, len(self.costs[name][2][1]))
        return lat * max([len(f.fields) for f in self.bundles] + [1]) * writes

    @property
    def x_depth(self) -> int:
        if not hasattr(self, "_x_depth"):
            self._x_depth = self._exposed_depth()
        return self._x_depth

    def exposed_c(self) -> list[str]:
        """The results in flight of an exposed pipeline: per file a copy in and out of one register, a
        queue of (due cycle, file, register, value), and its commit in order of due cycle then issue."""
        if not self.exposed:
            return []
        files = self._exposed_files()
        out = ["/* exposed pipeline: a result waits in s->x_* until its latency has elapsed (docs/simulator.md) */"]
        for fid, file in enumerate(files):
            n = self._exposed_bytes(file)
            if file in self.L.groups:
                count = self.L.groups[file].count
                get = f"kc_gget_{file}(s, n, out)"
                put = f"kc_gset_{file}(s, n, in)"
            else:
                st = self.L.stores[file]
                count = st.shape[0]
                at = f"(uint8_t *)(s->{st.cname}) + n * {n}"
                get = f"memcpy(out, {at}, {n})"
                put = (f"if ({' && '.join(f'n != {z}' for z in sorted(st.zero))}) " if st.zero else "") + f"memcpy({at}, in, {n})"
            out += [f"static inline int kc_xget_{file}(kc_s *restrict s, uint64_t n, uint8_t *out) {{",
                    f"    if (n >= {count}) return 0;  /* the instruction itself reports the index */",
                    f"    {get};", "    return 1;", "}",
                    f"static inline void kc_xput_{file}(kc_s *restrict s, uint64_t n, const uint8_t *in) {{ {put}; }}",
                    f"/* after the instruction wrote register n: the new value waits `lat` cycles, the old one stays */",
                    f"static void kc_xdefer_{file}(kc_s *restrict s, uint64_t n, const uint8_t *old, uint64_t lat, "
                    "uint32_t byp, uint64_t saves) {",
                    f"    if (s->x_n == {self.x_depth}) kc_fail(s, KC_TRAP_MEMORY, \"internal: more results in flight than the ISA allows\");",
                    "    uint32_t e = s->x_n++;",
                    f"    s->x_at[e] = s->x_clock + lat; s->x_file[e] = {fid}; s->x_reg[e] = n;",
                    "    s->x_byp[e] = byp; s->x_early[e] = s->x_clock + (lat > saves ? lat - saves : 1);",
                    f"    kc_xget_{file}(s, n, s->x_val[s->x_slot[e]]);",
                    f"    kc_xput_{file}(s, n, old);",
                    "    if (s->x_at[e] < s->x_due) s->x_due = s->x_at[e];", "}",
                    f"/* a reader on forwarding path `byp`: the newest result in flight on that path that reaches it */",
                    f"static int kc_xpeek_{file}(kc_s *restrict s, uint64_t n, uint32_t byp, uint8_t *save) {{",
                    "    uint32_t b = s->x_n;",
                    "    for (uint32_t e = 0; e < s->x_n; e++)",
                    f"        if (s->x_file[e] == {fid} && s->x_reg[e] == n && s->x_byp[e] == byp && s->x_early[e] <= s->x_clock &&",
                    "            (b == s->x_n || s->x_at[e] >= s->x_at[b])) b = e;",
                    f"    if (b == s->x_n || !kc_xget_{file}(s, n, save)) return 0;",
                    f"    kc_xput_{file}(s, n, s->x_val[s->x_slot[b]]);",
                    "    return 1;", "}"]
        out += ["/* Write every result due by `upto`, earliest due first, in issue order among equals; the rest",
                "   keep their order, and the value slots of the written ones are free again (after x_n in x_slot). */",
                "static void kc_xcommit(kc_s *restrict s, uint64_t upto) {",
                f"    uint32_t due[{self.x_depth}], freed[{self.x_depth}], nd = 0, keep = 0;",
                "    for (uint32_t e = 0; e < s->x_n; e++) {",
                "        if (s->x_at[e] > upto) continue;",
                "        uint32_t k = nd++;  /* insertion by due cycle: stable, so issue order among equals */",
                "        while (k > 0 && s->x_at[due[k - 1]] > s->x_at[e]) { due[k] = due[k - 1]; k--; }",
                "        due[k] = e;",
                "    }",
                "    for (uint32_t i = 0; i < nd; i++) {",
                "        uint32_t b = due[i];",
                "        switch (s->x_file[b]) {"]
        out += [f"        case {fid}: kc_xput_{file}(s, s->x_reg[b], s->x_val[s->x_slot[b]]); break;"
                for fid, file in enumerate(files)]
        out += ["        }",
                "    }",
                "    s->x_due = UINT64_MAX;",
                "    for (uint32_t e = 0; e < s->x_n; e++) {",
                "        if (s->x_at[e] <= upto) { freed[e - keep] = s->x_slot[e]; continue; }",
                "        s->x_at[keep] = s->x_at[e]; s->x_file[keep] = s->x_file[e]; s->x_reg[keep] = s->x_reg[e];",
                "        s->x_early[keep] = s->x_early[e]; s->x_byp[keep] = s->x_byp[e]; s->x_slot[keep] = s->x_slot[e];",
                "        if (s->x_at[keep] < s->x_due) s->x_due = s->x_at[keep];",
                "        keep++;",
                "    }",
                "    for (uint32_t i = 0; i < nd; i++) s->x_slot[keep + i] = freed[i];",
                "    s->x_n = keep;",
                "}", ""]
        return out

    @property
    def zol(self) -> tuple:
        """The (count, start, end) state items of register-driven zero-overhead loops, or ()."""
        h = self.spec.isa.hwloop
        return tuple(self.L.stores[n].cname for n in h.registers) if h and h.registers else ()

    def exposed_next_c(self) -> list[str]:
        """Lines of KC_NEXT, after a bundle: the results due by the next bundle are written (semantics,
        so untimed runs do it too: a bundle is one cycle, a taken branch BRANCH_DELAY more)."""
        if not self.exposed:
            return []
        delay = self.props.get("branch_delay", 0)
        return [f"    s->x_clock += 1{f' + (taken ? {delay} : 0)' if delay else ''}; \\",
                "    if (s->x_due <= s->x_clock) kc_xcommit(s, s->x_clock); \\"]

    def redirect_c(self) -> list[str]:
        """Lines of KC_NEXT, after a bundle: delayed branches and the zero-overhead loop-back (both
        semantics, so they run untimed too; kcgen.sim.pyref.RefMachine._redirect does the same)."""
        if not self.delay_slots and not self.zol:
            return []
        out = ["    { int landed = 0; \\"]
        if self.delay_slots:
            out += ["    if (s->br_left) { \\",
                    "        if (taken) kc_fail(s, KC_TRAP_PC, \"a jump in the delay slots of the jump to %#llx\", \\",
                    "                           (unsigned long long)s->br_target); \\",
                    "        if (--s->br_left == 0) { npc = s->br_target; landed = 1; } \\",
                    f"    }} else if (taken) {{ s->br_target = npc; s->br_left = {self.delay_slots}; npc = pc + size; }} \\"]
        if self.zol:
            lc, ls, le = self.zol
            out += [f"    if (!landed && s->{lc}[0] != 0 && (uint64_t)s->{le}[0] == pc) {{ \\",
                    f"        if (--s->{lc}[0] != 0) npc = s->{ls}[0]; \\",
                    "    } \\"]
        out += ["    (void)landed; taken = npc != pc + size; } \\"]
        return out

    def commit_c(self) -> list[str]:
        """The timing model's bookkeeping once per issue group (an instruction, or a VLIW bundle)."""
        model = self.timing.model if self.timing else "none"
        p = self.props
        units = self.timing.units if self.timing and model != "vliw" else ()
        copies = [self._copies(u.name) for u in units] or [1]
        bases = [sum(copies[:i]) for i in range(len(copies))] or [0]
        piped = [int(u.pipelined) for u in units] or [0]
        asyncs = [int(u.is_async) for u in units] or [0]
        queues = [self.spec.params_eval(u.queue) if u.queue is not None else 0 for u in units] or [0]
        arr = lambda xs: "{" + ", ".join(str(x) for x in xs) + "}"  # noqa: E731
        out = [f"static const int unit_base[] = {arr(bases)}, unit_copies[] = {arr(copies)}, "
               f"unit_piped[] = {arr(piped)}, unit_async[] = {arr(asyncs)}, unit_queue[] = {arr(queues)};",
               "/* Apply pending ready times: every register, state item and memory block the group wrote. */",
               "static inline void kc_settle(kc_s *restrict s, uint64_t done) {",
               "    for (uint32_t k = 0; k < s->t_npend; k++) if (*s->t_pend[k] < done) *s->t_pend[k] = done;",
               "    s->t_npend = 0;",
               "    if (done > s->horizon) s->horizon = done;",
               "}"]
        if model == "ooo":
            out += self._calendar_c()
        else:
            out += [  # one "next free" time per unit copy
                "/* Take the earliest-free copy of unit u at or after t; returns the start cycle. */",
                "static inline KC_HOT uint64_t kc_unit(kc_s *restrict s, int u, uint64_t t, uint64_t cyc, uint64_t lat) {",
                "    if (u < 0) return t;",
                "    uint64_t *best = &s->unit_free[unit_base[u]];",
                "    for (int k = 1; k < unit_copies[u]; k++)",
                "        if (s->unit_free[unit_base[u] + k] < *best) best = &s->unit_free[unit_base[u] + k];",
                "    if (*best > t) t = *best;",
                "    if (unit_async[u] && unit_queue[u] > 0) {  /* at most `queue` operations in flight */",
                "        uint64_t *q = s->queue + unit_base[u] * 64;",
                "        uint64_t oldest = q[s->qhead[u] % unit_queue[u]];",
                "        if (oldest > t) t = oldest;",
                "        q[s->qhead[u]++ % unit_queue[u]] = t + lat;",
                "    }",
                "    *best = t + (unit_piped[u] ? 1 : cyc);",
                "    return t;",
                "}"]
        if model == "inorder" or model == "none":
            width = p.get("issue_width", 1)
            issue = (["    s->now = t + 1;  /* one instruction per cycle */"] if width == 1 else
                     ["    if (t > s->now) { s->now = t; s->nissued = 0; }",
                      f"    if (++s->nissued >= {width}) {{ s->now++; s->nissued = 0; }}"])
            out += ["/* inorder: issue in program order, at most ISSUE_WIDTH per cycle, once the operands are ready",
                    "   and a copy of the unit is free; results are ready `latency` cycles after issue. */",
                    f"static inline {self._hot} uint64_t kc_issue(kc_s *restrict s, int u, uint64_t cyc, uint64_t lat, uint64_t need) {{",
                    "    uint64_t t = s->now > need ? s->now : need;",
                    "    t = kc_unit(s, u, t, cyc, lat);"] + issue + [
                    "    return t;",
                    "}",
                    "/* After the group: a taken branch restarts issue BRANCH_PENALTY cycles later. */",
                    "static inline KC_HOT void kc_group_done(kc_s *restrict s, int taken) {",
                    f"    if (taken && {p.get('branch_penalty', 0)}) {{ s->now += {p.get('branch_penalty', 0)}; s->nissued = 0; }}",
                    "}"]
        elif model == "vliw":
            delay = p.get("branch_delay", 0)
            out += ["/* vliw: one bundle per cycle; a bundle waits until every operand it reads is ready (an exposed",
                    "   pipeline that stalls rather than reading stale values); a taken branch costs BRANCH_DELAY. */",
                    "static inline KC_HOT void kc_group_done(kc_s *restrict s, int taken) {",
                    "    uint64_t t = s->now;  /* exposed: nothing waits, a read before the result sees the old value */"
                    if self.exposed else "    uint64_t t = s->now > s->t_need ? s->now : s->t_need;",
                    "    for (uint32_t k = 0; k < s->t_npend; k++) {",
                    "        uint64_t r = t + s->t_plat[k];",
                    "        if (*s->t_pend[k] < r) *s->t_pend[k] = r;",
                    "        if (r > s->horizon) s->horizon = r;",
                    "    }",
                    "    s->t_npend = 0;",
                    f"    s->now = t + 1 + (taken ? {delay} : 0);",
                    "    if (s->now > s->horizon) s->horizon = s->now;",
                    "}"]
        elif model == "ooo":
            width = p.get("width", 1)
            rob = p.get("rob", 1)
            commit_w = p.get("commit_width", width)
            pen = p.get("mispredict_penalty", 0)
            out += ["/* Done at the later of issue and data, plus the latency; retire in order, COMMIT_WIDTH per cycle. */",
                    "static inline KC_HOT uint64_t kc_retire(kc_s *restrict s, uint64_t slot, uint64_t t, uint64_t lat, uint64_t data) {",
                    "    uint64_t done = (t > data ? t : data) + lat;",
                    "    if (done > s->t_retire) { s->t_retire = done; s->t_retired = 0; }",
                    f"    if (++s->t_retired > {commit_w}) {{ s->t_retire++; s->t_retired = 1; }}",
                    "    s->rob[slot] = s->t_retire;  /* the entry is free again once its occupant retires */",
                    "    s->t_resolve = done;",
                    "    return done;",
                    "}",
                    "/* The general case, out of line: the calendars move on, or the unit takes more than one slot or",
                    "   has none free in the 64-cycle word of t. */",
                    "static __attribute__((noinline)) uint64_t kc_issue_slow(kc_s *restrict s, int u, uint64_t cyc, uint64_t lat, "
                    "uint64_t d, uint64_t t, uint64_t data, uint64_t slot) {",
                    "    if (d >= s->t_cal_lo + 64) {",
                    "        kc_cal_advance(s, d);",
                    "        uint64_t f = u >= 0 ? kc_unit_fast(s, u, t, cyc) : t;",
                    "        if (f != UINT64_MAX) return kc_retire(s, slot, f, lat, data);",
                    "    }",
                    "    return kc_retire(s, slot, kc_unit(s, u, t, cyc, lat), lat, data);",
                    "}",
                    "/* ooo: dispatch in order, WIDTH per cycle, while the reorder buffer (ROB entries) has room. An",
                    "   operation issues at the first cycle at which its operands are ready (`need`) and a copy of its",
                    "   unit has a free slot in its calendar, whatever older operations still wait for; a pure store",
                    "   issues its address part so and waits for its data (ready at `data`) only to be done. Results",
                    "   are ready `latency` after issue; retire in order, COMMIT_WIDTH per cycle. Branches are",
                    "   predicted backward-taken/forward-not-taken (direct jumps always right, indirect ones always",
                    "   wrong); a miss holds dispatch until the branch resolves plus MISPREDICT_PENALTY. Returns the",
                    "   cycle the operation is done. */",
                    "static inline KC_HOT uint64_t kc_issue(kc_s *restrict s, int u, uint64_t cyc, uint64_t lat, uint64_t need, "
                    "uint64_t data) {",
                    f"    uint64_t slot = s->nissued++ % {rob};",
                    "    if (s->rob[slot] > s->now) { s->now = s->rob[slot]; s->t_dispatched = 0; }",
                    "    uint64_t d = s->now;",
                    f"    if (++s->t_dispatched >= {width}) {{ s->now++; s->t_dispatched = 0; }}",
                    "    uint64_t t = d > need ? d : need;",
                    "    if (d >= s->t_cal_lo + 64) return kc_issue_slow(s, u, cyc, lat, d, t, data, slot);",
                    "    if (u >= 0) {",
                    "        t = kc_unit_fast(s, u, t, cyc);",
                    "        if (t == UINT64_MAX) return kc_issue_slow(s, u, cyc, lat, d, d > need ? d : need, data, slot);",
                    "    }",
                    "    return kc_retire(s, slot, t, lat, data);",
                    "}"]
            if not self.replicate_tails:  # many handlers: one out-of-line copy per unit, its tables folded
                out += [f"static uint64_t kc_issue_{self._unit_tag(u)}(kc_s *restrict s, uint64_t cyc, uint64_t lat, "
                        f"uint64_t need, uint64_t data) {{ return kc_issue(s, {u}, cyc, lat, need, data); }}"
                        for u in sorted({self._track_unit(n) for n in self.names})]
            if self.predictor is not None:  # kcgen.sim.structures: the transfer's prediction, from t_branch
                out += ["static inline KC_HOT void kc_group_done(kc_s *restrict s, int taken, uint64_t pc, uint64_t npc, "
                        "uint64_t next_pc) {",
                        "    int b = s->t_branch;",
                        "    int64_t r = b ? kc_predict(s, b & 3, (b >> 2) & 1, (b >> 3) & 1, taken, pc, npc, next_pc) : taken;",
                        f"    if (r == 1 && s->t_resolve + {pen} > s->now) {{ s->now = s->t_resolve + {pen}; s->t_dispatched = 0; }}",
                        "    if (r < 0) { s->now += (uint64_t)-r; s->t_dispatched = 0; }  /* the BTB did not know the target */",
                        "    if (s->t_retire > s->horizon) s->horizon = s->t_retire;",
                        "}"]
            else:
                out += ["static inline KC_HOT void kc_group_done(kc_s *restrict s, int taken) {",
                        "    int miss = s->t_branch ? taken != s->t_predict_taken : taken;",
                        f"    if (miss && s->t_resolve + {pen} > s->now) {{ s->now = s->t_resolve + {pen}; s->t_dispatched = 0; }}",
                        "    if (s->t_retire > s->horizon) s->horizon = s->t_retire;",
                        "}"]
        return out

    def _track_unit(self, name: str) -> int:
        """The unit index an instruction's timing books, or -1: none, or one that can never hold up an
        instruction (see _binding_units)."""
        unit = self.encs[name].insn.insn.unit
        ui = self.units.index(unit) if unit in self.units else -1
        return ui if ui in self._binding_units() else -1

    @staticmethod
    def _unit_tag(u: int) -> str:
        return "none" if u < 0 else str(u)

    def _calendar_c(self) -> list[str]:
        """ooo: a calendar per unit copy, so that an operation takes the earliest free slot at or after
        its ready time (possibly before the slot of an older operation that waits longer)."""
        return [
            "/* Unit calendars (ooo): one bit a cycle per unit copy for the KC_CAL_R cycles from t_cal_lo, a",
            "   multiple of 64 at or before the current dispatch cycle (no operation issues before that). Word",
            "   (c >> 6) % KC_CAL_W of a copy holds cycle c; the copies' words of one 64-cycle span lie side by",
            "   side (t_cal[word * KC_NCOPIES + copy]). A pipelined unit takes one slot per operation, another",
            "   one `cycles` consecutive slots. A booking that would run past the calendar's end falls back to",
            "   the copy's overflow range [t_ovf_lo, t_ovf_hi): it starts no earlier than t_ovf_hi, the end of",
            "   the latest such booking, and the whole range counts as booked once the calendar reaches it. */",
            f"#define KC_CAL_W {CAL_WORDS}",
            "#define KC_CAL_R (64 * KC_CAL_W)",
            f"#define KC_NCOPIES {self._ncopies}",
            "#define KC_CAL_WORD(cal, x) (cal)[(((x) >> 6) & (KC_CAL_W - 1)) * KC_NCOPIES]",
            "/* The first cycle in [x, y) whose bit is set (flip = 0) or clear (flip = ~0) in the calendar of",
            "   the copy whose first word is cal, else y. */",
            "static inline uint64_t kc_cal_next(const uint64_t *cal, uint64_t x, uint64_t y, uint64_t flip) {",
            "    while (x < y) {",
            "        uint64_t m = (KC_CAL_WORD(cal, x) ^ flip) & (~UINT64_C(0) << (x & 63));",
            "        if (m) { uint64_t r = (x & ~UINT64_C(63)) + (uint64_t)__builtin_ctzll(m); return r < y ? r : y; }",
            "        x = (x | 63) + 1;",
            "    }",
            "    return y;",
            "}",
            "/* Book cycles [x, y). */",
            "static inline void kc_cal_mark(uint64_t *cal, uint64_t x, uint64_t y) {",
            "    while (x < y) {",
            "        uint64_t n = 64 - (x & 63);",
            "        if (n > y - x) n = y - x;",
            "        KC_CAL_WORD(cal, x) |= (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1) << (x & 63);",
            "        x += n;",
            "    }",
            "}",
            "/* The earliest start at or after t of k free consecutive cycles on one copy (k >= 1); cycles at or",
            "   past `end`, the calendar's end, are not looked at (the result may be `end` or later). */",
            "static inline uint64_t kc_cal_find(const uint64_t *cal, uint64_t t, uint64_t k, uint64_t end) {",
            "    for (;;) {",
            "        if (t >= end) return t;",
            "        t = kc_cal_next(cal, t, end, ~UINT64_C(0));",
            "        if (k == 1 || t >= end) return t;",
            "        uint64_t e = t + k < end ? t + k : end;",
            "        uint64_t b = kc_cal_next(cal, t + 1, e, 0);",
            "        if (b >= e) return t;",
            "        t = b + 1;",
            "    }",
            "}",
            "/* Move the calendars' start to the 64-cycle word of d, the dispatch cycle: the words of past cycles",
            "   are cleared and hold the cycles past the old end; overflow bookings they now cover are marked. */",
            "static __attribute__((noinline, cold)) void kc_cal_advance(kc_s *restrict s, uint64_t d) {",
            "    uint64_t lo = s->t_cal_lo, nlo = d & ~UINT64_C(63), end = lo + KC_CAL_R, nend = nlo + KC_CAL_R;",
            "    if (nlo - lo >= KC_CAL_R) memset(s->t_cal, 0, sizeof s->t_cal);",
            "    else for (uint64_t w = lo >> 6; w < nlo >> 6; w++)",
            "        memset(&KC_CAL_WORD(s->t_cal, w << 6), 0, sizeof(uint64_t) * KC_NCOPIES);",
            "    s->t_cal_lo = nlo;",
            "    if (s->t_ovf_max <= end) return;  /* no overflow bookings */",
            "    s->t_ovf_max = 0;",
            "    for (int c = 0; c < KC_NCOPIES; c++) {",
            "        if (s->t_ovf_hi[c] <= end) continue;",
            "        uint64_t a = s->t_ovf_lo[c] > nlo ? s->t_ovf_lo[c] : nlo, b = s->t_ovf_hi[c] < nend ? s->t_ovf_hi[c] : nend;",
            "        kc_cal_mark(s->t_cal + c, a, b);",
            "        if (s->t_ovf_hi[c] <= nend) { s->t_ovf_lo[c] = s->t_ovf_hi[c] = 0; continue; }",
            "        if (s->t_ovf_lo[c] < nend) s->t_ovf_lo[c] = nend;",
            "        if (s->t_ovf_hi[c] > s->t_ovf_max) s->t_ovf_max = s->t_ovf_hi[c];",
            "    }",
            "}",
            "/* A fresh start (nothing issued since the reset): empty calendars. */",
            "static void kc_cal_reset(kc_s *restrict s) {",
            "    memset(s->t_cal, 0, sizeof s->t_cal);",
            "    memset(s->t_ovf_lo, 0, sizeof s->t_ovf_lo);",
            "    memset(s->t_ovf_hi, 0, sizeof s->t_ovf_hi);",
            "    memset(s->t_run_lo, 0, sizeof s->t_run_lo);",
            "    memset(s->t_run_hi, 0, sizeof s->t_run_hi);",
            "    s->t_cal_lo = s->t_ovf_max = 0;",
            "}",
            "/* Book k >= 1 slots on the copy of unit u that has them free earliest at or after t; returns the start.",
            "   [t_run_lo, t_run_hi) is a stretch of a copy's cycles known to be booked, grown from its bookings",
            "   here: a search that starts inside it skips it (an iterative unit booked far ahead). */",
            "static inline uint64_t kc_cal_book(kc_s *restrict s, int u, uint64_t t, uint64_t k) {",
            "    uint64_t end = s->t_cal_lo + KC_CAL_R, best = UINT64_MAX;",
            "    int c = unit_base[u];",
            "    for (int i = unit_base[u]; i < unit_base[u] + unit_copies[u]; i++) {",
            "        uint64_t x = t >= s->t_run_lo[i] && t < s->t_run_hi[i] ? s->t_run_hi[i] : t;",
            "        uint64_t st = kc_cal_find(s->t_cal + i, x, k, end);",
            "        if (st + k > end && st < s->t_ovf_hi[i]) st = s->t_ovf_hi[i];",
            "        if (st < best) { best = st; c = i; if (st == t) break; }",
            "    }",
            "    if (best + k > end) {  /* runs past the calendar */",
            "        if (s->t_ovf_hi[c] <= end) s->t_ovf_lo[c] = best > end ? best : end;",
            "        s->t_ovf_hi[c] = best + k;",
            "        if (best + k > s->t_ovf_max) s->t_ovf_max = best + k;",
            "    }",
            "    if (best < end) kc_cal_mark(s->t_cal + c, best, best + k < end ? best + k : end);",
            "    if (best <= s->t_run_hi[c] && best + k >= s->t_run_lo[c]) {  /* touches the stretch: extend it */",
            "        if (best < s->t_run_lo[c]) s->t_run_lo[c] = best;",
            "        if (best + k > s->t_run_hi[c]) s->t_run_hi[c] = best + k;",
            "    } else if (best > s->t_run_hi[c]) {  /* a later one: follow it */",
            "        s->t_run_lo[c] = best; s->t_run_hi[c] = best + k;",
            "    }",
            "    return best;",
            "}",
            "/* Issue on unit u at the earliest free slot(s) at or after t; returns the start cycle. */",
            "static inline KC_HOT uint64_t kc_unit(kc_s *restrict s, int u, uint64_t t, uint64_t cyc, uint64_t lat) {",
            "    if (u < 0) return t;",
            "    uint64_t *q = 0;",
            "    if (unit_async[u] && unit_queue[u] > 0) {  /* at most `queue` operations in flight */",
            "        q = s->queue + unit_base[u] * 64;",
            "        uint64_t oldest = q[s->qhead[u] % unit_queue[u]];",
            "        if (oldest > t) t = oldest;",
            "    }",
            "    uint64_t k = unit_piped[u] ? 1 : cyc;",
            "    if (k) t = kc_cal_book(s, u, t, k);",
            "    if (q) q[s->qhead[u]++ % unit_queue[u]] = t + lat;",
            "    return t;",
            "}",
            "/* The common case inline: one slot (a pipelined unit, or one cycle) free in t's 64-cycle word on",
            "   some copy of unit u (u >= 0, not a queued async unit); returns its cycle, else UINT64_MAX. */",
            "static inline KC_HOT uint64_t kc_unit_fast(kc_s *restrict s, int u, uint64_t t, uint64_t cyc) {",
            "    if ((unit_async[u] && unit_queue[u] > 0) || (!unit_piped[u] && cyc != 1) || t - s->t_cal_lo >= KC_CAL_R)",
            "        return UINT64_MAX;",
            "    uint64_t *w = &KC_CAL_WORD(s->t_cal + unit_base[u], t), b = UINT64_C(1) << (t & 63), bm = 0;",
            "    int n = unit_copies[u], bi = -1;",
            "    for (int i = 0; i < n; i++)  /* a copy free at t */",
            "        if (!(w[i] & b)) { w[i] |= b; return t; }",
            "    for (int i = 0; i < n; i++) {  /* the earliest free later in the word */",
            "        uint64_t m = ~w[i] & -b;",
            "        if (m & -m & (bm - 1)) { bm = m & -m; bi = i; }",
            "    }",
            "    if (bi < 0) return UINT64_MAX;",
            "    w[bi] |= bm;",
            "    return (t & ~UINT64_C(63)) + (uint64_t)__builtin_ctzll(bm);",
            "}"]

    def _binding_units(self) -> set[int]:
        """Units that can delay an issue. With one issue per cycle, a unit whose instructions all
        occupy it one cycle (or that is pipelined, and not a queued async unit) is always free again
        by the next issue, so the simulator does not track it."""
        if getattr(self, "_binding", None) is not None:
            return self._binding
        width = self.props.get("issue_width", 1) if self.timing and self.timing.model == "inorder" else 0
        out = set()
        for i, name in enumerate(self.units):
            u = next(x for x in self.timing.units if x.name == name)
            if width != 1 or (u.is_async and u.queue is not None):
                out.add(i)
                continue
            if u.pipelined:
                continue
            for n, e in self.encs.items():
                if e.insn.insn.unit == name and (self._const_cycles(n) or 2) > 1:
                    out.add(i)
                    break
        self._binding = out
        return out

    def _const_cycles(self, name: str) -> Optional[int]:
        """An instruction's `cycles` when it depends on parameters only (its busy time is then counted
        from the instruction counts after the run, not in the loop)."""
        e = self.encs[name].insn.insn.cycles
        if e is None:
            return 1
        try:
            return self.spec.params_eval(e)
        except Exception:  # reads operands: counted at run time
            return None

    def _ready_max(self) -> list[str]:
        """The run ends when the last result is ready: the latest ready time of any register or state."""
        out = []
        for st in self.L.stores.values():
            if st.kind in ("reg", "state"):
                n = st.shape[0] if st.kind == "reg" else 1
                out.append(f"    for (int k = 0; k < {max(n, 1)}; k++) if (s->rdy_{st.name}[k] > end) end = s->rdy_{st.name}[k];")
        return out

    def _resets(self) -> str:
        """Per-instruction timing scratch to clear: only what this ISA's model uses."""
        model = self.timing.model if self.timing else "none"
        out = []
        if self.tracked or model == "vliw":
            out.append("s->t_need = 0; s->t_npend = 0;")
        if model == "ooo":
            out.append("s->t_branch = 0;")
        return " ".join(out) or "/* no per-instruction timing scratch */"

    # Up to REPLICATE_MAX instructions every handler gets its own copy of the fetch-and-dispatch tail
    # (threaded code: one indirect branch per instruction, which predicts best; through one shared
    # branch boom's untimed gemm took 16 % longer on a busy host). Beyond it the handlers share one
    # tail: each computed goto may reach every handler, so copies make the control-flow graph
    # quadratic and gcc's compile time explodes (coral: minutes). Above O2_MAX instructions the run
    # loop is compiled at -O1 (boom's: 13.6 s of gcc at -O2, 3.4 s at -O1).
    REPLICATE_MAX = 160
    O2_MAX = 96
    UNROLL_SUMS = 8  # interchanged reductions: outer loops unrolled up to this many rows of sums
    INLINE_LINES = 12  # instruction bodies up to this many lines of C are inlined into the run loop

    @property
    def _hot(self) -> str:
        """Small ISAs inline the timing helpers into every handler; large ones call them."""
        return "KC_HOT" if self.replicate_tails else ""

    @property
    def replicate_tails(self) -> bool:
        return len(self.names) <= self.REPLICATE_MAX

    @property
    def extra_cflags(self) -> list[str]:
        """With replicated tails, let gcc keep one dispatch jump per handler instead of merging them.
        A large ISA's run loop (over O2_MAX handlers) is compiled with -O1: -O2 triples gcc's time on
        it (coral: 14 s -> 5 s of CPU) for a few percent of speed; its out-of-line instructions keep -O2."""
        return ["--param=max-goto-duplication-insns=100"] if self.replicate_tails else []

    @property
    def unit_cflags(self) -> dict[str, list[str]]:
        """Extra flags per translation unit."""
        return {"sim.c": [] if len(self.names) <= self.O2_MAX else ["-O1"], "sim_ops.c": []}

    def compile_units(self, machine: str) -> list[tuple[str, str, list[str]]]:
        """(object, source, extra flags) for each compile of the build on a host `machine`
        (platform.machine()): every .c file once, and sim.c again for x86-64-v3 (run_clone)."""
        units = [(n, n, list(self.unit_cflags.get(n, []))) for n in ("sim.c", "sim_ops.c")]
        if self.run_clone and machine in ("x86_64", "AMD64"):
            units[0][2].append("-DKC_RUN_CLONE")
            units.append(("sim_v3.c", "sim.c", self.unit_cflags["sim.c"] + ["-march=x86-64-v3", "-DKC_RUN_V3"]))
        return units

    def run_c(self) -> list[str]:
        """The run loop: every operation's handler ends by fetching the next instruction and jumping
        to its handler through the address stored in the pre-decoded operation."""
        P = self.P
        pcmask = (1 << self.L.pc_type.width) - 1
        g = self.granule
        gshift = g.bit_length() - 1 if g & (g - 1) == 0 else None
        labels = ", ".join(["&&op_illegal"] + [f"&&op_{self.opnum[n]}" for n in self.names])
        at = (f"(off & {g - 1}) ? -1 : index[off >> {gshift}]" if gshift is not None else
              f"(off % {g}) ? -1 : index[off / {g}]")
        out = ["/* ---- timing model ---- */"] + self.commit_c() + [
               "/* ---- the run loop ---- */",
               f"#define KC_POLL_STEPS UINT64_C({self.poll_steps})  /* instructions between two reads of the clock */",
               "/* The step budget, and every KC_POLL_STEPS instructions the wall clock when the run has a",
               "   limit: the run loop stops at `stop` (no limit: stop = max_steps, the budget alone). */",
               f"static uint64_t kc_stop({P}_state *restrict s, uint64_t step, uint64_t max_steps, uint64_t pc)",
               "    __attribute__((noinline, cold));",
               f"static uint64_t kc_stop({P}_state *restrict s, uint64_t step, uint64_t max_steps, uint64_t pc) {{",
               "    s->pc = pc;",
               "    if (step == max_steps) { s->status = 3; return 0; }",
               "    if (kc_now_ns(1) >= s->deadline) {",
               "        s->status = 4;",
               "        kc_trap_set(&s->trap, KC_TRAP_TIMEOUT, pc, \"wall-clock limit of %g s exceeded\", (double)s->wall_ns / 1e9);",
               "        return 0;",
               "    }",
               "    return max_steps - step > KC_POLL_STEPS ? step + KC_POLL_STEPS : max_steps;",
               "}",
               "/* Fetch the instruction (or bundle) at pc and jump to its first operation. */",
               "#define KC_FETCH() do { \\",
               "    if (step == stop && !(stop = kc_stop(s, step, max_steps, pc))) return s->status; \\",
               "    s->t_step = ++step;  /* fetched; run() turns this into retired instructions */ \\",
               "    uint64_t off = pc - base; \\",
               "    s->pc = pc; \\",
               "    if (off >= len) { \\",
               "        if (off == len) { s->status = 1; return 1; }  /* ran off the end: done */ \\",
               "        kc_fail(s, KC_TRAP_PC, \"pc %#llx is outside the program\", (unsigned long long)pc); \\",
               "    } \\",
               f"    int64_t at = {at}; \\",
               "    if (at < 0) kc_fail(s, KC_TRAP_PC, \"pc %#llx is not at the start of an instruction\", \\",
               "                        (unsigned long long)pc); \\",
               "    d = &ops[at]; \\",
               "    size = d->size; npc = pc + size; halt = 0; \\",
               f"    {self._resets()} \\",
               "    goto *d->h; \\",
               "} while (0)",
               "/* The next instruction in program order: the op after this one (no pc lookup). */",
               "#define KC_FETCH_NEXT() do { \\",
               "    if (step == stop && !(stop = kc_stop(s, step, max_steps, pc))) return s->status; \\",
               "    s->t_step = ++step; \\",
               "    s->pc = pc; \\",
               "    if (++d == ops_end) { s->status = 1; return 1; }  /* ran off the end: done */ \\",
               "    size = d->size; npc = pc + size; halt = 0; \\",
               f"    {self._resets()} \\",
               "    goto *d->h; \\",
               "} while (0)",
               "/* After an operation: the next slot of the bundle, or finish the instruction and fetch. */",
               "#define KC_NEXT() do { \\",
               "    counts[d->op]++; \\",
               "    if (!d->last) { d++; goto *d->h; } \\",
               "    int taken = npc != pc + size; \\",
               *self.redirect_c(),
               *self.exposed_next_c(),
               f"    if (!untimed) kc_group_done(s, taken{', pc, npc, pc + size' if self.predictor else ''}); \\",
               f"    pc = npc & UINT64_C({pcmask:#x}); \\",
               "    if (halt) { s->pc = pc; s->status = 1; s->halted = 1; return 1; } \\",
               "    if (!taken && pc == npc) KC_FETCH_NEXT(); \\",
               "    KC_FETCH(); \\",
               "} while (0)",
               "",
               *([f"#ifdef KC_RUN_V3  /* the second build of this file: the run loop alone (run_clone) */",
                  f"int {P}_run_inner_v3({P}_state *restrict s, uint64_t max_steps) {{",
                  "#else"] if self.run_clone else []),
               f"static int run_inner({P}_state *restrict s, uint64_t max_steps) {{",
               *(["#endif"] if self.run_clone else []),
               f"    static const void *const dispatch[] = {{ {labels} }};",
               f"    {P}_op *const ops = s->ops;",
               f"    const {P}_op *const ops_end = ops + s->nops;",
               "    if (!s->threaded) {  /* once per program: each op points at its handler */",
               "        for (uint32_t k = 0; k < s->nops; k++) ops[k].h = dispatch[ops[k].op];",
               "        s->threaded = 1;",
               "    }"
               "    const int64_t *const index = s->index;",
               "    uint64_t *const counts = s->counts;",
               "    const uint64_t base = s->text_base, len = s->text_len;",
               "    uint64_t pc = s->pc, npc = 0, size = 0, step = 0;",
               "    uint64_t stop = s->deadline && max_steps > KC_POLL_STEPS ? KC_POLL_STEPS : max_steps;",
               f"    const {P}_op *d = ops;",
               "    int halt = 0;",
               "    const uint32_t untimed = s->untimed;  /* read once: the branches on it always go one way */",
               "    KC_FETCH();",
               "op_illegal:",
               "    kc_fail(s, KC_TRAP_ILLEGAL, \"illegal instruction %#llx\", (unsigned long long)d->a[0]);"]
        for name in self.names:
            cyc, lat, _ = self.costs[name]
            out.append(f"op_{self.opnum[name]}: {{  /* {name} */")
            out.append("    uint64_t need_v = 0, *need = &need_v;  /* ready time of what it reads */")
            out.append(f"    uint64_t c = (uint64_t)({cyc}), l = (uint64_t)({lat});")
            out.append("    (void)need;")
            if self.tracked or (self.timing is not None and self.timing.model == "vliw"):
                out.append("    s->t_lat = l;")
            waits, peeks = self._exposed_writes(name), self._exposed_peeks(name)
            byp, saves = self._bypass_of(name)
            for j, (file, k) in enumerate(waits):  # exposed: what readers see until the result lands
                out.append(f"    uint8_t xo{j}[{self._exposed_bytes(file)}]; "
                           f"int xv{j} = kc_xget_{file}(s, (uint64_t)d->a[{k}], xo{j});")
            for j, (file, k) in enumerate(peeks):  # a forwarding path: results in flight that reach it early
                out.append(f"    uint8_t xs{j}[{self._exposed_bytes(file)}]; "
                           f"int xp{j} = kc_xpeek_{file}(s, (uint64_t)d->a[{k}], {byp}, xs{j});")
            out.append(f"    halt |= x_{c_ident(name)}(s, d, pc, &npc, need);")
            for j, (file, k) in enumerate(waits):
                out.append(f"    if (xv{j}) kc_xdefer_{file}(s, (uint64_t)d->a[{k}], xo{j}, l, {byp}, {saves});")
            for j, (file, k) in reversed(list(enumerate(peeks))):  # the first saved is the value before any
                out.append(f"    if (xp{j}) kc_xput_{file}(s, (uint64_t)d->a[{k}], xs{j});")
            timing = self.timing_c(name, "        ")
            if timing:  # semantics never read timing: an untimed run computes the same state
                out += ["    if (!untimed) {"] + timing + ["    }"]
            out.append("    KC_NEXT();" if self.replicate_tails else "    goto next;")
            out.append("}")
        if not self.replicate_tails:
            out += ["next:  /* one shared tail: compile time stays linear in the number of instructions */",
                    "    KC_NEXT();"]
        out += ["}",
                "#undef KC_FETCH",
                "#undef KC_FETCH_NEXT",
                "#undef KC_NEXT",
                ""]
        if self.run_clone:
            out += ["#ifndef KC_RUN_V3",
                    "#ifdef KC_RUN_CLONE  /* kcgen.sim.build compiled this file again for x86-64-v3 */",
                    f"int {P}_run_inner_v3({P}_state *restrict s, uint64_t max_steps);",
                    f"static int kc_run_loop({P}_state *restrict s, uint64_t max_steps) {{",
                    "    static int v3 = -1;  /* the CPU's answer does not change: asked once */",
                    "    if (v3 < 0) { __builtin_cpu_init(); v3 = __builtin_cpu_supports(\"x86-64-v3\") != 0; }",
                    f"    return v3 ? {P}_run_inner_v3(s, max_steps) : run_inner(s, max_steps);",
                    "}",
                    "#else",
                    "#define kc_run_loop run_inner",
                    "#endif"]
        else:
            out += ["#define kc_run_loop run_inner"]
        out += [f"int {P}_run({P}_state *s, uint64_t max_steps) {{",
                "    jmp_buf env;",
                "    s->jmp = &env;",
                "    s->status = 0; s->trap.kind = 0; s->trap.message[0] = 0;",
                "    s->t_step = 0; s->halted = 0;",
                "    s->deadline = s->wall_ns ? kc_now_ns(0) + s->wall_ns : 0;",
                f"    s->poll_left = s->deadline ? {POLL_WORK} : INT64_MAX;"] + (
                ["    if (s->nissued == 0) kc_cal_reset(s);  /* nothing issued since the reset */"] if self._ooo else []) + [
                "    if (setjmp(env)) { s->status = s->trap.kind == KC_TRAP_TIMEOUT ? 4 : 2; }",
                "    else kc_run_loop(s, max_steps);"] + (
                ["    if (s->status != 3) kc_xcommit(s, UINT64_MAX);  /* stopped for good (not the step budget): every result lands */"]
                if self.exposed else []) + [

                "    /* the trapping instruction, or the fetch past the end, did not retire (an instruction a",
                "       timeout stopped half done took itself off t_step: kc_poll) */",
                "    s->instret += s->t_step - (s->status == 2 || (s->status == 1 && !s->halted));",
                "    uint64_t end = s->now > s->horizon ? s->now : s->horizon;"] + self._ready_max() + [
                "    s->cycles = s->untimed ? 0 : end;",
                "    s->jmp = NULL;",
                "    return s->status;",
                "}",
                f"uint64_t {P}_layout_size(void) {{ return sizeof({P}_state); }}"] + (
                ["#endif  /* KC_RUN_V3 */"] if self.run_clone else [])
        return out

    @property
    def run_clone(self) -> bool:
        """Build the run loop a second time for x86-64-v3 (sim.c again, with KC_RUN_V3; the public
        entry picks it where the CPU has it): where semantics compute f32 fused multiply-adds, fmaf
        is then one instruction instead of a call (boom's gemm: untimed 21 -> 14 ms of CPU). gcc
        cannot clone a function that keeps label addresses, hence a second compile; large ISAs are
        left out to bound gcc's time."""
        return self._fmaf and self.replicate_tails


# ---- small analyses over semantics ---------------------------------------------------------------------
def _typeref(e: ir.Expr) -> ir.TypeRef:
    from isadl.semantics import _as_typeref
    return _as_typeref(e)


def _unified(a: Type, b: Type) -> Type:
    if isinstance(a, IntLitT):
        return b
    if isinstance(b, IntLitT):
        return a
    if isinstance(a, FloatLitT):
        return b
    if isinstance(b, FloatLitT):
        return a
    if isinstance(a, IntT) and isinstance(b, IntT):
        return a if a.width >= b.width else b
    if is_float(a) and is_int(b):
        return a
    if is_float(b) and is_int(a):
        return b
    return a


def _reduce_init(op: str, t: Type) -> str:
    if op in ("sum", "or", "xor"):
        return "0"
    if op == "prod":
        return "1"
    if op == "and":
        return "1" if isinstance(t, BoolT) else ("-1" if isinstance(t, IntLitT) or t.signed else f"UINT64_C({(1 << t.width) - 1:#x})")
    lowest = op == "max"
    if is_float(t):
        return "-INFINITY" if lowest else "INFINITY"
    if isinstance(t, IntLitT):
        return "INT64_MIN" if lowest else "INT64_MAX"
    if t.signed:
        return _lit(-(1 << (t.width - 1)) if lowest else (1 << (t.width - 1)) - 1, IntLitT())
    return "UINT64_C(0)" if lowest else f"UINT64_C({(1 << t.width) - 1:#x})"


_EXPR_NODES = (ir.Num, ir.FloatLit, ir.Name, ir.Index, ir.Slice, ir.Call, ir.Reduce, ir.Unary, ir.Binary, ir.Cond)


def _walk(stmts):
    """Every statement and expression node in a body."""
    for s in stmts:
        yield s
        for k in ("cond", "value", "target", "lo", "hi", "call"):
            v = getattr(s, k, None)
            if v is not None and not isinstance(v, (str, ir.TypeRef)):
                yield from _walk_expr(v)
        for k in ("then", "orelse", "body"):
            v = getattr(s, k, None)
            if isinstance(v, tuple):
                yield from _walk(v)


def _walk_expr(e):
    yield e
    if isinstance(e, ir.Call):
        for a in e.args:
            yield from _walk_expr(a)
    elif isinstance(e, ir.Reduce):
        for k in (e.lo, e.hi, e.body):
            yield from _walk_expr(k)
    else:
        for k in ("base", "index", "hi", "lo", "operand", "left", "right", "cond", "then", "orelse"):
            v = getattr(e, k, None)
            if isinstance(v, _EXPR_NODES):
                yield from _walk_expr(v)


def _written_storage(stmts) -> set[str]:
    out = set()
    for s in _walk(stmts):
        if isinstance(s, ir.Assign):
            root, _ = ir.index_path(s.target)
            if isinstance(root, ir.Name):
                out.add(root.id)
        elif isinstance(s, ir.CallStmt) and isinstance(s.call, ir.Call) and s.call.func == "store":
            out.add(s.call.args[0].id)
    return out


def _read_state(stmts, L: Layout) -> set[str]:
    out = set()
    for n in _walk(stmts):
        if isinstance(n, ir.Name) and n.id in L.stores and L.stores[n.id].kind == "state":
            out.add(n.id)
    return out


def _static_regs(stmts, operands) -> tuple[list, list]:
    """(file, operand) pairs read and written through `FILE[operand]` (computed indices are not tracked)."""
    reads, writes = [], []
    targets = set()
    for s in _walk(stmts):
        if isinstance(s, ir.Assign):
            root, path = ir.index_path(s.target)
            if isinstance(root, ir.Name) and path and isinstance(path[0], ir.Name) and path[0].id in operands:
                if (root.id, path[0].id) not in writes:
                    writes.append((root.id, path[0].id))
                targets.add(id(s.target))
                t = s.target
                while isinstance(t, ir.Index):
                    targets.add(id(t))
                    t = t.base
    for n in _walk(stmts):
        if isinstance(n, ir.Index) and id(n) not in targets and isinstance(n.base, ir.Name) and \
                isinstance(n.index, ir.Name) and n.index.id in operands:
            key = (n.base.id, n.index.id)
            if key not in reads:
                reads.append(key)
    return reads, writes


def _call_arg(code: str, fname: str) -> Optional[str]:
    """The argument text of `code` when it is exactly one call `fname(...)`, else None."""
    if not (code.startswith(fname + "(") and code.endswith(")")):
        return None
    depth = 0
    for i, ch in enumerate(code[len(fname):], len(fname)):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i != len(code) - 1:
            return None
    return code[len(fname) + 1:-1]


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
