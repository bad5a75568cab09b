"""Fault: dereferences NULL through ctypes (SIGSEGV in the worker)."""
import ctypes


def run(x):
    return ctypes.string_at(0)
