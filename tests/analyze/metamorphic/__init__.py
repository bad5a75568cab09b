"""Metamorphic transformations of benchmark submissions (issue 10, item 4).

Each transformation rewrites a copy of a submission folder into a program that does the same
thing but *looks* different: other identifier names (``rename``), other layout and no comments
(``reformat``), a helper moved into another file (``move_helper``), constants expressed another
way (``define_constexpr``, ``template_param``). The static analyzer must report the same kernel
units, property statuses and implementation score for the copy as for the original; where it does
not, a detector depends on how the code looks instead of on what it does.

The transformers live in the test tree on purpose: they are test instruments, built only on
tree-sitter (C++) and libcst (Python), and share no code with the analyzer they check.
"""
