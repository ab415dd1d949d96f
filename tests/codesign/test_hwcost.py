"""The hardware cost model (issue 18, item 4): datapath, area in base lanes and critical-path latency
of proposed instructions. Every expected figure is derived by hand in the comments from the model of
docs/codesign.md ("Hardware cost model") and PLENA's own cycles (V_ADD_VV 1, V_MUL_VV 1, V_EXP_V 1,
V_RECI_V 2, V_RED_SUM 8 and V_RED_MAX 4 for a 6-level tree over VLEN = 64)."""
from __future__ import annotations

import pytest

import isadl
from kcgen import codesign, hwcost
from kcgen.paths import REPO, TASKS

PLENA = REPO / "targets" / "plena.isa"
CASES = TASKS / "codesign" / "plena"

# Areas at 45 nm (um^2), the model's reference points: bf16 FP add 1360, bf16 FP multiply 1640,
# transcendental = 3 multiplies = 4920, divide = 4 multiplies = 6560, integer add 137 * w / 32,
# compare = integer add of the operand width, select = half of that, convert = twice that.
# One PLENA lane = 1 bf16 add + 1 bf16 multiply + 1 exp/recip unit = 1360 + 1640 + 4920 = 7920.
LANE = 1360 + 1640 + 4920

GELU = """isa plena_gelu extends plena {
  instruction V_GELU_V {
    syntax "V_GELU_V {rd:gp}, {rs1:gp}"
    encoding R(opcode=0x33, rd, rs1)
    unit core; cycles CYCLES
    semantics {
      let dst = gp[rd]
      let src = gp[rs1]
      require dst % VLEN == 0 && src % VLEN == 0 : "V_GELU_V: vector SRAM addresses must be multiples of VLEN"
      for i in 0..VLEN {
        let x = vsram[src + i]
        let x2 = x * x
        let x3 = x2 * x
        let inner = fma(x3, 0.044715, x)
        let z = inner * -1.5957691
        vsram[dst + i] = x / (1.0 + exp(z))
      }
    }
    doc "Fused GELU (tanh form): x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))) in every lane."
  }
}
"""


@pytest.fixture(scope="module")
def base():
    return isadl.load(PLENA)


def shipped(case):
    (cost,) = hwcost.estimate_proposal(PLENA, (CASES / case / "extension.isa").read_text())
    return cost


def gelu(tmp_path, cycles):
    path = tmp_path / "plena_gelu.isa"  # an overlay beside nothing: `extends plena` finds targets/plena.isa
    path.write_text(GELU.replace("CYCLES", str(cycles)))
    base = isadl.load(PLENA)
    return hwcost.estimate(base, isadl.load(path), "V_GELU_V")


def test_the_base_model_comes_from_plenas_own_instructions(base):
    model = hwcost.base_model(base)
    assert model.lanes == 64  # VLEN: the width of the element-wise vector instructions
    lat = model.latencies
    assert lat.elem["add"] == (1, "V_ADD_VV") and lat.elem["mul"] == (1, "V_MUL_VV")
    assert lat.elem["exp"] == (1, "V_EXP_V") and lat.elem["recip"] == (2, "V_RECI_V")
    # trees: cycles per level = the instruction's cycles over log2(64) = 6 levels
    assert lat.trees["add"][0] * 6 == 8 and lat.trees["add"][1] == "V_RED_SUM"
    assert lat.trees["compare"][0] * 6 == 4 and lat.trees["compare"][1] == "V_RED_MAX"
    # operators PLENA has no instruction for: fma = mul + add, divide = recip + mul
    assert lat.cycles("fma") == 2 and lat.cycles("div") == 3
    assert model.lane_area == pytest.approx(LANE)


def test_v_red_argmax_is_a_compare_tree(base):
    c = shipped("dllm_sampling")
    # max(i in 0..64) and min(i: v[i] == m ? i : 64) are one compare-and-select tree over 64 (value,
    # index) pairs: 63 compares and 63 selects, 6 levels; then `m > f[rd]` is one more compare and
    # `u32(chunk) * VLEN + j` one u32 add (chunk * VLEN is decoded, not computed), bf16(...) one convert
    assert (c.ops["add"], c.ops["select"], c.ops["convert"]) == (63 + 1 + 1, 63, 1)
    assert c.ops["mul"] == c.ops["exp"] == c.ops["div"] == c.ops["fma"] == 0
    (tree,) = c.reductions
    assert (tree.op, tree.terms, tree.operators, tree.depth) == ("argmax", 64, 63, 6)
    assert c.reduction_depth == 6 and c.lanes == 64
    # area: 64 bf16 compares (137 * 16/32 = 68.5 each) + 1 u32 add (137) + 63 selects of a 16-bit value
    # and a 6-bit index (0.5 * 137 * 22/32 = 47.09) + 1 convert of 32 bits (2 * 137), each kind shared
    # over the 8 cycles the instruction keeps its unit: 8 compares, 1 add, 8 selects, 1 convert
    area = 8 * 68.5 + 137 + 8 * 0.5 * 137 * 22 / 32 + 2 * 137
    assert c.issue_cycles == 8
    assert c.added_area == pytest.approx(area / LANE)  # 0.17 of one base lane
    assert round(c.added_area, 2) == 0.17
    # latency: the compare tree at V_RED_MAX's 4 cycles for 6 levels, then one compare (1 cycle):
    # 5, within the declared 2 + ARGMAX_LEVELS = 8
    assert c.min_latency == 5 and c.declared == 8 and not c.too_fast
    # one VLEN row read, f read once (f[rd]) and written twice (f[rd], f[rs2]); no new state
    assert (c.memory_ports["vsram"].read, c.memory_ports["vsram"].write) == (64, 0)
    assert (c.memory_ports["f"].read, c.memory_ports["f"].write) == (1, 2)
    assert c.state_bits == 0
    assert "argmax tree over 64 bf16 terms" in c.render()


def test_v_max_vf_is_a_compare_and_select_per_lane():
    c = shipped("relu")
    # per lane: `x > f[rs2]` (bf16 compare) and `?:` (a bf16 select); lane_on(...) is a mask, not datapath
    assert (c.ops["add"], c.ops["select"]) == (64, 64) and sum(c.ops.values()) == 128
    assert c.per_lane["add"] == 1 and c.per_lane["select"] == 1 and not c.reductions
    # area: 64 * (68.5 + 34.25) = 6576 um^2 = 0.83 lanes; latency: compare 1 + select 0 = 1 = declared
    assert c.added_area == pytest.approx(64 * (68.5 + 34.25) / LANE)
    assert c.min_latency == 1 and c.declared == 1 and not c.too_fast
    assert (c.memory_ports["vsram"].read, c.memory_ports["vsram"].write) == (64, 64)
    assert c.memory_ports["f"].read == 1  # f[rs2] is broadcast: one element


def test_a_fused_gelu_needs_vlen_exp_units_and_vlen_dividers(tmp_path):
    c = gelu(tmp_path, cycles=1)
    # per lane: x*x, x2*x, inner*k (3 mul), fma(x3, k, x) (1 fma), 1 + exp(z) (1 add, 1 exp), x / d (1 div)
    assert c.per_lane == {"add": 1, "mul": 3, "fma": 1, "div": 1, "sqrt": 0, "exp": 1, "select": 0, "convert": 0}
    assert c.ops["exp"] == 64 and c.ops["div"] == 64 and c.lanes == 64
    # area per lane: 1360 + 3 * 1640 + (1640 + 1360) + 4920 + 6560 = 20760 um^2 = 2.62 base lanes;
    # over 64 lanes: 167.8 base lanes, 2.6 times the whole 64-lane vector unit
    assert c.added_area == pytest.approx(64 * 20760 / LANE)
    assert c.added_area > 2 * c.base_lanes
    # critical path: mul 1, mul 1, fma 2, mul 1, exp 1, add 1, div 3 = 10 cycles > the declared 1
    assert c.min_latency == 10 and c.too_fast
    # declared at 10 cycles, each operator may serve 10 lanes in turn: ceil(64 / 10) = 7 of each
    # (ceil(192 / 10) = 20 of the 3 * 64 multiplies)
    slow = gelu(tmp_path, cycles=10)
    assert slow.added_area == pytest.approx((1360 * 7 + 1640 * 20 + (1640 + 1360) * 7 + 4920 * 7 + 6560 * 7) / LANE)
    assert not slow.too_fast
    text = c.render()
    assert "64 exp/transcendental" in text and "64 div" in text and "BELOW the critical path" in text


def test_an_honest_gelu_is_not_flagged(tmp_path):
    c = gelu(tmp_path, cycles=10)
    assert c.min_latency == 10 and c.declared == 10 and not c.too_fast


def test_new_state_bits_and_a_guarded_write(tmp_path):
    text = """
      state hist[VLEN]: u32 "a per-lane counter the proposal adds"
      instruction V_COUNT_POS {
        syntax "V_COUNT_POS {rs1:gp}"
        encoding R(opcode=0x34, rs1)
        unit core; cycles 2
        semantics {
          let src = gp[rs1]
          for i in 0..VLEN { if vsram[src + i] > bf16(0.0) { hist[i] = hist[i] + 1 } }
        }
        doc "Count, per lane, the positive elements of a row."
      }
    """
    (c,) = hwcost.estimate_proposal(PLENA, text)
    assert c.state_bits == 64 * 32 and c.new_state == {"hist": 2048}  # VLEN u32 counters
    assert c.ops["add"] == 64 + 64  # a bf16 compare and a u32 increment per lane
    assert c.memory_ports["hist"].read == 64 and c.memory_ports["hist"].write == 64
    # the increment (1) runs beside the compare (1), which only enables the write: 1 cycle
    assert c.min_latency == 1 and c.path == ["+ u32 (1)"]


def test_speedup_per_area():
    # 3x faster for 64 more lanes on a 64-lane unit: the unit doubles, 1.5x per unit of area
    assert hwcost.speedup_per_area(3.0, 64.0, 64) == pytest.approx(1.5)
    assert hwcost.speedup_per_area(2.0, 0.0, 64) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        hwcost.speedup_per_area(2.0, 1.0, 0)


def test_json_has_the_summary_fields():
    d = shipped("dllm_sampling").to_json()
    assert {"added_area", "min_latency", "ops", "reduction_depth", "state_bits", "memory_ports", "too_fast"} <= set(d)


def test_propose_rejects_a_declared_cost_below_the_critical_path(tmp_path):
    """The fused GELU at 1 cycle: the floor (one lane operation per element) allows it, its datapath
    (mul, mul, fma, mul, exp, add, divide: 10 cycles at PLENA's latencies) does not; at 10 it passes."""
    body = GELU.split("{", 1)[1].rsplit("}", 1)[0]  # the instruction block, without the isa header
    work = tmp_path / "work"
    v = codesign.propose(PLENA, body.replace("CYCLES", "1"), work, build=False)
    assert not v.accepted and any("below its critical path of 10" in r for r in v.reasons), v.reasons
    assert not work.exists() or not list(work.glob("*.isa"))
    ok = codesign.propose(PLENA, body.replace("CYCLES", "10"), work, build=False)
    assert not any("critical path" in r for r in ok.reasons), ok.reasons
    assert ok.hw["V_GELU_V"].ops["exp"] == 64 and ok.hw["V_GELU_V"].ops["div"] == 64


CORAL = REPO / "targets" / "coral.isa"


def test_coral_lane_is_its_vector_unit_at_sew_32():
    """Coral's vector instructions cost one cycle per VLEN-bit group, by vl and vtype (state): taken at
    their widest (SEW = 32, vl at its cap), a vmul over 128 elements keeps the unit 32 cycles, so the
    unit works on VLEN / 32 = 4 lanes a cycle, each with a 32-bit multiplier (3495 um^2) among its
    operators."""
    model = hwcost.base_model(isadl.load(CORAL))
    assert model.lanes == 128 // 32
    kinds = {(o.area_kind, o.width): n for o, n in model.lane.items()}
    assert kinds.get(("mul", 32)) == 1
    assert model.lane_area >= 3495 + 137


def test_vopacc4_is_sixteen_int8_multipliers():
    """The coral case: 32 lanes (vl <= VLEN/4 at e8, m2) of four int8 x int8 products (sign-extended
    bytes: 8-bit multipliers, 3495 * (8/32)^2 = 218.4 um^2 each), summed in a 17-bit then an 18-bit add
    and accumulated in 32 bits, shared over its 8 cycles: 16 multipliers, 8 + 4 + 4 adders. The
    multipliers are about one 32-bit multiplier's area (the classic 16 x 8x8 = 32x32 result)."""
    text = (TASKS / "codesign" / "coral" / "gemm" / "extension.isa").read_text()
    (c,) = hwcost.estimate_proposal(CORAL, text)
    muls = {o: n for o, n in c.operators.items() if o.kind == "mul"}
    assert [(o.width, n) for o, n in muls.items()] == [(8, 128)]
    adds = sorted((o.width, n) for o, n in c.operators.items() if o.kind == "add")
    assert adds == [(17, 64), (18, 32), (32, 32)]
    area = 16 * 3495 * (8 / 32) ** 2 + 8 * 137 * 17 / 32 + 4 * 137 * 18 / 32 + 4 * 137
    assert c.area_um2 == pytest.approx(area)
    assert c.added_area == pytest.approx(area / hwcost.base_model(isadl.load(CORAL)).lane_area)
    assert c.memory_ports["v"].read == 4 * 32  # four row groups of 32 int8
    assert c.min_latency == 4 and c.declared == 11 and not c.too_fast
