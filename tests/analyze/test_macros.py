"""Macro substitution keeps the preprocessor's order of steps: stringize, bind parameters (whole
words only), then paste. The fast paths (no regex pass when a body has no ``#`` or the bound text
no ``##``; a body cut into words once and bound at every invocation) must give the same text."""

from __future__ import annotations

from d2k_analyze.parsing.macros import collect, expand


def _expanded(source: str) -> str:
    return expand(source, collect([source])).splitlines()[-1]


def test_paste_that_arrives_through_an_argument_is_applied():
    # the body has no '##'; the argument brings one, and pasting runs after binding
    assert _expanded("#define ID(x) x\nID(a ## b)") == "ab"


def test_stringize_paste_and_whole_word_binding():
    src = "#define S(x) #x\n#define P(a) a ## _t\n#define W(n) n + nx + x_n\nS(he\"y) P(int) W(1)"
    assert _expanded(src) == '"he\\"y" int_t 1 + nx + x_n'


def test_object_like_and_parameterless_macros():
    src = "#define BM 128\n#define ZERO() 0\nint a = BM + ZERO();"
    assert _expanded(src) == "int a = 128 + 0;"


def test_a_define_inside_a_function_body_is_blanked_after_expansion():
    # left in place, the directive sits between `if {...}` and the `else if` its macro writes,
    # and the parser loses the else (OneFlow's dispatch ladders are built this way)
    src = ("#define TOP 1\n"
           "int pick(int n) {\n"
           "  if (n <= 0) { return 0; }\n"
           "#define ARM(w) \\\n"
           "  else if (n <= (w)) { return w; }\n"
           "  ARM(32)\n"
           "#undef ARM\n"
           "  return TOP;\n"
           "}\n")
    out = expand(src, collect([src])).split("\n")
    assert len(out) == len(src.split("\n"))  # every line where it was
    assert out[0] == "#define TOP 1"  # a file-level define stays
    assert out[3] == out[4] == out[6] == ""  # the body's define, its continuation and the undef
    assert out[5].strip() == "else if (n <= (32)) { return 32; }"
    assert out[7].strip() == "return 1;"


def test_a_paste_onto_the_variadic_arguments_is_not_a_stringize():
    # `##__VA_ARGS__`: the second `#` of the paste must not stringize the arguments
    src = "#define WIDE(...) wide_##__VA_ARGS__\nWIDE(step<float, 4><<<g, b>>>(p, n));"
    assert _expanded(src) == "wide_step<float, 4><<<g, b>>>(p, n);"


def test_a_named_variadic_parameter_takes_the_remaining_arguments():
    # GNU `rest...`: bound to every argument from its position on, or to nothing
    src = "#define SPEC(K, V, rest...) template <rest> struct Map<K> { using T = V; };\nSPEC(int, float2, typename A, int B) SPEC(char, short)"
    assert _expanded(src) == ("template <typename A, int B> struct Map<int> { using T = float2; }; "
                              "template <> struct Map<char> { using T = short; };")
