"""Generated assembler and disassembler: one Assembler/Disassembler per checked ISA (isadl.Spec)."""
from .assembler import AsmError, Assembler
from .program import Placed, Program, Section

__all__ = ["AsmError", "Assembler", "Placed", "Program", "Section"]
