"""Builds a small cffi (API mode) extension around native/kc_numeric.h and native/kc_trap.h."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

NATIVE = Path(__file__).resolve().parents[2] / "native"

CDEF = r"""
typedef struct { int exp, man, bias; int finite, is_unsigned, nonan; } kc_fmt;
double kc_decode(const kc_fmt *f, uint64_t bits);
uint64_t kc_encode(const kc_fmt *f, double x, int saturate);
uint64_t kc_encode_i64(const kc_fmt *f, int64_t v, int saturate);
uint64_t kc_encode_u64(const kc_fmt *f, uint64_t v, int saturate);
int kc_fmt_width(const kc_fmt *f);
int kc_fmt_emax(const kc_fmt *f);
uint64_t kc_fmt_max_code(const kc_fmt *f);
uint64_t kc_fmt_nan_code(const kc_fmt *f);
float kc_bf16_to_f32(uint16_t b);
uint16_t kc_f32_to_bf16(float x);
float kc_fp16_to_f32(uint16_t h);
uint16_t kc_f32_to_fp16(float x);
float kc_e4m3_to_f32(uint8_t b);
uint8_t kc_f32_to_e4m3(float x, int saturate);
float kc_e5m2_to_f32(uint8_t b);
uint8_t kc_f32_to_e5m2(float x, int saturate);
int64_t kc_f2i(double x, int width);
uint64_t kc_f2u(double x, int width);
double kc_mx_decode(const kc_fmt *elem, uint8_t elem_bits, uint8_t scale_bits);
uint8_t kc_mx_scale(const kc_fmt *elem, double amax);
uint8_t kc_mx_encode(const kc_fmt *elem, double x, uint8_t scale_bits);
void kc_mx_encode_block(const kc_fmt *elem, const float *x, int n, uint8_t *elems, uint8_t *scale);
void kc_mx_decode_block(const kc_fmt *elem, const uint8_t *elems, uint8_t scale, int n, float *out);
uint8_t kc_mx_plena_scale(const kc_fmt *elem, double amax);
uint8_t kc_mx_plena_encode(const kc_fmt *elem, double x, uint8_t scale_bits);
double kc_mx_plena_decode(const kc_fmt *elem, uint8_t elem_bits, uint8_t scale_bits);
double kc_fmin(double a, double b);
double kc_fmax(double a, double b);
float kc_fminf(float a, float b);
float kc_fmaxf(float a, float b);
int32_t kc_ilogb(double x);

typedef struct { int kind; uint64_t pc; char message[160]; } kc_trap;
void kc_trap_clear(kc_trap *t);
int t_trap(kc_trap *t, int kind, uint64_t pc, const char *s, int n);

void t_decode_n(const kc_fmt *f, const uint64_t *bits, double *out, size_t n);
void t_encode_n(const kc_fmt *f, const double *x, uint64_t *out, size_t n, int sat);
void t_fast_decode_n(int which, const uint32_t *bits, float *out, size_t n);
void t_fast_encode_n(int which, const float *x, uint32_t *out, size_t n, int sat);
size_t t_fast_vs_generic(int which, uint32_t start, uint32_t step, uint64_t count, int sat, uint32_t *bad);
"""

SOURCE = r"""
#include "kc_numeric.h"
#include "kc_trap.h"

/* kc_trap_set is variadic: exercise it through a fixed wrapper */
static int t_trap(kc_trap *t, int kind, uint64_t pc, const char *s, int n)
{
    kc_trap_set(t, kind, pc, "%s #%d", s, n);
    return t->kind;
}

static void t_decode_n(const kc_fmt *f, const uint64_t *bits, double *out, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) out[i] = kc_decode(f, bits[i]);
}

static void t_encode_n(const kc_fmt *f, const double *x, uint64_t *out, size_t n, int sat)
{
    size_t i;
    for (i = 0; i < n; i++) out[i] = kc_encode(f, x[i], sat);
}

/* which: 0 bf16, 1 fp16, 2 e4m3, 3 e5m2 */
static float t_fast_dec(int which, uint32_t b)
{
    switch (which) {
    case 0: return kc_bf16_to_f32((uint16_t)b);
    case 1: return kc_fp16_to_f32((uint16_t)b);
    case 2: return kc_e4m3_to_f32((uint8_t)b);
    default: return kc_e5m2_to_f32((uint8_t)b);
    }
}

static uint32_t t_fast_enc(int which, float x, int sat)
{
    switch (which) {
    case 0: return kc_f32_to_bf16(x);
    case 1: return kc_f32_to_fp16(x);
    case 2: return kc_f32_to_e4m3(x, sat);
    default: return kc_f32_to_e5m2(x, sat);
    }
}

static void t_fast_decode_n(int which, const uint32_t *bits, float *out, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) out[i] = t_fast_dec(which, bits[i]);
}

static void t_fast_encode_n(int which, const float *x, uint32_t *out, size_t n, int sat)
{
    size_t i;
    for (i = 0; i < n; i++) out[i] = t_fast_enc(which, x[i], sat);
}

/* Fast encoder vs kc_encode over float bit patterns start, start+step, ... (count of them).
 * Returns the number of mismatches; the first one goes to *bad. */
static size_t t_fast_vs_generic(int which, uint32_t start, uint32_t step, uint64_t count, int sat, uint32_t *bad)
{
    static const kc_fmt fmts[4] = {KC_FMT_BF16, KC_FMT_FP16, KC_FMT_E4M3, KC_FMT_E5M2};
    size_t wrong = 0;
    uint64_t i;
    uint32_t u = start;
    for (i = 0; i < count; i++, u += step) {
        float x;
        memcpy(&x, &u, 4);
        if ((uint64_t)t_fast_enc(which, x, sat) != kc_encode(&fmts[which], x, sat)) {
            if (!wrong) *bad = u;
            wrong++;
        }
    }
    return wrong;
}
"""

CFLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra"]


def build(tmpdir: Path):
    from cffi import FFI

    ffi = FFI()
    ffi.cdef(CDEF)
    ffi.set_source("_kc_numeric_test", SOURCE, include_dirs=[str(NATIVE)], extra_compile_args=CFLAGS)
    lib_path = ffi.compile(tmpdir=str(tmpdir), verbose=False)
    spec = importlib.util.spec_from_file_location("_kc_numeric_test", lib_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules.setdefault("_kc_numeric_test", mod)
    return mod


def pytest_collection_modifyitems(config, items):
    # NaN-aware comparisons cast NaN patterns of ml_dtypes types; numpy warns about that
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"))
            item.add_marker(pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning"))


@pytest.fixture(scope="session")
def cmod(tmp_path_factory):
    return build(tmp_path_factory.mktemp("kc_native"))


@pytest.fixture(scope="session")
def lib(cmod):
    return cmod.lib


@pytest.fixture(scope="session")
def ffi(cmod):
    return cmod.ffi
