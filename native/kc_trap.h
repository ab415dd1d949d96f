/* kc_trap.h -- the trap record of a generated KernelCraft simulator (header-only C99).
 * A trap stops the machine; the simulator returns to Python, which reports kind, pc and message.
 * The first trap wins: later kc_trap_set calls leave the record alone until kc_trap_clear. */
#ifndef KC_TRAP_H
#define KC_TRAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

enum {
    KC_TRAP_NONE = 0,
    KC_TRAP_REQUIRE,     /* `require COND : "msg"` failed */
    KC_TRAP_ILLEGAL,     /* undecodable or illegal instruction */
    KC_TRAP_MEMORY,      /* memory access out of bounds */
    KC_TRAP_MISALIGNED,  /* misaligned access */
    KC_TRAP_BUDGET,      /* step budget exhausted */
    KC_TRAP_USER,        /* the `trap "msg"` statement */
    KC_TRAP_ARITH,       /* integer division by zero */
    KC_TRAP_PC,          /* pc outside the program, or not at the start of an instruction */
    KC_TRAP_TIMEOUT      /* the run's wall-clock limit passed (status KC_STATUS_TIMEOUT) */
};

typedef struct { int kind; uint64_t pc; char message[160]; } kc_trap;

static inline void kc_trap_clear(kc_trap *t) { t->kind = KC_TRAP_NONE; t->pc = 0; t->message[0] = '\0'; }

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void kc_trap_set(kc_trap *t, int kind, uint64_t pc, const char *fmt, ...)
{
    va_list ap;
    if (t->kind != KC_TRAP_NONE) return;
    t->kind = kind;
    t->pc = pc;
    va_start(ap, fmt);
    vsnprintf(t->message, sizeof t->message, fmt, ap);
    va_end(ap);
}

#endif /* KC_TRAP_H */
