"""The isadl intermediate representation: frozen dataclasses, one per language construct.

Every node carries its source location in ``loc`` for diagnostics; locations never take part
in equality, hashing or canonical JSON, so ``parse(print(ir)) == ir`` compares meaning only.
Collections are tuples so that the whole IR is immutable and hashable.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union


@dataclass(frozen=True)
class Loc:
    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


NOWHERE = Loc("<generated>", 0, 0)

# Rules of `mx NAME(..., rule=R)`: how scales are chosen and elements rounded and read (docs/isadl.md).
MX_RULES = ("ocp", "plena")


def _loc():
    return field(default=NOWHERE, compare=False, hash=False, repr=False)


# ---- expressions (shared by parameters, encodings, timing and semantics) -------------

@dataclass(frozen=True)
class Num:
    value: int
    loc: Loc = _loc()


@dataclass(frozen=True)
class FloatLit:
    text: str  # kept as written (canonicalised by float()) so it prints back exactly
    loc: Loc = _loc()


@dataclass(frozen=True)
class Name:
    id: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Index:
    base: "Expr"
    index: "Expr"
    loc: Loc = _loc()


@dataclass(frozen=True)
class Slice:
    """Bit slice ``base[hi:lo]`` (inclusive, like Verilog and the RISC-V spec)."""
    base: "Expr"
    hi: "Expr"
    lo: "Expr"
    loc: Loc = _loc()


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Expr", ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class Reduce:
    """``op(var in lo..hi: body)``: a bounded reduction such as ``sum(i in 0..VLEN: v[i])``."""
    op: str
    var: str
    lo: "Expr"
    hi: "Expr"
    body: "Expr"
    loc: Loc = _loc()


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Expr"
    loc: Loc = _loc()


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Expr"
    right: "Expr"
    loc: Loc = _loc()


@dataclass(frozen=True)
class Cond:
    cond: "Expr"
    then: "Expr"
    orelse: "Expr"
    loc: Loc = _loc()


Expr = Union[Num, FloatLit, Name, Index, Slice, Call, Reduce, Unary, Binary, Cond]


@dataclass(frozen=True)
class TypeRef:
    """A type as written: ``u32``, ``bf16``, ``i32[16]`` (dims are parameter expressions)."""
    name: str
    dims: tuple[Expr, ...] = ()
    loc: Loc = _loc()


# ---- semantics statements ---------------------------------------------------------------

@dataclass(frozen=True)
class Let:
    name: str
    type: Optional[TypeRef]
    value: Expr
    mutable: bool = False  # `var` rather than `let`
    loc: Loc = _loc()


@dataclass(frozen=True)
class Assign:
    target: Expr
    value: Expr
    loc: Loc = _loc()


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()
    loc: Loc = _loc()


@dataclass(frozen=True)
class For:
    var: str
    lo: Expr
    hi: Expr
    body: tuple["Stmt", ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class Require:
    cond: Expr
    message: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Trap:
    message: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Halt:
    loc: Loc = _loc()


@dataclass(frozen=True)
class CallStmt:
    call: Call
    loc: Loc = _loc()


Stmt = Union[Let, Assign, If, For, Require, Trap, Halt, CallStmt]


# ---- declarations -------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    name: str
    value: Expr
    doc: str = ""
    override: bool = False  # `override param` in an extension
    loc: Loc = _loc()


@dataclass(frozen=True)
class Constraint:
    cond: Expr
    message: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class KwArg:
    key: str
    value: Union[int, str, None]  # None: a bare flag such as `finite`
    loc: Loc = _loc()


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-like binary float: sign bit (unless `unsigned`), `exp` and `man` bits.

    Flags: `finite` (no infinities; the all-ones exponent holds finite values, as OCP E4M3),
    `unsigned` (no sign bit, as the MX E8M0 scale), `nonan`. `bias` defaults to 2**(exp-1)-1.
    """
    name: str
    args: tuple[KwArg, ...]
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class MxFormat:
    """An OCP microscaling block format: `block` elements of `elem` share one `scale`."""
    name: str
    args: tuple[KwArg, ...]
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class Alias:
    name: str
    target: Union[int, str]  # register index, or the assembly name of a register
    loc: Loc = _loc()
    target_loc: Loc = _loc()


@dataclass(frozen=True)
class RegFile:
    name: str
    count: Expr
    type: TypeRef
    asm: str = ""  # assembly-name pattern, `{n}` is the index; default NAME{n}
    aliases: tuple[Alias, ...] = ()
    zero: tuple[str, ...] = ()  # hard-wired zero registers (reads 0, writes ignored)
    readonly: bool = False
    group: tuple[Expr, ...] = ()  # register groups: parts in low-to-high order, over `n`
    doc: str = ""
    loc: Loc = _loc()
    asm_loc: Loc = _loc()
    zero_locs: tuple[Loc, ...] = field(default=(), compare=False, hash=False, repr=False)
    group_loc: Loc = _loc()


@dataclass(frozen=True)
class RegClass:
    """A contiguous subset of a register file, encoded as index - lo (e.g. RVC x8..x15)."""
    name: str
    file: str
    lo: Expr
    hi: Expr
    doc: str = ""
    loc: Loc = _loc()
    file_loc: Loc = _loc()


@dataclass(frozen=True)
class State:
    name: str
    dims: tuple[Expr, ...]
    type: TypeRef
    init: Optional[Expr] = None
    readonly: bool = False
    doc: str = ""
    loc: Loc = _loc()
    untimed: bool = False  # no timing dependence through it (docs/isadl.md 4.5)
    ieee_flags: bool = False  # the accumulator of the ieee_* builtins' exception flags


@dataclass(frozen=True)
class Memory:
    name: str
    elem: str
    size: Expr  # in elements
    base: Optional[Expr] = None
    align: Optional[Expr] = None
    readonly: bool = False
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class Bits:
    hi: int
    lo: int
    loc: Loc = _loc()

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1


@dataclass(frozen=True)
class Piece:
    """Value bits ``value`` of a scattered field live in word bits ``word``."""
    value: Bits
    word: Bits
    loc: Loc = _loc()


@dataclass(frozen=True)
class Field:
    """A format field. kind: `plain` (name + bits [+ default]), `scattered` (pieces),
    `fixed` (anonymous constant bits), `ignore` (don't-care bits, encoded as 0)."""
    kind: str
    name: str
    bits: Optional[Bits] = None
    pieces: tuple[Piece, ...] = ()
    value: Optional[int] = None
    loc: Loc = _loc()
    value_loc: Loc = _loc()


@dataclass(frozen=True)
class Format:
    name: str
    width: Optional[int]  # None: the ISA word
    fields: tuple[Field, ...]
    bundle: bool = False  # a VLIW bundle format (fields name slots)
    loc: Loc = _loc()
    width_loc: Loc = _loc()


@dataclass(frozen=True)
class Slot:
    name: str
    width: int
    nop: str = ""
    doc: str = ""
    loc: Loc = _loc()
    nop_loc: Loc = _loc()


@dataclass(frozen=True)
class EnumItem:
    name: str  # assembly spelling
    value: int
    loc: Loc = _loc()


@dataclass(frozen=True)
class Enum:
    name: str
    items: tuple[EnumItem, ...]
    doc: str = ""
    loc: Loc = _loc()
    # "uN" for an open enum (`enum csr: u12 {...}`): any N-bit number is accepted too, the names
    # being spellings of some of them (GNU as's CSR operands); "" for a closed enum.
    numbers: str = ""


@dataclass(frozen=True)
class Unit:
    name: str
    count: Optional[Expr] = None
    is_async: bool = False
    queue: Optional[Expr] = None
    pipelined: bool = False
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class TimingProp:
    name: str
    value: Expr
    loc: Loc = _loc()


@dataclass(frozen=True)
class Structure:
    """A cache or a branch predictor of the timing model: its properties (`sets = 64`, `next = l2`)."""
    kind: str  # cache | predictor
    name: str
    props: tuple[TimingProp, ...]
    doc: str = ""
    loc: Loc = _loc()

    def get(self, name: str) -> Optional[Expr]:
        return next((p.value for p in self.props if p.name == name), None)


@dataclass(frozen=True)
class Timing:
    model: str  # inorder | ooo | vliw
    units: tuple[Unit, ...]
    props: tuple[TimingProp, ...]
    doc: str = ""
    loc: Loc = _loc()
    caches: tuple[Structure, ...] = ()
    predictors: tuple[Structure, ...] = ()


@dataclass(frozen=True)
class Binding:
    field: str
    value: Optional[Expr]  # None: bind the operand of the same name
    loc: Loc = _loc()


@dataclass(frozen=True)
class Encoding:
    format: str
    bindings: tuple[Binding, ...]
    loc: Loc = _loc()


@dataclass(frozen=True)
class Example:
    code: str
    given: tuple[Stmt, ...] = ()
    expect: tuple[Expr, ...] = ()
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class Warn:
    """An assembler warning: legal but suspicious operand values (``warn rd == 0 : "..."``)."""
    cond: "Expr"
    message: str
    loc: Loc = _loc()


@dataclass(frozen=True)
class Instruction:
    name: str
    syntax: str
    encoding: Optional[Encoding]
    slot: str = ""
    unit: str = ""
    cycles: Optional[Expr] = None
    latency: Optional[Expr] = None
    semantics: tuple[Stmt, ...] = ()
    doc: str = ""
    examples: tuple[Example, ...] = ()
    section: str = ""
    warnings: tuple[Warn, ...] = ()
    loc: Loc = _loc()
    syntax_loc: Loc = _loc()
    unit_loc: Loc = _loc()
    slot_loc: Loc = _loc()
    bypass: str = ""  # a forwarding path: to an instruction naming the same one, latency - bypass_cycles
    bypass_cycles: int = 1  # (docs/isadl.md 5.3)
    bypass_loc: Loc = _loc()


@dataclass(frozen=True)
class Expansion:
    when: Optional[Expr]
    lines: tuple[str, ...]
    loc: Loc = _loc()
    line_locs: tuple[Loc, ...] = field(default=(), compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Pseudo:
    name: str
    syntax: str
    expansions: tuple[Expansion, ...]
    doc: str = ""
    examples: tuple[Example, ...] = ()
    section: str = ""
    loc: Loc = _loc()
    syntax_loc: Loc = _loc()


@dataclass(frozen=True)
class FuncParam:
    name: str
    type: TypeRef
    loc: Loc = _loc()


@dataclass(frozen=True)
class Function:
    """A pure helper for semantics, inlined where it is called."""
    name: str
    params: tuple[FuncParam, ...]
    result: TypeRef
    body: Expr
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class DialectOpt:
    name: str
    values: tuple[Union[str, int], ...]  # strings keep their quotes off; directives keep the dot
    loc: Loc = _loc()
    value_locs: tuple[Loc, ...] = field(default=(), compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Reloc:
    """A relocation operator ``%name(x)`` = expr over `x` (symbol value) and `pc`.
    ``paired``: `x` names the instruction carrying that operator (RISC-V %pcrel_lo)."""
    name: str
    arg: str
    value: Expr
    paired: str = ""
    loc: Loc = _loc()
    paired_loc: Loc = _loc()


@dataclass(frozen=True)
class Dialect:
    options: tuple[DialectOpt, ...]
    relocs: tuple[Reloc, ...]
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class AbiRegion:
    name: str
    memory: str
    lo: Expr
    hi: Expr
    role: str  # in | out | inout | scratch
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class Abi:
    entry: Optional[Expr] = None
    args: tuple[str, ...] = ()
    end: tuple[str, ...] = ()  # ("halt", MNEMONIC) or ("return", REG)
    stack: Optional[tuple[str, Expr]] = None
    # callee-saved registers, by name, ranges expanded (`s0-s11` is s0, s1, ..., s11): each must hold
    # its value at entry when the kernel ends
    preserve: tuple[str, ...] = ()
    regions: tuple[AbiRegion, ...] = ()
    doc: str = ""
    loc: Loc = _loc()
    args_loc: Loc = _loc()
    end_loc: Loc = _loc()
    arg_locs: tuple[Loc, ...] = field(default=(), compare=False, hash=False, repr=False)
    stack_loc: Loc = _loc()
    preserve_locs: tuple[Loc, ...] = field(default=(), compare=False, hash=False, repr=False)
    preserve_ranges: tuple[str, ...] = field(default=(), compare=False, hash=False, repr=False)  # "s0-s11" or ""


_NUMBERED = re.compile(r"(.*?)(0|[1-9][0-9]*)$")


def name_range(first: str, last: str) -> list[str] | str:
    """The register names `first-last` stands for, or why it stands for none. A range counts names, not
    register numbers: `s0-s11` is s0, s1, ..., s11, whichever registers those name."""
    a, b = _NUMBERED.match(first), _NUMBERED.match(last)
    if not a or not b or a.group(1) != b.group(1):
        return (f"'{first}-{last}' is not a range: both ends must be the same name followed by a number, "
                f"as in s0-s11")
    lo, hi = int(a.group(2)), int(b.group(2))
    if lo >= hi:
        return f"range '{first}-{last}' must go up: {first} is not before {last}"
    return [f"{a.group(1)}{i}" for i in range(lo, hi + 1)]


def name_ranges(names: tuple[str, ...] | list[str]) -> str:
    """`names` as a preserve list, runs of consecutive numbers joined: s0, s1, s2, sp -> s0-s2, sp.
    Reading the text back with name_range gives `names` again."""
    out: list[list] = []  # [prefix, first number, last number, text]
    for n in names:
        m = _NUMBERED.match(n)
        if m and out and out[-1][0] == m.group(1) and out[-1][2] is not None and out[-1][2] + 1 == int(m.group(2)):
            out[-1][2] += 1
        else:
            out.append([m.group(1), int(m.group(2)), int(m.group(2)), n] if m else [None, None, None, n])
    return ", ".join(t if lo == hi else f"{p}{lo}-{p}{hi}" for p, lo, hi, t in out)


@dataclass(frozen=True)
class HwLoop:
    start: str = ""  # instruction-delimited loops (PLENA): the opening and closing instructions
    end: str = ""
    depth: Optional[Expr] = None
    doc: str = ""
    loc: Loc = _loc()
    start_loc: Loc = _loc()
    end_loc: Loc = _loc()
    # register-driven zero-overhead loops (AIE): the state items holding the count, the start address
    # and the address of the body's last instruction (or bundle); () when the loops are instruction pairs
    registers: tuple = ()
    registers_loc: Loc = _loc()


@dataclass(frozen=True)
class Section:
    title: str
    doc: str = ""
    loc: Loc = _loc()


@dataclass(frozen=True)
class ISA:
    name: str
    title: str = ""
    extends: str = ""
    version: str = ""
    word: Optional[int] = None
    endian: str = ""
    doc: str = ""
    params: tuple[Param, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    floats: tuple[FloatFormat, ...] = ()
    mxs: tuple[MxFormat, ...] = ()
    regfiles: tuple[RegFile, ...] = ()
    regclasses: tuple[RegClass, ...] = ()
    states: tuple[State, ...] = ()
    memories: tuple[Memory, ...] = ()
    formats: tuple[Format, ...] = ()
    slots: tuple[Slot, ...] = ()
    enums: tuple[Enum, ...] = ()
    timing: Optional[Timing] = None
    instructions: tuple[Instruction, ...] = ()
    pseudos: tuple[Pseudo, ...] = ()
    functions: tuple[Function, ...] = ()
    dialect: Optional[Dialect] = None
    abi: Optional[Abi] = None
    hwloop: Optional[HwLoop] = None
    examples: tuple[Example, ...] = ()
    sections: tuple[Section, ...] = ()
    loc: Loc = _loc()
    word_loc: Loc = _loc()
    extends_loc: Loc = _loc()

    # lookups (built lazily; the dataclass stays frozen and comparisons ignore them)
    def instruction(self, name: str) -> Optional[Instruction]:
        return _index(self, "instructions").get(name)

    def regfile(self, name: str) -> Optional[RegFile]:
        return _index(self, "regfiles").get(name)

    def format(self, name: str) -> Optional[Format]:
        return _index(self, "formats").get(name)

    def param(self, name: str) -> Optional[Param]:
        return _index(self, "params").get(name)


def _index(isa: ISA, attr: str) -> dict:
    cache = isa.__dict__.setdefault("_lookup", {})
    if attr not in cache:
        cache[attr] = {item.name: item for item in getattr(isa, attr)}
    return cache[attr]


def index_path(e: Expr) -> tuple[Expr, list[Expr]]:
    """`a[i][j]` -> (a, [i, j]): the indexed root and its indices, outermost first."""
    path = []
    while isinstance(e, Index):
        path.append(e.index)
        e = e.base
    path.reverse()
    return e, path


def statements(body):
    """Every statement of a semantics body, nested ones (loop and branch bodies) included, in order."""
    for s in body:
        yield s
        if isinstance(s, For):
            yield from statements(s.body)
        elif isinstance(s, If):
            yield from statements(s.then)
            yield from statements(s.orelse)
