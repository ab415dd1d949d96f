"""Expressions for readers: the canonical printer already parenthesises mixed bitwise, shift and
logical operators and prints bitwise literals in hex, so the docs use it as it is."""
from isadl.printer import expr

__all__ = ["expr"]
