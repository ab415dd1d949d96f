"""PLENA's layout (tasks/layouts/plena.py): the MXFP8 encoder against an independent construction
with ml_dtypes, its decode against what H_PREFETCH_V / H_PREFETCH_M land in on-chip SRAM of the
generated simulator and against the simulator's own H_STORE_V encoding, the chunked vector SRAM
output layout, poison, preloads and the prompt."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import isadl
from kcgen import numeric, taskspec
from kcgen.evaluation import _assembler, _set_register, _simulator, draw, layout_for, DTYPES, PROFILES
from kcgen.paths import REPO, TASKS, load_module

L = load_module(TASKS / "layouts" / "plena.py")
BF16 = np.dtype(ml_dtypes.bfloat16)
PLENA_TASKS = [t.name for t in taskspec.all_tasks() if "plena" in t.targets and t.level == 1]


@pytest.fixture(scope="module")
def spec():
    return isadl.load(REPO / "targets" / "plena.isa")


def independent_mx(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Feb-2026 PLENA emulator's quantiser (PLENA_Simulator lib/quantize/src/tensor.rs), written
    out with float64 and frexp for bf16 inputs: scale 2^floor(log2(amax + 1e-9)) per block of 8 (E8M0,
    bias 127; 0 and zero elements for an all-zero block; the 1e-9 decides the scale of blocks of tiny
    values and is lost in the others); v = x / scale, e = floor(log2 |v|) clamped to [-7, 7]; e = -7 is field 0 with
    m = |v| * 2^7 * 8, otherwise m = (|v| / 2^e - 1) * 8; m rounded half away from zero and clamped
    to 7; the sign bit set for negative v (also when m rounds to 0), 0x00 for v = 0."""
    blocks = np.asarray(x, np.float64).reshape(-1, 8)
    amax = np.abs(blocks).max(axis=1)
    k = np.where(amax > 0, np.frexp(amax + 1e-9)[1] - 1, 0)
    scale = np.where(amax > 0, k + 127, 0).astype(np.uint8)
    v = blocks / np.exp2(k)[:, None]
    a = np.abs(v)
    e = np.clip(np.where(a > 0, np.frexp(np.where(a > 0, a, 1.0))[1] - 1, -7), -7, 7)
    m = np.where(e == -7, a * 2.0 ** 7 * 8, (a / np.exp2(e) - 1) * 8)
    m = np.minimum(np.floor(m + 0.5), 7).astype(np.int64)
    code = ((v < 0) << 7) | ((e + 7) << 3) | m
    code = np.where(v == 0, 0, code)
    return code.astype(np.uint8).ravel(), scale


def independent_decode(elems, scales) -> np.ndarray:
    """ml_dtypes' IEEE-style float8_e4m3 (exponent 15 is Inf/NaN), except field 0, which the emulator
    reads as m/8 * 2^-7; times 2^(scale - 127), 0.0 for scale byte 0."""
    b = np.asarray(elems, np.uint8)
    v = b.view(ml_dtypes.float8_e4m3).astype(np.float64)
    f0 = (b & 0x78) == 0
    v[f0] = np.where(b[f0] & 0x80, -1.0, 1.0) * (b[f0] & 7) / 8 * 2.0 ** -7
    s = np.repeat(np.asarray(scales, np.float64), 8)
    return (v * np.where(s == 0, 0.0, np.exp2(s - 127))).astype(BF16)


def sample(rng, n=4096):
    """bf16 values of every evaluation profile, plus blocks that exercise the top of the range and zeros."""
    parts = [draw(rng, prof, (n,), BF16) for prof in PROFILES]
    edge = np.array([1.875, 1.0, 0.5, -0.25, 0, 0, 0, 0,          # amax mantissa 1.875
                     0, 0, 0, 0, 0, 0, 0, -0.0,                    # an all-zero block
                     448, -448, 449, 1e-3, 3e4, -3e4, 1.5e-5, 7], np.float64).astype(BF16)
    return np.concatenate(parts + [edge])


def test_encoder_matches_an_independent_ml_dtypes_construction():
    x = sample(np.random.default_rng(7))
    elems, scales = L.mx_encode(x.astype(np.float64))
    want_e, want_s = independent_mx(x)
    np.testing.assert_array_equal(scales, want_s)
    np.testing.assert_array_equal(elems, want_e)
    decoded = L.mx_decode(elems, scales)
    np.testing.assert_array_equal(decoded.astype(np.float64), independent_decode(want_e, want_s).astype(np.float64))
    # amax 1.875 is its block's scale times 1.875: kept exactly (OCP's scale would clip it to 1.75)
    i = len(PROFILES) * 4096
    assert float(decoded[i]) == 1.875 and float(decoded[i + 1]) == 1.0


def test_encoder_matches_the_simulators_h_store_v(spec):
    """The simulator's own MX encoder (H_STORE_V) writes the same bytes for the same bf16 rows."""
    rng = np.random.default_rng(3)
    x = sample(rng)[:4 * 64 * 8].reshape(8, 4, 64)
    sim = _simulator(spec)
    prog = _assembler(spec).assemble("\n".join(
        ["S_ADDI_INT gp1, gp0, 256", "C_SET_SCALE_REG gp1"] +
        [f"S_ADDI_INT gp2, gp0, {k * 256}\nH_STORE_V gp2, gp0, a{k}, 0, 0" for k in range(8)]), "store.s")
    for arr in sim.arrays.values():
        arr[...] = 0
    sim.load(prog)
    sim.view("vsram")[:x.size] = x.reshape(-1)
    for k in range(8):
        _set_register(spec, sim, f"a{k}", 4096 * k)
    assert sim.run(100000).status == "halted"
    hbm = sim.arrays["hbm"]
    for k in range(8):
        elems, scales = L.mx_encode(x[k].astype(np.float64))
        np.testing.assert_array_equal(hbm[4096 * k + 256:4096 * k + 288], scales)
        np.testing.assert_array_equal(hbm[4096 * k:4096 * k + 256], elems)


@pytest.mark.parametrize("name,config", [("softmax", "C2"), ("gemv", "C3"), ("linear", "C2"), ("gelu", "C1")])
def test_write_returns_what_the_prefetches_land_on_chip(spec, name, config):
    """decode(encode(x)) is what H_PREFETCH_V puts in vector SRAM and H_PREFETCH_M in matrix SRAM."""
    task = taskspec.find(name)
    lay = layout_for(spec, task, "plena", config)
    sim = _simulator(spec)
    rng = np.random.default_rng(11)
    lines = []
    seen = {}
    vdst, mdst = 0, 0
    for t in task.inputs:
        p = lay.placements[t.name]
        n = int(np.prod(p.shape))
        reg = next(r for r, _, what in lay.args if what == f"address of {t.name} in HBM")
        lines += [f"S_LUI_INT gp1, {n >> 12}", f"S_ADDI_INT gp1, gp1, {n & 4095}", "C_SET_SCALE_REG gp1"]
        if len(p.shape) == 2 and p.shape[0] >= 64 and p.shape[1] >= 64:   # one tile through H_PREFETCH_M
            lines += [f"S_ADDI_INT gp1, gp0, {p.shape[1]}", "C_SET_STRIDE_REG gp1",
                      f"S_ADDI_INT gp2, gp0, {mdst}", f"H_PREFETCH_M gp2, gp0, {reg}, 1, 0"]
            seen[t.name] = ("msram", mdst)
            mdst += 4096
        else:                                                             # its first rows, 4 at a time
            for g in range(-(-n // 256)):
                lines += [f"S_ADDI_INT gp2, gp0, {vdst + 256 * g}", f"S_ADDI_INT gp3, gp0, {256 * g}",
                          f"H_PREFETCH_V gp2, gp3, {reg}, 0, 0"]
            seen[t.name] = ("vsram", vdst)
            vdst += -(-n // 256) * 256
    lines.append("S_ADDI_INT gp5, gp0, 0")
    prog = _assembler(spec).assemble("\n".join(lines), "prefetch.s")
    for arr in sim.arrays.values():
        arr[...] = 0
    sim.load(prog)
    lay.preload(sim)
    values = {}
    for t in task.inputs:
        p = lay.placements[t.name]
        values[t.name] = lay.write(sim, t.name, draw(rng, "large", p.shape, DTYPES[p.dtype]))
        assert values[t.name].dtype == BF16
    for reg, value, _ in lay.args:
        _set_register(spec, sim, reg, value)
    assert sim.run(100000).status == "halted"
    for name_, (mem, at) in seen.items():
        v = values[name_].astype(np.float64)
        if mem == "msram":
            rows, cols = v.shape
            np.testing.assert_array_equal(sim.view("msram")[at:at + 4096].astype(np.float64).reshape(64, 64),
                                          v[:64, :64])
        else:
            flat = v.reshape(-1)
            np.testing.assert_array_equal(sim.view("vsram")[at:at + flat.size].astype(np.float64), flat)


@pytest.mark.parametrize("name,config,tensor", [("gemm", "C1", "b"), ("batch_matmul", "C2", "b")])
def test_narrow_rows_start_on_the_emulators_64_byte_grid(name, config, tensor):
    """Level-1 rows narrower than 64 elements are padded with zeros to a 64-element row stride: H_PREFETCH_V
    under the emulator's rule (-D HBM_ROW_ALIGN=64), STRIDE = 64, brings each row to lanes 0..N-1 of its
    own vector SRAM row, zeros after it, and the scales sit after the padded image."""
    aligned = isadl.load(REPO / "targets" / "plena.isa", defines={"HBM_ROW_ALIGN": 64})
    task = taskspec.find(name)
    lay = layout_for(aligned, task, "plena", config)
    p = lay.placements[tensor]
    rows, width = int(np.prod(p.shape[:-1])), p.shape[-1]
    assert width < 64 and p.index % 64 == 0
    reg = next(r for r, _, what in lay.args if what == f"address of {tensor} in HBM")
    lines = [f"S_LUI_INT gp1, {rows * 64 >> 12}", f"S_ADDI_INT gp1, gp1, {rows * 64 & 4095}", "C_SET_SCALE_REG gp1",
             "S_ADDI_INT gp1, gp0, 64", "C_SET_STRIDE_REG gp1"]
    for g in range(rows // 4):
        lines += [f"S_ADDI_INT gp2, gp0, {256 * g}", f"S_LUI_INT gp3, {256 * g >> 12}",
                  f"S_ADDI_INT gp3, gp3, {256 * g & 4095}", f"H_PREFETCH_V gp2, gp3, {reg}, 1, 0"]
    sim = _simulator(aligned)
    sim.load(_assembler(aligned).assemble("\n".join(lines), "narrow.s"))
    for arr in sim.arrays.values():
        arr[...] = 0
    lay.preload(sim)
    values = lay.write(sim, tensor, draw(np.random.default_rng(5), "large", p.shape, DTYPES[p.dtype]))
    for r, value, _ in lay.args:
        _set_register(aligned, sim, r, value)
    result = sim.run(100000)
    assert result.status == "halted", result.trap
    got = sim.view("vsram")[:rows * 64].astype(np.float64).reshape(rows, 64)
    np.testing.assert_array_equal(got[:, :width], values.astype(np.float64).reshape(rows, width))
    assert (got[:, width:] == 0).all()
    assert lay.extent(aligned, tensor).hi == p.index + rows * 64 * 9 // 8   # elements, then their scales


def test_outputs_are_chunked_poisoned_and_read_back(spec):
    task = taskspec.find("batch_matmul")
    lay = layout_for(spec, task, "plena", "C3")   # c[4, 32, 32] after a's [1, 128, 64] image
    p = lay.placements["c"]
    assert p.memory == "vsram" and p.index == 4 * 32 * 64
    sim = _simulator(spec)
    lay.poison(sim, "c")
    v = sim.view("vsram")
    assert np.isnan(v[p.index:p.index + 128 * 64].astype(np.float64)).all()
    # element (b, m, n) at index + ((n // 64) * B*M + b*M + m) * 64 + n % 64
    vals = np.arange(128 * 64, dtype=np.float64).reshape(128, 64)
    v[p.index:p.index + vals.size] = vals.reshape(-1)
    out = lay.read(sim, "c").astype(np.float64)
    np.testing.assert_array_equal(out, vals.astype(BF16).astype(np.float64)[:, :32].reshape(4, 32, 32))
    lay2 = layout_for(spec, taskspec.find("softmax"), "plena", "C2")  # y[8, 128]: 2 chunks of 8 rows
    v[0:1024] = np.arange(1024, dtype=np.float64) % 256
    y = lay2.read(sim, "y").astype(np.float64)
    r, c = np.meshgrid(np.arange(8), np.arange(128), indexing="ij")
    np.testing.assert_array_equal(y, (((c // 64) * 8 + r) * 64 + c % 64) % 256)


def test_preloads_and_start_state(spec):
    sim = _simulator(spec)
    for arr in sim.arrays.values():
        arr[...] = 0
    lay = layout_for(spec, taskspec.find("layer_norm"), "plena", "C3")
    lay.preload(sim)
    fp = sim.view("fpsram").astype(np.float64)
    assert fp[0] == 0.0 and fp[1] == 1.0 and fp[2] == 1.0 / 256 and fp[3] == float(BF16.type(1e-5))
    assert float(sim.view("BMM_SCALE")) == 1.0
    lay = layout_for(spec, taskspec.find("softmax"), "plena", "C1")
    lay.preload(sim)
    assert sim.view("fpsram").astype(np.float64)[2] == -math.inf


@pytest.mark.parametrize("name", PLENA_TASKS)
def test_every_config_has_a_layout_and_a_complete_prompt(spec, name):
    task = taskspec.find(name)
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, "plena", config)
        text = lay.prompt()
        cfg = task.config("plena", config)
        for t in task.inputs:
            shape = task.shape(t, cfg)
            n = int(np.prod(shape))
            if len(shape) > 1 and shape[-1] % 64:   # level 1: rows padded to whole 64-byte HBM chunks
                stride = -(-shape[-1] // 64) * 64
                n = n // shape[-1] * stride
                assert f"STRIDE = {stride} " in text and f"r * {stride} + c" in text
            assert f"SCALE_OFFSET = {n}" in text
        for t in task.outputs:
            assert f"address {lay.placements[t.name].index}" in text or \
                f"elements {lay.placements[t.name].index}.." in text
        assert "Configuration" in text and "fpsram[1..1]: 1.0" in text
        assert [reg for reg, _, _ in lay.args] == [f"a{k}" for k in range(len(task.inputs))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=64),
       st.booleans())
def test_fast_e4m3_encoding_is_the_exact_rule(values, widen):
    """ml_dtypes' cast (float32-exact inputs) and kcgen.numeric's rule give the same bytes;
    inputs that are not float32-exact (widen) take the rule itself."""
    x = np.array(values, np.float64)
    if widen:
        x = x * (1 + 2.0 ** -40)
    want = numeric.encode_array(numeric.E4M3, x, saturate=True).astype(np.uint8)
    np.testing.assert_array_equal(L.e4m3_bytes(x), want)
