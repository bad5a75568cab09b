"""Parsing: source files -> kernel units with their live facts (tree-sitter for CUDA and Python)."""

from .units import ParsedSubmission, build_units, kernel_units, parse_files

__all__ = ["ParsedSubmission", "build_units", "kernel_units", "parse_files"]
