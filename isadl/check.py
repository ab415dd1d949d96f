"""Semantic checks: resolved IR → a validated Spec (or every located error in one pass).

Order: header and names → parameters (with -D overrides) and constraints → numeric formats and
types → storage → formats and slots → timing → functions → instructions (syntax, encoding,
timing expressions, semantics) → decoder overlap → pseudos → dialect, ABI, hwloop, examples.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Optional


from . import ir
from .diagnostics import Reporter, did_you_mean
from .encoding import Encoded, FieldLayout, FormatLayout, find_overlaps, layout
from .params import FUNCTIONS, EvalError, evaluate, names_in, resolve
from .semantics import Checker, Context, OperandInfo, RegInfo, StorageInfo, _Var
from .syntax import Operand, Template, TemplateError, parse_template
from .types import IntT, Type, VecT, is_int, scalar_by_name

BUILTIN_FLOATS = {"f32": (8, 23), "f64": (11, 52)}
TIMING_PROPS = {
    "inorder": {"issue_width", "branch_penalty", "mem_latency", "hbm_bytes_per_cycle", "dma_latency",
                "clock_mhz"},
    "ooo": {"width", "rob", "lsq", "iq", "mispredict_penalty", "mem_latency", "load_ports", "store_ports",
            "clock_mhz", "fetch_width", "commit_width"},
    "vliw": {"issue_width", "branch_delay", "delay_slots", "exposed", "mem_latency", "load_latency", "clock_mhz"},
}
# the properties the simulators' timing reads; the others are recorded (documentation, a future model) and
# say so in the generated docs (tests/sim/test_timing.py checks that they change nothing)
TIMING_MODELLED = {"inorder": {"issue_width", "branch_penalty"},
                   "ooo": {"width", "rob", "mispredict_penalty", "commit_width"},
                   "vliw": {"branch_delay", "delay_slots", "exposed"}}
TIMING_REQUIRED = {"ooo": ("width", "rob")}
# caches and branch predictors of a timing section: property -> (least value, or None for a name; must be a
# power of two)
CACHE_PROPS = {"sets": (1, True), "ways": (1, False), "line": (4, True), "hit_latency": (0, False),
               "next": (None, False), "memory_latency": (1, False), "mshrs": (1, False),
               "serves": (None, False), "storage": (None, False)}
CACHE_REQUIRED = ("sets", "ways", "line", "hit_latency")
CACHE_SERVES = ("data", "fetch")
PREDICTOR_PROPS = {"entries": (2, True), "history": (0, False), "btb": (1, True), "ras": (1, False),
                   "link": (0, False), "btb_miss_penalty": (0, False)}
PREDICTOR_REQUIRED = ("entries",)
MAX_STRUCTURE_WORDS = 1 << 22  # tags, counters and targets of all caches and predictors (32 MiB of state)
MAX_REGS = 1 << 16
MAX_FORMAT_BITS = 1024
DIALECT_OPTIONS = {
    # name: (value kinds allowed, allowed literal values or None)
    "comment": ("str", None),
    "labels": ("name", {"named", "numeric", "none"}),
    "case": ("name", {"sensitive", "insensitive"}),
    "immediate_prefix": ("str", None),
    "bundle_separator": ("str", None),
    "directives": ("directive", None),
    "ignore_directives": ("directive", None),
    "pcrel_base": ("name", {"insn", "next"}),
}
ABI_ROLES = {"in", "out", "inout", "scratch"}
_IMM_KIND = re.compile(r"(i|u|pcrel)([0-9]+)$")


@dataclass
class OperandSpec:
    name: str
    kind: str  # 'reg' | 'imm' | 'pcrel' | 'enum'
    width: int  # bits needed in the encoding
    signed: bool
    regfile: str = ""  # reg: the register file; enum: the enum name
    offset: int = 0  # regclass: encoded = index - offset
    count: int = 0  # reg: number of registers accepted
    default: Optional[int] = None

    @property
    def lo(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1


@dataclass
class InsnSpec:
    insn: ir.Instruction
    template: Template
    operands: dict[str, OperandSpec]
    format: Optional[FormatLayout]
    fields: dict[str, str]  # field -> operand bound to it
    mask: int = 0
    match: int = 0


@dataclass
class Spec:
    """A checked ISA: the IR plus the derived tables every generator reads."""
    isa: ir.ISA
    params: dict[str, int]
    defines: dict[str, int]
    types: dict[str, Type]  # regfiles, states and memories by name → element type
    formats: dict[str, FormatLayout]
    instructions: dict[str, InsnSpec]
    pseudos: dict[str, Template]
    regnames: dict[str, tuple[str, int]]  # assembly name → (file, index)
    sources: dict[str, str] = field(default_factory=dict)
    pseudo_operands: dict[str, dict[str, OperandSpec]] = field(default_factory=dict)
    context: Optional[Context] = field(default=None, repr=False, compare=False)  # what semantics can name

    def semantic_operands(self, operands: dict[str, OperandSpec]) -> dict[str, OperandInfo]:
        """How semantics see an instruction's operands (register index, immediate, target address)."""
        return semantic_operands(operands, self.context.pc_type)

    @property
    def word(self) -> int:
        return self.isa.word or 32

    @property
    def ieee_flags_state(self) -> Optional[str]:
        """The state the ieee_* builtins OR their exception flags into (None: they are dropped)."""
        return next((s.name for s in self.isa.states if s.ieee_flags), None)

    def summary(self) -> str:
        regs = sum(self.params_eval(r.count) for r in self.isa.regfiles)
        return (f"{self.isa.name}: {len(self.isa.instructions)} instructions, {len(self.isa.pseudos)} pseudos, "
                f"{len(self.isa.formats)} formats, {len(self.isa.params)} params, "
                f"{regs} registers in {len(self.isa.regfiles)} files")

    def params_eval(self, e: ir.Expr) -> int:
        return evaluate(e, lambda n: self.params[n.id])

    def preserved(self) -> list[tuple[str, int]]:
        """The kernel ABI's callee-saved registers as (register file, index), in the order `abi { preserve }`
        lists them: a kernel must end with each of them holding its value at entry. Empty when the ABI
        declares none (or there is no ABI)."""
        return [(file, index) for _, file, index in self.preserved_registers()]

    def preserved_registers(self) -> list[tuple[str, str, int]]:
        """(name, register file, index) of each callee-saved register, ranges expanded (`s0-s11` gives
        s0, s1, ..., s11), so that a diagnosis can name the register as the ABI does."""
        abi = self.isa.abi
        return [(name, *self.regnames[name]) for name in (abi.preserve if abi else ())]


def check(isa: ir.ISA, reporter: Reporter, defines: Mapping[str, int] | None = None) -> Optional[Spec]:
    return _Check(isa, reporter, dict(defines or {})).run()


class _Check:
    def __init__(self, isa: ir.ISA, reporter: Reporter, defines: dict[str, int]):
        self.isa = isa
        self.r = reporter
        self.defines = defines
        self.params: dict[str, int] = {}
        self.floats: dict[str, int] = {k: 1 + e + m for k, (e, m) in BUILTIN_FLOATS.items()}
        self.types: dict[str, Type] = {}
        self.regs: dict[str, RegInfo] = {}
        self.storage: dict[str, StorageInfo] = {}
        self.regnames: dict[str, tuple[str, int]] = {}
        self.formats: dict[str, FormatLayout] = {}
        self.enums: dict[str, ir.Enum] = {}
        self.insns: dict[str, InsnSpec] = {}
        self.pseudos: dict[str, Template] = {}
        self.pseudo_operands: dict[str, dict[str, OperandSpec]] = {}
        self.units: set[str] = set()
        self.mnemonics: set[str] = set()
        self.word = isa.word or 32
        self.timing_ok = True
        self.regclasses: dict[str, tuple[str, int, int]] = {}  # name -> (file, lo, hi) when valid

    def error(self, loc: ir.Loc, message: str) -> None:
        self.r.error(loc, message)

    def check_ieee_flags(self, st: ir.State, t: Type, dims: tuple) -> None:
        """The ieee_flags state: one, a writable unsigned scalar of at least the five flag bits."""
        first = next(s for s in self.isa.states if s.ieee_flags)
        if first is not st:
            self.error(st.loc, f"state {st.name}: only one state can be ieee_flags (state {first.name} already is)")
        elif dims or not isinstance(t, IntT) or t.signed or t.width < 5:
            self.error(st.loc, f"state {st.name}: an ieee_flags state must be an unsigned integer scalar of at least "
                               f"5 bits (NV 16, DZ 8, OF 4, UF 2, NX 1), not {'an array' if dims else t}")
        elif st.readonly:
            self.error(st.loc, f"state {st.name}: an ieee_flags state is written by the ieee_* builtins; it cannot be readonly")

    def run(self) -> Optional[Spec]:
        isa = self.isa
        self.header()
        self.names()
        self.parameters()
        self.numeric_formats()
        self.storage_decls()
        self.enum_decls()
        self.format_decls()
        self.timing()
        self.ctx = Context(self.params, self.regs, self.storage, self.floats, {m.name for m in isa.mxs},
                           {f.name: f for f in isa.functions}, self.resolve_type,
                           self.pc_type(), self.error, self.broken_params)
        self.functions()
        for insn in isa.instructions:
            self.instruction(insn)
        self.overlaps()
        self.slot_nops()
        for p in isa.pseudos:
            self.pseudo(p)
        self.dialect()
        self.abi()
        self.hwloop()
        for ex in isa.examples:
            self.example(ex, {})
        if self.r.failed:
            return None
        return Spec(isa, self.params, self.defines, self.types, self.formats, self.insns, self.pseudos,
                    self.regnames, self.r.sources, self.pseudo_operands, self.ctx)

    # ---- header and names ------------------------------------------------------------------------
    def header(self) -> None:
        isa = self.isa
        if isa.word is not None and (isa.word % 8 or not 8 <= isa.word <= 128):
            self.error(isa.word_loc, f"word {isa.word} must be a multiple of 8 between 8 and 128")
            self.word = 32  # keep checking the rest with a sane word
        if isa.endian and isa.endian not in ("little", "big"):
            self.error(isa.loc, f"endian must be little or big, not '{isa.endian}'")

    def names(self) -> None:
        seen: dict[str, tuple[str, ir.Loc]] = {}
        groups = (("parameter", self.isa.params), ("float format", self.isa.floats), ("mx format", self.isa.mxs),
                  ("register file", self.isa.regfiles), ("register class", self.isa.regclasses),
                  ("state", self.isa.states), ("memory", self.isa.memories), ("enum", self.isa.enums),
                  ("format", self.isa.formats), ("slot", self.isa.slots), ("function", self.isa.functions),
                  ("instruction", self.isa.instructions), ("pseudo", self.isa.pseudos))
        for what, items in groups:
            for item in items:
                if item.name in seen:
                    other, loc = seen[item.name]
                    article = "an" if other[0] in "aeiou" else "a"
                    self.error(item.loc, f"duplicate name '{item.name}': already {article} {other} at line {loc.line}")
                    continue
                if what not in ("instruction", "pseudo", "parameter") and \
                        (scalar_by_name(item.name, {}) is not None or item.name in BUILTIN_FLOATS):
                    self.error(item.loc, f"'{item.name}' is a built-in type name")
                    continue
                if item.name in ("pc", "true", "false", "inf", "nan") and what != "instruction" and \
                        not (what == "state" and item.name == "pc"):  # `state pc: u64` sets the pc type
                    self.error(item.loc, f"'{item.name}' is a reserved name")
                    continue
                seen[item.name] = (what, item.loc)

    # ---- parameters ------------------------------------------------------------------------------
    def parameters(self) -> None:
        known = {p.name for p in self.isa.params}
        for name in self.defines:
            if name not in known:
                self.error(ir.NOWHERE, f"-D {name}: no such parameter in isa {self.isa.name}"
                                       f"{did_you_mean(name, known)}")
        values, errors = resolve(self.isa.params, {k: v for k, v in self.defines.items() if k in known})
        for e in errors:
            self.error(e.loc, e.message)
        self.params = values
        self.broken_params = {p.name for p in self.isa.params} - set(values)
        for c in self.isa.constraints:
            try:
                ok = evaluate(c.cond, self.param_lookup)
            except EvalError as exc:
                self.error(exc.loc, exc.message)
                continue
            except _Missing:
                continue
            if not ok:
                used = sorted({n.id for n in names_in(c.cond) if n.id in self.params})
                vals = ", ".join(f"{n}={self.params[n]}" for n in used)
                self.error(c.loc, f"constraint failed{f' ({vals})' if vals else ''}: {c.message}")

    def param_lookup(self, name: ir.Name) -> int:
        if name.id in self.params:
            return self.params[name.id]
        if any(p.name == name.id for p in self.isa.params):
            raise _Missing()  # its own error was reported
        raise EvalError(name.loc, f"unknown parameter '{name.id}'{did_you_mean(name.id, self.params)}")

    def quiet_const(self, e: ir.Expr) -> Optional[int]:
        """The value of a constant expression whose errors are reported elsewhere, or None."""
        try:
            return evaluate(e, self.param_lookup)
        except (EvalError, _Missing):
            return None

    def const(self, e: ir.Expr, what: str, minimum: Optional[int] = None) -> Optional[int]:
        try:
            v = evaluate(e, self.param_lookup)
        except EvalError as exc:
            self.error(exc.loc, exc.message if "constant" not in exc.message else f"{what} must be a constant: {exc.message}")
            return None
        except _Missing:
            return None
        if minimum is not None and v < minimum:
            self.error(e.loc, f"{what} must be at least {minimum}, got {v}")
            return None
        return v

    # ---- numeric formats and types -------------------------------------------------------------------
    def numeric_formats(self) -> None:
        for f in self.isa.floats:
            args = self.kwargs(f.args, {"exp": "int", "man": "int", "bias": "int", "finite": "flag",
                                        "unsigned": "flag", "nonan": "flag"}, f"float {f.name}")
            if args is None:
                continue
            for req in ("exp", "man"):
                if req not in args:
                    self.error(f.loc, f"float {f.name} needs {req}=N")
            if "exp" not in args or "man" not in args:
                continue
            exp, man = args["exp"], args["man"]
            if not 1 <= exp <= 15:
                self.error(self._arg_loc(f.args, "exp"), f"float {f.name}: exp={exp} must be between 1 and 15")
                continue
            bits = exp + man + (0 if "unsigned" in args else 1)
            if bits > 64:
                self.error(f.loc, f"float {f.name} is {bits} bits wide; at most 64")
                continue
            self.floats[f.name] = bits
        fmt_names = set(self.floats)
        float_args = {f.name: {a.key: a.value for a in f.args} for f in self.isa.floats}
        for m in self.isa.mxs:
            args = self.kwargs(m.args, {"elem": "name", "scale": "name", "block": "int", "rule": "name"},
                               f"mx {m.name}")
            if args is None:
                continue
            rule = args.get("rule", "ocp")
            if rule not in ir.MX_RULES:
                self.error(self._arg_loc(m.args, "rule"), f"mx {m.name}: unknown rule '{rule}' (one of "
                                                          f"{', '.join(ir.MX_RULES)}){did_you_mean(rule, ir.MX_RULES)}")
            elif rule == "plena":
                self._plena_rule_formats(m, args, float_args)
            for req in ("elem", "scale", "block"):
                if req not in args:
                    self.error(m.loc, f"mx {m.name} needs {req}=...")
            for key in ("elem", "scale"):
                if key in args and args[key] not in fmt_names and scalar_by_name(args[key], {}) is None:
                    self.error(self._arg_loc(m.args, key), f"mx {m.name}: unknown element format '{args[key]}'"
                                                          f"{did_you_mean(args[key], fmt_names)}")
            if args.get("block", 1) < 1:
                self.error(self._arg_loc(m.args, "block"), f"mx {m.name}: block must be at least 1")

    def _plena_rule_formats(self, m, args, float_args) -> None:
        """The PLENA emulator's rule reads the element as an IEEE-style float (all-ones exponent Inf/NaN,
        default bias) and the scale as an 8-bit unsigned exponent whose 0xFF is infinity."""
        elem, scale = float_args.get(args.get("elem")), float_args.get(args.get("scale"))
        if elem is not None and ("finite" in elem or "nonan" in elem or "unsigned" in elem or elem.get("man", 0) < 1
                                 or elem.get("bias", (1 << (elem.get("exp", 1) - 1)) - 1)
                                 != (1 << (elem.get("exp", 1) - 1)) - 1 or elem.get("exp", 0) + elem.get("man", 0) > 7):
            self.error(self._arg_loc(m.args, "elem"), f"mx {m.name}: rule=plena needs a signed element format of "
                                                      "at most 8 bits with a mantissa, the default bias and neither "
                                                      "`finite` nor `nonan` (its all-ones exponent is Inf/NaN)")
        if scale is not None and (scale.get("exp") != 8 or scale.get("man") != 0 or "unsigned" not in scale
                                  or "finite" in scale or "bias" in scale):
            self.error(self._arg_loc(m.args, "scale"), f"mx {m.name}: rule=plena needs the scale format "
                                                       "float(exp=8, man=0, unsigned): 0 is zero, 0xFF infinity")

    @staticmethod
    def _arg_loc(args, key):
        return next((a.loc for a in args if a.key == key), ir.NOWHERE)

    def kwargs(self, args, allowed: dict[str, str], what: str) -> Optional[dict]:
        out: dict = {}
        ok = True
        for a in args:
            kind = allowed.get(a.key)
            if kind is None:
                self.error(a.loc, f"{what}: unknown argument '{a.key}'{did_you_mean(a.key, allowed)}")
                ok = False
            elif a.key in out:
                self.error(a.loc, f"{what}: '{a.key}' given twice")
                ok = False
            elif kind == "flag" and a.value is not None:
                self.error(a.loc, f"{what}: '{a.key}' is a flag and takes no value")
                ok = False
            elif kind == "int" and not isinstance(a.value, int):
                self.error(a.loc, f"{what}: '{a.key}' needs an integer value")
                ok = False
            elif kind == "name" and not isinstance(a.value, str):
                self.error(a.loc, f"{what}: '{a.key}' needs a format name")
                ok = False
            else:
                out[a.key] = a.value if kind != "flag" else True
        return out if ok else None

    def resolve_type(self, t: ir.TypeRef) -> Optional[Type]:
        base = scalar_by_name(t.name, self.floats)
        if base is None:
            return None
        for d in reversed(t.dims):
            try:
                n = evaluate(d, self.param_lookup)
            except (EvalError, _Missing):
                return None
            if n < 1:
                return None
            base = VecT(base, n)
        return base

    def type_or_error(self, t: ir.TypeRef, what: str) -> Optional[Type]:
        r = self.resolve_type(t)
        if r is None:
            if scalar_by_name(t.name, self.floats) is None:
                known = set(self.floats) | {"bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"}
                self.error(t.loc, f"unknown type '{t.name}' for {what}{did_you_mean(t.name, known)}")
            else:
                for d in t.dims:
                    self.const(d, f"the size of {what}", 1)
        return r

    def pc_type(self) -> Type:
        st = self.storage.get("pc")
        return st.type if st and not st.dims else IntT(False, 32)

    # ---- storage -----------------------------------------------------------------------------------------
    def storage_decls(self) -> None:
        for rf in self.isa.regfiles:
            self.regfile(rf)
        for rc in self.isa.regclasses:
            base = self.regs.get(rc.file)
            if base is None:
                self.error(rc.file_loc, f"register class {rc.name}: unknown register file '{rc.file}'"
                                        f"{did_you_mean(rc.file, self.regs)}")
                continue
            lo, hi = self.const(rc.lo, "the class start"), self.const(rc.hi, "the class end")
            if lo is None or hi is None:
                continue
            if lo > hi:
                self.error(rc.lo.loc, f"register class {rc.name}: {rc.file}[{lo}..{hi}] is reversed; "
                                      f"write {rc.file}[{hi}..{lo}]")
            elif not (0 <= lo and hi < base.count):
                self.error(rc.lo.loc, f"register class {rc.name}: {rc.file}[{lo}..{hi}] is outside "
                                      f"{rc.file}[0..{base.count - 1}]")
            else:
                self.regclasses[rc.name] = (rc.file, lo, hi)
        for st in self.isa.states:
            t = self.type_or_error(st.type, f"state {st.name}")
            dims = tuple(self.const(d, f"a dimension of state {st.name}", 1) for d in st.dims)
            if t is None or None in dims:
                continue
            if st.name == "pc" and (dims or not isinstance(t, IntT) or t.signed):
                self.error(st.loc, "state pc must be an unsigned integer scalar, such as u32 or u64")
                continue
            if st.init is not None:
                chk = Checker(self.ctx_partial())
                it = chk.expr(st.init)
                if it is not None:
                    chk.coerce(it, t, st.init, f"state {st.name}")
                    if not chk.is_static(st.init):
                        self.error(st.init.loc, f"the initial value of state {st.name} must be a constant")
            if st.readonly and st.untimed:
                self.error(st.loc, f"state {st.name} is readonly: no instruction writes it, so `untimed` means nothing")
            self.storage[st.name] = StorageInfo(dims, t, st.readonly)
            self.types[st.name] = t
            if st.ieee_flags:
                self.check_ieee_flags(st, t, dims)
        for m in self.isa.memories:
            t = self.type_or_error(ir.TypeRef(m.elem, (), m.loc), f"memory {m.name}")
            size = self.const(m.size, f"the size of memory {m.name}", 1)
            if m.base is not None:
                self.const(m.base, f"the base of memory {m.name}", 0)
            if m.align is not None:
                a = self.const(m.align, f"the alignment of memory {m.name}", 1)
                if a is not None and a & (a - 1):
                    self.error(m.align.loc, f"the alignment of memory {m.name} must be a power of two, got {a}")
            if t is None or size is None:
                continue
            if isinstance(t, VecT):
                self.error(m.loc, f"memory {m.name}: elements must be scalars")
                continue
            self.storage[m.name] = StorageInfo((size,), t, m.readonly, memory=True)
            self.types[m.name] = t

    def ctx_partial(self) -> Context:
        return Context(self.params, self.regs, self.storage, self.floats, {m.name for m in self.isa.mxs},
                       {}, self.resolve_type, IntT(False, 32), self.error)

    def regfile(self, rf: ir.RegFile) -> None:
        t = self.type_or_error(rf.type, f"register file {rf.name}")
        count = self.const(rf.count, f"the size of register file {rf.name}", 1)
        if count is not None and count > MAX_REGS:
            self.error(rf.count.loc, f"register file {rf.name} has {count} registers; at most {MAX_REGS}")
            return
        if t is None or count is None:
            return
        pattern = rf.asm or rf.name + "{n}"
        if "{n}" not in pattern and count > 1:
            self.error(rf.asm_loc, f"register file {rf.name}: asm pattern '{pattern}' must contain {{n}}")
            return
        names = {pattern.replace("{n}", str(i)): i for i in range(count)}
        for name, i in names.items():
            self._regname(name, rf.name, i, rf.loc)
        zero = set()
        for z, zloc in zip(rf.zero, rf.zero_locs or (rf.loc,) * len(rf.zero)):
            if z not in names:
                self.error(zloc, f"register file {rf.name}: zero register '{z}' is not one of its registers"
                                   f"{did_you_mean(z, names)}")
            else:
                zero.add(names[z])
        for a in rf.aliases:
            idx = a.target if isinstance(a.target, int) else names.get(a.target)
            if idx is None or not 0 <= idx < count:
                self.error(a.target_loc, f"alias {a.name}: {rf.name} has no register {a.target}")
                continue
            self._regname(a.name, rf.name, idx, a.loc)
        if rf.group:
            self.group(rf, t, count)
        self.regs[rf.name] = RegInfo(t, count, frozenset(zero), rf.readonly)
        self.types[rf.name] = t

    def _regname(self, name: str, file: str, idx: int, loc: ir.Loc) -> None:
        if name in self.regnames and self.regnames[name] != (file, idx):
            f2, i2 = self.regnames[name]
            self.error(loc, f"register name '{name}' already names {f2}[{i2}]")
            return
        self.regnames[name] = (file, idx)

    def group(self, rf: ir.RegFile, t: Type, count: int) -> None:
        total = 0
        for part in rf.group:
            if not (isinstance(part, ir.Index) and isinstance(part.base, ir.Name)):
                self.error(part.loc, f"register group part must be FILE[index expression over n], got '{_show(part)}'")
                return
            src = self.regs.get(part.base.id)
            if src is None:
                self.error(part.loc, f"register group of {rf.name}: unknown register file '{part.base.id}'"
                                     f"{did_you_mean(part.base.id, self.regs)}")
                return
            for n in range(count):
                try:
                    i = evaluate(part.index, lambda nm: n if nm.id == "n" else self.param_lookup(nm))
                except (EvalError, _Missing) as exc:
                    if isinstance(exc, EvalError):
                        self.error(exc.loc, exc.message)
                    return
                if not 0 <= i < src.count:
                    self.error(part.loc, f"register group: {rf.name}{n} needs {part.base.id}[{i}], "
                                         f"but {part.base.id} has {src.count} registers")
                    return
            total += src.type.bits
        if total != t.bits:
            self.error(rf.group_loc, f"register group of {rf.name}: parts are {total} bits, but {rf.type.name} is {t.bits}")

    def enum_decls(self) -> None:
        for e in self.isa.enums:
            names: set[str] = set()
            for it in e.items:
                if it.name in names:
                    self.error(it.loc, f"enum {e.name}: '{it.name}' is listed twice")
                if it.value < 0:
                    self.error(it.loc, f"enum {e.name}: value {it.value} must not be negative")
                names.add(it.name)
            if e.numbers:
                m = re.fullmatch(r"u([0-9]+)", e.numbers)
                if m is None or not 1 <= int(m.group(1)) <= 64:
                    self.error(e.loc, f"enum {e.name}: '{e.numbers}' must be uN (the numbers it accepts besides "
                                      f"its names), N from 1 to 64")
                else:
                    for it in e.items:
                        if it.value >= 1 << int(m.group(1)):
                            self.error(it.loc, f"enum {e.name}: value {it.value} does not fit {e.numbers}")
            self.enums[e.name] = e

    # ---- formats, slots, timing ------------------------------------------------------------------------
    def format_decls(self) -> None:
        word = self.word
        slots = {s.name: s for s in self.isa.slots}
        for s in self.isa.slots:
            if s.width < 1:
                self.error(s.loc, f"slot {s.name} must be at least 1 bit wide")
        for f in self.isa.formats:
            width = f.width if f.width is not None else word
            if not 1 <= width <= MAX_FORMAT_BITS:
                self.error(f.width_loc, f"{'bundle' if f.bundle else 'format'} {f.name} is {width} bits wide; "
                                        f"formats are 1 to {MAX_FORMAT_BITS} bits")
                continue
            lay = layout(f, width, self.error)
            if f.bundle:
                if width % word:
                    self.error(f.width_loc, f"bundle {f.name} is {width} bits, not a multiple of the {word}-bit word")
                for fl in f.fields:
                    if fl.kind != "plain":
                        continue
                    s = slots.get(fl.name)
                    if s is None:
                        self.error(fl.loc, f"bundle {f.name} places unknown slot '{fl.name}'{did_you_mean(fl.name, slots)}")
                    elif fl.bits.width != s.width:
                        self.error(fl.loc, f"slot {s.name} is {s.width} bits, but bundle {f.name} gives it {fl.bits.width}")
                    if fl.value is not None:
                        self.error(fl.loc, f"bundle {f.name}: slot '{fl.name}' cannot have a value")
            self.formats[f.name] = lay
        bundles = [self.formats[f.name] for f in self.isa.formats if f.bundle and f.name in self.formats]
        encs = [Encoded(b.name, "bundle", b.fixed_mask, b.fixed_match, self.isa.format(b.name).loc) for b in bundles]
        for b in bundles:
            if not b.fixed_mask:
                self.error(self.isa.format(b.name).loc, f"bundle {b.name} has no fixed bits to identify it")
        find_overlaps(encs, lambda loc, msg: self.error(loc, msg.replace("instructions", "bundle formats")))

    def timing(self) -> None:
        t = self.isa.timing
        if t is None:
            return
        if t.model not in TIMING_PROPS:
            self.error(t.loc, f"unknown timing model '{t.model}'; use inorder, ooo or vliw"
                              f"{did_you_mean(t.model, TIMING_PROPS)}")
            self.timing_ok = False
            return
        for u in t.units:
            if u.name in self.units:
                self.error(u.loc, f"duplicate unit '{u.name}'")
            self.units.add(u.name)
            for what, e in (("count", u.count), ("queue", u.queue)):
                if e is not None:
                    self.const(e, f"the {what} of unit {u.name}", 1)
        props = TIMING_PROPS[t.model]
        given = set()
        for p in t.props:
            if p.name not in props:
                self.error(p.loc, f"timing {t.model} has no property '{p.name}'{did_you_mean(p.name, props)}")
                continue
            if p.name in given:
                self.error(p.loc, f"timing property '{p.name}' given twice")
            given.add(p.name)
            self.const(p.value, f"timing property {p.name}", 0)
        for req in TIMING_REQUIRED.get(t.model, ()):
            if req not in given:
                self.error(t.loc, f"timing {t.model} needs '{req} = ...'")
        if t.model == "vliw" and not self.isa.slots:
            self.error(t.loc, "timing vliw needs slot declarations")
        self.structures(t)

    def structures(self, t: ir.Timing) -> None:
        """Caches and branch predictors: known properties, constant sizes, a chain of caches that ends
        in memory, one cache per kind of access, a predictor only where branches are predicted (ooo)."""
        names: set[str] = set()
        words = 0
        for x in t.caches + t.predictors:
            known, required = (CACHE_PROPS, CACHE_REQUIRED) if x.kind == "cache" else (PREDICTOR_PROPS, PREDICTOR_REQUIRED)
            if x.name in names:
                self.error(x.loc, f"duplicate cache or predictor '{x.name}'")
            names.add(x.name)
            values: dict = {}
            for p in x.props:
                if p.name not in known:
                    self.error(p.loc, f"{x.kind} {x.name} has no property '{p.name}'{did_you_mean(p.name, known)}")
                    continue
                if p.name in values:
                    self.error(p.loc, f"{x.kind} property '{p.name}' given twice")
                    continue
                least, pow2 = known[p.name]
                if least is None:
                    if not isinstance(p.value, ir.Name):
                        self.error(p.value.loc, f"the {p.name} of {x.kind} {x.name} is a name")
                        values[p.name] = None
                        continue
                    values[p.name] = p.value.id
                    continue
                v = self.const(p.value, f"the {p.name} of {x.kind} {x.name}", least)
                if v is not None and pow2 and v & (v - 1):
                    self.error(p.value.loc, f"the {p.name} of {x.kind} {x.name} must be a power of two, got {v}")
                    v = None
                values[p.name] = v
            for req in required:
                if req not in values:
                    self.error(x.loc, f"{x.kind} {x.name} needs '{req} = ...'")
            if x.kind == "predictor":
                if t.model != "ooo":
                    self.error(x.loc, f"a branch predictor needs timing ooo (timing {t.model} has a fixed branch rule)")
                if len(t.predictors) > 1 and x is t.predictors[1]:
                    self.error(x.loc, "one branch predictor per timing section")
                if values.get("history") is not None and values["history"] > 30:
                    self.error(x.get("history").loc, f"the history of predictor {x.name} is at most 30 bits")
                words += sum(v or 0 for v in (values.get("entries"), 2 * (values.get("btb") or 0), values.get("ras")))
                continue
            if t.model == "vliw":
                self.error(x.loc, "caches need timing inorder or ooo")
            if ("next" in values) == ("memory_latency" in values):
                self.error(x.loc, f"cache {x.name} needs either 'next = <cache>' or 'memory_latency = ...' (the last level)")
            if values.get("serves") is not None and values["serves"] not in CACHE_SERVES:
                self.error(x.get("serves").loc, f"cache {x.name} serves data or fetch, not '{values['serves']}'"
                                                f"{did_you_mean(values['serves'], CACHE_SERVES)}")
            if values.get("serves") == "data":
                mem = values.get("storage")
                if mem is None:
                    self.error(x.loc, f"cache {x.name} serves data: name the memory it caches ('storage = ...')")
                elif mem not in {m.name for m in self.isa.memories}:
                    self.error(x.get("storage").loc, f"cache {x.name}: unknown memory '{mem}'"
                                                     f"{did_you_mean(mem, [m.name for m in self.isa.memories])}")
            elif "storage" in values:
                self.error(x.get("storage").loc, f"cache {x.name}: 'storage' is for a cache that serves data")
            if all(values.get(k) is not None for k in ("sets", "ways")):
                words += 2 * values["sets"] * values["ways"]
        caches = {c.name: c for c in t.caches}
        for c in t.caches:
            nxt = c.get("next")
            if isinstance(nxt, ir.Name) and nxt.id not in caches:
                self.error(nxt.loc, f"cache {c.name}: unknown next-level cache '{nxt.id}'{did_you_mean(nxt.id, caches)}")
            seen, cur = {c.name}, nxt  # the chain of next levels must end in memory
            while isinstance(cur, ir.Name) and cur.id in caches:
                if cur.id in seen:
                    self.error(c.loc, f"cache {c.name}: its next levels form a cycle")
                    break
                seen.add(cur.id)
                cur = caches[cur.id].get("next")
        served = [(c.get("serves").id, getattr(c.get("storage"), "id", "")) for c in t.caches
                  if isinstance(c.get("serves"), ir.Name)]
        for kind in set(served):
            if served.count(kind) > 1:
                self.error(t.loc, f"more than one cache serves {kind[0]}" + (f" of memory {kind[1]}" if kind[1] else ""))
        if words > MAX_STRUCTURE_WORDS:
            self.error(t.loc, f"the caches and predictors hold {words} entries, more than {MAX_STRUCTURE_WORDS}")

    # ---- functions ------------------------------------------------------------------------------------
    def functions(self) -> None:
        import networkx as nx  # here, not at import: a cached load never checks (networkx: 0.1 s to import)
        graph = nx.DiGraph()
        for fn in self.isa.functions:
            graph.add_node(fn.name)
            for c in _calls(fn.body):
                if c.func in self.ctx.functions:
                    graph.add_edge(fn.name, c.func)
        for cycle in nx.simple_cycles(graph):
            fn = self.ctx.functions[cycle[0]]
            self.error(fn.loc, "recursive functions: " + " -> ".join(cycle + [cycle[0]]))
            return
        for fn in self.isa.functions:
            chk = Checker(self.ctx)
            for p in fn.params:
                pt = self.type_or_error(p.type, f"parameter {p.name} of {fn.name}")
                if p.name in chk.scopes[-1]:
                    self.error(p.loc, f"function {fn.name}: parameter '{p.name}' is listed twice")
                chk.scopes[-1][p.name] = _Var(pt, False, False, "parameter")  # None: type in error
            rt = self.type_or_error(fn.result, f"the result of {fn.name}")
            bt = chk.expr(fn.body)
            if rt is not None and bt is not None:
                chk.coerce(bt, rt, fn.body, f"the result of {fn.name}")

    # ---- instructions ----------------------------------------------------------------------------------
    def template(self, text: str, loc: ir.Loc) -> Optional[Template]:
        try:
            return parse_template(text)
        except TemplateError as exc:
            self.error(ir.Loc(loc.path, loc.line, loc.column + exc.column), str(exc))
            return None

    def operand_spec(self, op: Operand, loc: ir.Loc) -> Optional[OperandSpec]:
        col = ir.Loc(loc.path, loc.line, loc.column + op.column)
        m = _IMM_KIND.match(op.kind)
        spec: Optional[OperandSpec] = None
        if m:
            width = int(m.group(2))
            if not 1 <= width <= 64:
                self.error(col, f"operand {op.name}: immediate width {width} must be between 1 and 64")
                return None
            kind = {"i": "imm", "u": "imm", "pcrel": "pcrel"}[m.group(1)]
            spec = OperandSpec(op.name, kind, width, m.group(1) != "u")
        elif op.kind in self.regs:
            n = self.regs[op.kind].count
            spec = OperandSpec(op.name, "reg", max(1, (n - 1).bit_length()), False, op.kind, 0, n)
        elif op.kind in self.regclasses:
            file, lo, hi = self.regclasses[op.kind]
            spec = OperandSpec(op.name, "reg", max(1, (hi - lo).bit_length()), False, file, lo, hi - lo + 1)
        elif any(rc.name == op.kind for rc in self.isa.regclasses):
            return None  # the class itself is in error, reported where it is declared
        elif op.kind in self.enums:
            e = self.enums[op.kind]
            top = max((it.value for it in e.items), default=0)
            width = int(e.numbers[1:]) if re.fullmatch(r"u[0-9]+", e.numbers) else max(1, top.bit_length())
            spec = OperandSpec(op.name, "enum", width, False, op.kind)
        else:
            known = set(self.regs) | set(self.enums) | {rc.name for rc in self.isa.regclasses} | {"i12", "u5", "pcrel13"}
            self.error(col, f"operand {op.name}: unknown kind '{op.kind}' (a register file, register class, "
                            f"enum, iN, uN or pcrelN){did_you_mean(op.kind, known)}")
            return None
        if op.default is not None:
            spec.default = self.default_value(op, spec, col)
        return spec

    def default_value(self, op: Operand, spec: OperandSpec, loc: ir.Loc) -> Optional[int]:
        d = op.default
        if isinstance(d, str):
            if spec.kind == "enum":
                items = {it.name: it.value for it in self.enums[spec.regfile].items}
                if d in items:
                    return items[d]
            if spec.kind == "reg" and d in self.regnames and self.regnames[d][0] == spec.regfile:
                return self.regnames[d][1]
            self.error(loc, f"operand {op.name}: default '{d}' is not a valid {op.kind}")
            return None
        if spec.kind == "reg":
            ok = 0 <= d < spec.count
        elif spec.kind == "enum":
            ok = d in {it.value for it in self.enums[spec.regfile].items} or 0 <= d <= spec.hi
        else:
            ok = spec.lo <= d <= spec.hi
        if not ok:
            self.error(loc, f"operand {op.name}: default {d} is out of range for {op.kind}")
            return None
        return d

    def instruction(self, insn: ir.Instruction) -> None:
        tpl = self.template(insn.syntax, insn.syntax_loc) if insn.syntax else None
        if tpl is None:
            return
        self.mnemonics.add(self.norm(tpl.mnemonic))
        operands: dict[str, OperandSpec] = {}
        for op in tpl.operands:
            spec = self.operand_spec(op, insn.syntax_loc)
            if spec is not None:
                operands[op.name] = spec
        spec = InsnSpec(insn, tpl, operands, None, {})
        self.encoding(insn, spec)
        self.insns[insn.name] = spec
        if not self.timing_ok:
            pass
        elif self.isa.timing and self.isa.timing.model != "vliw" and insn.unit and insn.unit not in self.units:
            self.error(insn.unit_loc, f"instruction {insn.name}: unknown unit '{insn.unit}'{did_you_mean(insn.unit, self.units)}")
        elif self.isa.timing and insn.unit == "" and self.isa.timing.model != "vliw":
            self.error(insn.loc, f"instruction {insn.name} needs a 'unit' (timing {self.isa.timing.model} has "
                                 f"units {', '.join(sorted(self.units))})")
        elif not self.isa.timing and insn.unit:
            self.error(insn.unit_loc, f"instruction {insn.name} names unit '{insn.unit}' but the isa has no timing section")
        if insn.bypass:
            self.bypass(insn)
        chk = Checker(self.ctx, self.semantic_operands(operands))
        for what in ("cycles", "latency"):
            e = getattr(insn, what)
            if e is not None:
                t = chk.expr(e)
                if t is not None and not is_int(t):
                    self.error(e.loc, f"{what} must be an integer expression, got {t}")
        chk.block(insn.semantics)
        for w in insn.warnings:
            chk.condition(w.cond, "warn")
            if not chk.is_static(w.cond):
                self.error(w.cond.loc, "a warn condition may only use operands and parameters "
                                       "(the assembler evaluates it)")
        for ex in insn.examples:
            self.example(ex, {})

    def bypass(self, insn: ir.Instruction) -> None:
        """One forwarding path saves the same cycles for every instruction on it, and fewer than the latency."""
        n = insn.bypass_cycles
        seen = getattr(self, "_bypasses", None)
        if seen is None:
            seen = self._bypasses = {}
        first = seen.setdefault(insn.bypass, (n, insn.name))
        if n < 1:
            self.error(insn.bypass_loc, f"instruction {insn.name}: bypass {insn.bypass} must save at least 1 cycle")
        elif first[0] != n:
            self.error(insn.bypass_loc, f"instruction {insn.name}: bypass {insn.bypass} saves {n} cycle(s) here "
                                        f"but {first[0]} on {first[1]} (a path saves the same on every instruction)")
        lat = insn.latency if insn.latency is not None else insn.cycles
        try:
            value = evaluate(lat, lambda n: self.params[n.id]) if lat is not None else 1
        except Exception:
            return  # an operand-dependent latency: the simulators keep at least one cycle
        if n >= value:
            self.error(insn.bypass_loc, f"instruction {insn.name}: bypass {insn.bypass} saves {n} cycle(s) of a "
                                        f"latency of {value} (a result can reach no reader before the next cycle)")

    def semantic_operands(self, operands: dict[str, OperandSpec]) -> dict[str, OperandInfo]:
        return semantic_operands(operands, self.ctx.pc_type)

    def encoding(self, insn: ir.Instruction, spec: InsnSpec) -> None:
        enc = insn.encoding
        if enc is None:
            self.error(insn.loc, f"instruction {insn.name} has no 'encoding'")
            return
        lay = self.formats.get(enc.format)
        if lay is None:
            fmt = self.isa.format(enc.format)
            if fmt is None:
                self.error(enc.loc, f"instruction {insn.name}: unknown format '{enc.format}'"
                                    f"{did_you_mean(enc.format, [f.name for f in self.isa.formats])}")
            return
        if lay.bundle:
            self.error(enc.loc, f"instruction {insn.name}: '{enc.format}' is a bundle format; encode with a slot format")
            return
        spec.format = lay
        if insn.slot:
            slot = next((s for s in self.isa.slots if s.name == insn.slot), None)
            if slot is None:
                self.error(insn.slot_loc, f"instruction {insn.name}: unknown slot '{insn.slot}'"
                                     f"{did_you_mean(insn.slot, [s.name for s in self.isa.slots])}")
            elif slot.width != lay.width:
                self.error(enc.loc, f"instruction {insn.name}: format {lay.name} is {lay.width} bits but slot "
                                    f"{slot.name} is {slot.width}")
        elif self.isa.slots and lay.width != self.word:
            self.error(insn.loc, f"instruction {insn.name} needs a 'slot' (its format is {lay.width} bits)")
        mask, match = lay.fixed_mask, lay.fixed_match
        template_names = {op.name for op in spec.template.operands}
        bound: dict[str, str] = {}
        used_ops: dict[str, str] = {}
        for b in enc.bindings:
            fl = lay.fields.get(b.field)
            if fl is None:
                self.error(b.loc, f"format {lay.name} has no field '{b.field}'{did_you_mean(b.field, lay.fields)}")
                named = b.field if b.value is None else getattr(b.value, "id", None)
                used_ops.setdefault(named, b.field)  # do not also report the operand as unencoded
                continue
            if b.field in bound:
                self.error(b.loc, f"field '{b.field}' is bound twice")
                continue
            bound[b.field] = ""
            opname = b.field if b.value is None else (b.value.id if isinstance(b.value, ir.Name) and
                                                      b.value.id in template_names else None)
            if opname is not None and opname in template_names and opname not in spec.operands:
                used_ops.setdefault(opname, b.field)  # its kind is in error, reported at the syntax
                continue
            if opname is None and b.value is None or (opname is not None and opname not in spec.operands):
                self.error(b.loc, f"instruction {insn.name} binds field '{b.field}' to operand '{b.field}', "
                                  f"which its syntax does not have")
                continue
            if opname is not None:
                if opname in used_ops:
                    self.error(b.loc, f"operand '{opname}' is encoded twice (fields '{used_ops[opname]}' and '{b.field}')")
                    continue
                used_ops[opname] = b.field
                bound[b.field] = opname
                self.field_fits(insn, spec.operands[opname], fl, b.loc)
                continue
            mentioned = [n for n in names_in(b.value) if n.id in template_names]
            if mentioned:
                for n in mentioned:
                    used_ops.setdefault(n.id, b.field)
                self.error(b.value.loc, f"field '{b.field}' must be bound to a bare operand or a constant, "
                                        f"not '{_show(b.value)}' (scale operands with a scattered field)")
                continue
            if isinstance(b.value, ir.Name) and b.value.id not in self.params:
                if b.value.id not in self.broken_params:
                    self.error(b.value.loc, f"'{b.value.id}' is neither an operand of {insn.name} nor a parameter")
                continue
            v = self.const(b.value, f"the value of field '{b.field}'")
            if v is None:
                continue
            if v < 0 or v >= (1 << fl.value_width) or v & ((1 << fl.shift) - 1):
                self.error(b.value.loc, f"value {v:#x} does not fit in the {fl.value_width}-bit field '{b.field}'")
                continue
            mask |= fl.word_mask
            match = fl.insert(match, v)
        for name, fl in lay.fields.items():
            if name not in bound:
                if fl.default is None:
                    self.error(enc.loc, f"instruction {insn.name}: field '{name}' of format {lay.name} is not bound")
                else:
                    mask |= fl.word_mask
                    match = fl.insert(match, fl.default)
        for name in template_names:
            if name not in used_ops:
                self.error(enc.loc, f"instruction {insn.name}: operand '{name}' is not encoded in any field")
        spec.fields = {f: o for f, o in bound.items() if o}
        spec.mask, spec.match = mask, match

    def field_fits(self, insn, op: OperandSpec, fl: FieldLayout, loc: ir.Loc) -> None:
        need = op.width
        if op.kind in ("reg", "enum"):
            if need > fl.value_width:
                self.error(loc, f"field '{fl.name}' ({fl.value_width} bits) is too narrow for operand '{op.name}' "
                                f"({op.regfile or op.kind}, needs {need} bits)")
            return
        if fl.shift and need != fl.value_width:
            self.error(loc, f"field '{fl.name}' holds a {fl.value_width}-bit value whose low {fl.shift} bit"
                            f"{'s are' if fl.shift > 1 else ' is'} implicitly zero, so operand '{op.name}' must be "
                            f"{'i' if op.signed else 'u'}{fl.value_width}" + (" pc-relative" if op.kind == "pcrel" else "") +
                       f" (a multiple of {1 << fl.shift}), not {'i' if op.signed else 'u'}{need}")
            return
        if fl.value_width < need:
            self.error(loc, f"field '{fl.name}' ({fl.value_width} bits) is too narrow for operand '{op.name}' "
                            f"({'i' if op.signed else 'u'}{need}" + (" pc-relative" if op.kind == "pcrel" else "") +
                       f", needs {need} bits)")

    def overlaps(self) -> None:
        encs = []
        for spec in self.insns.values():
            if spec.format is None:
                continue
            group = spec.insn.slot or f"w{spec.format.width}"
            encs.append(Encoded(spec.insn.name, group, spec.mask, spec.match, spec.insn.loc))
        find_overlaps(encs, self.error)

    def slot_nops(self) -> None:
        for s in self.isa.slots:
            if s.nop and self.norm(s.nop) not in self.mnemonics:
                self.error(s.nop_loc, f"slot {s.name}: nop '{s.nop}' is not an instruction mnemonic")

    # ---- pseudos -----------------------------------------------------------------------------------------
    def norm(self, mnemonic: str) -> str:
        return mnemonic.lower() if self.dialect_value("case") == ("insensitive",) else mnemonic

    def dialect_value(self, name: str):
        if self.isa.dialect:
            for o in self.isa.dialect.options:
                if o.name == name:
                    return o.values
        return None

    def pseudo(self, p: ir.Pseudo) -> None:
        tpl = self.template(p.syntax, p.syntax_loc)
        if tpl is None:
            return
        operands = {}
        for op in tpl.operands:
            s = self.operand_spec(op, p.syntax_loc)
            if s is not None:
                operands[op.name] = s
        template_names = {op.name for op in tpl.operands}
        chk = Checker(self.ctx, self.semantic_operands(operands))
        for i, e in enumerate(p.expansions):
            if e.when is None and i != len(p.expansions) - 1:
                self.error(e.loc, f"pseudo {p.name}: only the last expansion may omit 'when'")
            if e.when is not None:
                if i == len(p.expansions) - 1:
                    self.error(e.loc, f"pseudo {p.name}: the last expansion must not have 'when' (it is the fallback)")
                chk.condition(e.when, "when")
            if not e.lines:
                self.error(e.loc, f"pseudo {p.name}: empty expansion")
            for line, lloc in zip(e.lines, e.line_locs or (e.loc,) * len(e.lines)):
                stripped = line.lstrip()
                word = stripped.split(None, 1)[0] if stripped else ""
                wloc = ir.Loc(lloc.path, lloc.line, lloc.column + len(line) - len(stripped))
                if self.norm(word) not in self.mnemonics:
                    self.error(wloc, f"pseudo {p.name} expands to unknown instruction '{word}'"
                                     f"{did_you_mean(self.norm(word), self.mnemonics)}")
                for m in re.finditer(r"\{([^{}]*)\}", line):
                    if m.group(1) not in template_names:
                        self.error(ir.Loc(lloc.path, lloc.line, lloc.column + m.start()),
                                   f"pseudo {p.name}: expansion uses '{{{m.group(1)}}}', which is not one of its operands")
        self.pseudos[p.name] = tpl
        self.pseudo_operands[p.name] = operands
        self.mnemonics.add(self.norm(tpl.mnemonic))

    # ---- dialect, ABI, hwloop, examples ---------------------------------------------------------------------
    def dialect(self) -> None:
        d = self.isa.dialect
        if d is None:
            return
        seen = set()
        for o in d.options:
            spec = DIALECT_OPTIONS.get(o.name)
            if spec is None:
                self.error(o.loc, f"unknown dialect option '{o.name}'{did_you_mean(o.name, DIALECT_OPTIONS)}")
                continue
            if o.name in seen:
                self.error(o.loc, f"dialect option '{o.name}' given twice")
            seen.add(o.name)
            kind, allowed = spec
            for v, vloc in zip(o.values, o.value_locs or (o.loc,) * len(o.values)):
                if kind == "directive" and not (isinstance(v, str) and v.startswith(".")):
                    self.error(vloc, f"dialect {o.name}: '{v}' is not a directive (directives start with '.')")
                elif kind == "str" and (not isinstance(v, str) or v == ""):
                    self.error(vloc, f"dialect {o.name} needs non-empty strings")
                elif allowed is not None and v not in allowed:
                    self.error(vloc, f"dialect {o.name}: '{v}' is not one of {', '.join(sorted(allowed))}")
        names = {r.name for r in d.relocs}
        seen_r = set()
        for r in d.relocs:
            if r.name in seen_r:
                self.error(r.loc, f"relocation operator %{r.name} defined twice")
            seen_r.add(r.name)
            if r.paired and r.paired not in names:
                self.error(r.paired_loc, f"%{r.name} is paired with unknown operator %{r.paired}")
            # the assembler evaluates these with the parameter-expression evaluator: only its functions
            calls = [c for c in _calls(r.value)]
            bad = [c for c in calls if c.func not in FUNCTIONS]
            for c in bad:
                self.error(c.loc, f"%{r.name}: a relocation expression may call only "
                                  f"{', '.join(sorted(FUNCTIONS))}, not {c.func}()")
            if bad:
                continue
            if calls:  # log2() and friends are not semantics builtins: check the names only
                known = set(self.params) | {r.arg, "pc"}
                for n in names_in(r.value):
                    if n.id not in known:
                        self.error(n.loc, f"%{r.name}: unknown name '{n.id}'{did_you_mean(n.id, known)}")
                continue
            chk = Checker(self.ctx)
            chk.scopes[-1][r.arg] = _Var(IntT(True, 64), False, True, "argument")
            chk.scopes[-1]["pc"] = _Var(IntT(True, 64), False, True, "argument")
            t = chk.expr(r.value)
            if t is not None and not is_int(t):
                self.error(r.value.loc, f"%{r.name} must compute an integer, got {t}")

    def abi(self) -> None:
        a = self.isa.abi
        if a is None:
            return
        if a.entry is not None:
            self.const(a.entry, "the abi entry address", 0)
        for name, aloc in zip(a.args, a.arg_locs or (a.args_loc,) * len(a.args)):
            if name not in self.regnames:
                self.error(aloc, f"abi args: unknown register '{name}'{did_you_mean(name, self.regnames)}")
        if a.end:
            kind = a.end[0]
            arg = a.end[1] if len(a.end) > 1 else ""
            if kind == "halt":
                if not arg or self.norm(arg) not in self.mnemonics:
                    self.error(a.end_loc, f"abi end halt: '{arg}' is not an instruction mnemonic"
                                          f"{did_you_mean(self.norm(arg), self.mnemonics)}" if arg else
                               "abi end halt needs the mnemonic of the instruction that ends a kernel")
            elif kind == "return":
                if arg not in self.regnames:
                    self.error(a.end_loc, f"abi end return: unknown register '{arg}'")
            else:
                self.error(a.end_loc, f"abi end must be 'halt MNEMONIC' or 'return REG', not '{kind}'")
        top = None
        if a.stack:
            reg, value = a.stack
            if reg not in self.regnames:
                self.error(a.stack_loc, f"abi stack: unknown register '{reg}'{did_you_mean(reg, self.regnames)}")
            top = self.const(value, "the abi stack top", 0)
        self.abi_preserve(a)
        scratch = []  # byte addresses [lo, hi) of the scratch regions of memories that have a base
        for rg in a.regions:
            mem = self.storage.get(rg.memory)
            if mem is None or not mem.memory:
                self.error(rg.loc, f"abi region {rg.name}: unknown memory '{rg.memory}'"
                                   f"{did_you_mean(rg.memory, [m.name for m in self.isa.memories])}")
                continue
            if rg.role not in ABI_ROLES:
                self.error(rg.loc, f"abi region {rg.name}: role must be one of {', '.join(sorted(ABI_ROLES))}")
            lo, hi = self.const(rg.lo, "a region start", 0), self.const(rg.hi, "a region end", 0)
            if lo is not None and hi is not None and not (lo < hi <= mem.dims[0]):
                self.error(rg.loc, f"abi region {rg.name}: [{lo}..{hi}] is not inside {rg.memory}[0..{mem.dims[0]}]")
            elif lo is not None and hi is not None and rg.role == "scratch":
                m = next(x for x in self.isa.memories if x.name == rg.memory)
                base = self.quiet_const(m.base) if m.base is not None else None  # (reported with the memory)
                if base is not None:
                    size = max(mem.type.bits // 8, 1)
                    scratch.append((base + lo * size, base + hi * size))
        if top is not None and a.stack[0] in self.regnames and not self.r.failed and \
                not any(lo <= top - 1 < hi for lo, hi in scratch):
            # every byte a kernel may write is declared: the stack grows down from `top`
            self.error(a.stack_loc, f"abi stack: {a.stack[0]} starts at {top:#x}, but no scratch region holds the "
                                    f"bytes below it; declare the stack (region stack: MEMORY[lo..hi] scratch)")

    def abi_preserve(self, a: ir.Abi) -> None:
        """`preserve`: every name a register of a plain file, none twice, none an argument or hard-wired zero."""
        args = {}
        for name in a.args:
            if name in self.regnames:
                args.setdefault(self.regnames[name], name)
        groups = {rf.name for rf in self.isa.regfiles if rf.group}
        seen: dict[tuple[str, int], str] = {}
        n = len(a.preserve)
        for name, loc, rng in zip(a.preserve, a.preserve_locs or (a.loc,) * n, a.preserve_ranges or ("",) * n):
            where = f"abi preserve: {rng}: " if rng else "abi preserve: "
            if name not in self.regnames:
                self.error(loc, f"{where}unknown register '{name}'"
                                f"{'' if rng else did_you_mean(name, self.regnames)}")
                continue
            reg = self.regnames[name]
            file, idx = reg
            shown = self.reg_asm_name(file, idx)
            what = where + (f"'{name}'" if shown == name else f"'{name}' ({shown})")
            if file in groups:
                self.error(loc, f"{what} is a group of other registers; list the registers it is made of")
            elif file in self.regs and idx in self.regs[file].zero:
                self.error(loc, f"{what} is hard-wired to zero")
            elif reg in args:
                self.error(loc, f"{what} is an argument register"
                                + ("" if args[reg] == name else f" ('{args[reg]}' in abi args)"))
            elif reg in seen:
                self.error(loc, f"{what} is listed twice" + ("" if seen[reg] == name else f" (first as '{seen[reg]}')"))
            else:
                seen[reg] = name

    def reg_asm_name(self, file: str, idx: int) -> str:
        """The register's name from its file's asm pattern (x8 for s0)."""
        rf = self.isa.regfile(file)
        return (rf.asm or rf.name + "{n}").replace("{n}", str(idx)) if rf else f"{file}[{idx}]"

    def hwloop(self) -> None:
        h = self.isa.hwloop
        if h is None:
            return
        for what, name, loc in (("start", h.start, h.start_loc), ("end", h.end, h.end_loc)):
            if name and name not in self.insns and self.isa.instruction(name) is None:
                self.error(loc, f"hwloop {what}: unknown instruction '{name}'"
                                  f"{did_you_mean(name, [i.name for i in self.isa.instructions])}")
        if h.depth is not None:
            self.const(h.depth, "the hardware loop depth", 1)
        for what, name in zip(("count", "start", "end"), h.registers):
            st = next((x for x in self.isa.states if x.name == name), None)
            if st is None or st.dims:
                self.error(h.registers_loc, f"hwloop registers: the loop {what} '{name}' must be a scalar state item"
                                            f"{did_you_mean(name, [x.name for x in self.isa.states])}")
        if h.registers and (self.isa.timing is None or self.isa.timing.model != "vliw"):
            self.error(h.registers_loc, "hwloop registers: register-driven loops need 'timing vliw' (the loop-back follows a bundle)")

    def example(self, ex: ir.Example, operands) -> None:
        if not ex.code.strip():
            self.error(ex.loc, "example has no code")
        chk = Checker(self.ctx, operands)
        chk.block(ex.given)
        for e in ex.expect:
            chk.condition(e, "expect")


def semantic_operands(operands: dict[str, OperandSpec], pc_type: Type) -> dict[str, OperandInfo]:
    out = {}
    for name, s in operands.items():
        if s.kind == "reg":
            out[name] = OperandInfo(IntT(False, 32), s.regfile)
        elif s.kind == "enum":
            out[name] = OperandInfo(IntT(False, 32))
        elif s.kind == "pcrel":
            out[name] = OperandInfo(pc_type)  # the absolute target address
        else:
            out[name] = OperandInfo(IntT(s.signed, s.width))
    return out


class _Missing(Exception):
    """A parameter whose own definition failed; its error is already reported."""


def _calls(e: ir.Expr):
    if isinstance(e, ir.Call):
        yield e
        for a in e.args:
            yield from _calls(a)
    elif isinstance(e, ir.Reduce):
        for k in (e.lo, e.hi, e.body):
            yield from _calls(k)
    else:
        from .params import _children
        for k in _children(e):
            yield from _calls(k)


def _show(e) -> str:
    from .printer import expr
    return expr(e)


