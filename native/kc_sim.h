/* kc_sim.h -- the public C API of a generated KernelCraft simulator.
 *
 * Every target's simulator (kcgen.sim.cgen) defines a state struct `<P>_state` and an operation
 * struct `<P>_op`, where <P> is the target prefix (kc_<isa name>), and exports exactly these
 * functions; nothing else is visible outside the shared object. The Python side declares the same
 * signatures to cffi (the build directory's cdef.h, also usable as a C header).
 *
 *   <P>_predecode(s, text, len, base)  decode a text section once into s->ops / s->index
 *   <P>_run(s, max_steps)              run; returns a KC_STATUS_* value, fills s->trap on a trap.
 *                                      With s->wall_ns > 0 the run also stops once that many ns of
 *                                      wall-clock time have passed (KC_STATUS_TIMEOUT, trap kind
 *                                      KC_TRAP_TIMEOUT); the state is otherwise the same as without it
 *   <P>_decode_one(bytes, len, pc, op) decode one instruction (or bundle's first slot); its size
 *   <P>_layout_size()                  sizeof(<P>_state), to check the Python side's view of it
 */
#ifndef KC_SIM_H
#define KC_SIM_H

#include <stdint.h>

enum { KC_STATUS_RUNNING = 0, KC_STATUS_HALTED = 1, KC_STATUS_TRAP = 2, KC_STATUS_BUDGET = 3, KC_STATUS_TIMEOUT = 4 };

#define KC_SIM_API(P)                                                                          \
    int P##_predecode(P##_state *s, const uint8_t *text, uint64_t len, uint64_t base);         \
    int P##_run(P##_state *s, uint64_t max_steps);                                             \
    int P##_decode_one(const uint8_t *bytes, uint64_t len, uint64_t pc, P##_op *out);          \
    uint64_t P##_layout_size(void);

#endif /* KC_SIM_H */
