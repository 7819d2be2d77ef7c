"""Exceptions raised by x86gen. All derive from `EncodeError` (itself a `ValueError`)."""
from __future__ import annotations


class EncodeError(ValueError):
    """An instruction that cannot be encoded; the message says which and why."""


class UnknownMnemonicError(EncodeError):
    """No form has this mnemonic."""


class OperandError(EncodeError):
    """Operands that no form accepts, or that break an encoding rule (AH with REX, RSP as index, …)."""


class ImmediateRangeError(OperandError):
    """An immediate or displacement that does not fit its field."""


class AsmSyntaxError(EncodeError):
    """Intel-syntax text that cannot be parsed; names the line."""


class UnsupportedRegisterError(OperandError):
    """A register of x86-64 that x86gen has no forms for (yet): cr0, dr7, zmm0, xmm16, st(0), mm0, fs, tmm0, …"""
