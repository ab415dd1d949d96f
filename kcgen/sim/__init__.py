"""Simulation of a checked ISA: the storage model shared by every simulator, the typed view of
semantics, the generated C simulator (kcgen.sim.cgen, built by kcgen.sim.build) and the Python
reference interpreter (kcgen.sim.pyref) used to test it."""
