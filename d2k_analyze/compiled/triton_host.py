"""Which Triton launches a submission makes on a workload: its host code, evaluated on shapes.

Compiling a kernel as the GPU would needs what only the launch knows: the pointer element types,
which integer arguments are multiples of 16 (or equal to 1: Triton specializes on both), the
``constexpr`` values (``BLOCK_N = next_power_of_2(n_cols)``), ``num_warps``/``num_stages`` and the
autotune configs, with the block shapes their pre-hooks give tensor descriptors.

This module finds them by *interpreting* the submission's Python over :mod:`ast`, never importing
it: the entry point (``run`` or ``ModelNew``) is called with shape-only tensors built from a task
workload (shape, dtype, strides; no data), on a CUDA device with the SM count of the target.
Only a small, side-effect-free subset of Python and of the torch/triton host API is modelled;
anything else evaluates to :data:`UNKNOWN`, and an argument left unknown is reported, not guessed.
Loops and calls are bounded, so evaluation always ends.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from d2k_spec.task import VALUE_DTYPE

from .triton_gate import aliases, dotted, is_jit


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise _Undecidable()


UNKNOWN: Any = _Unknown()
MAX_STEPS = 200_000
MAX_LOOP = 256
MAX_DEPTH = 24

TORCH_DTYPES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float64": "fp64",
    "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int": "i32", "int64": "i64", "long": "i64",
    "uint8": "u8", "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
}
TL_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "i8", "int16": "i16",
             "int32": "i32", "int64": "i64", "uint8": "u8", "int1": "i1", "float8e4nv": "fp8e4nv", "float8e5": "fp8e5"}
ITEMSIZE = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "i1": 1,
            "fp8e4nv": 1, "fp8e5": 1}
SM_COUNT = {90: 132, 100: 148}


class _Undecidable(Exception):
    """A branch condition is unknown."""


class _Abort(Exception):
    """Evaluation of this call cannot go on (a raise, an unsupported construct, the step budget)."""


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# --- values ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DType:
    name: str  # Triton's short name: fp32, bf16 ...

    @property
    def itemsize(self) -> int:
        return ITEMSIZE.get(self.name, 4)


@dataclass
class Tensor:
    shape: tuple
    dtype: DType
    strides: tuple

    @classmethod
    def contiguous(cls, shape: tuple, dtype: DType) -> Tensor:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc = acc * n if isinstance(n, int) and isinstance(acc, int) else UNKNOWN
        return cls(tuple(shape), dtype, tuple(reversed(strides)))


@dataclass
class Descriptor:
    """A host ``TensorDescriptor``: Triton's signature is ``tensordesc<dtype[block_shape]>``."""

    base: Tensor
    block_shape: list


@dataclass(frozen=True)
class Module:
    name: str


@dataclass
class Closure:
    node: ast.FunctionDef | ast.Lambda
    globals: dict
    module: str
    defaults: list = field(default_factory=list)
    kw_defaults: dict = field(default_factory=dict)
    self_obj: Any = None


@dataclass(frozen=True)
class Param:
    name: str
    constexpr: bool
    default: Any = None  # evaluated default (UNKNOWN when it has none)


@dataclass
class JitRef:
    """A ``@triton.jit`` function of the submission (a kernel unit when it is launched)."""

    file: str
    name: str
    params: tuple[Param, ...]


@dataclass
class Config:
    kwargs: dict
    options: dict
    pre_hook: Any = None


@dataclass
class Autotuned:
    fn: Any
    configs: list
    prune: Any = None  # prune_configs_by={"early_config_prune": fn}


@dataclass
class Heuristic:
    fn: Any
    values: dict


@dataclass
class Instance:
    cls: "ClassVal"
    attrs: dict = field(default_factory=dict)


@dataclass
class ClassVal:
    name: str
    methods: dict


@dataclass
class Device:
    type: str = "cuda"
    index: int = 0


@dataclass
class Builtin:
    name: str
    fn: Callable


@dataclass
class Bound:
    obj: Any
    name: str


@dataclass
class LaunchProxy:
    target: Any


@dataclass
class Launch:
    """One kernel launch: the jit function, the wrappers around it (autotune, heuristics) and
    the values of its arguments by parameter name, plus launch options given at the call."""

    kernel: JitRef
    wrappers: tuple
    bound: dict
    options: dict
    kwargs: dict = field(default_factory=dict)


OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")


# --- the interpreter ------------------------------------------------------------------------------


class HostInterpreter:
    """Evaluates a submission's modules and entry point with shape-only tensors."""

    def __init__(self, files: dict[str, str], arch: int):
        self.files = files  # module name -> source text (the submission's Python files)
        self.arch = arch
        self.globals: dict[str, dict] = {}
        self.launches: list[Launch] = []
        self.steps = 0
        self.depth = 0

    # modules -----------------------------------------------------------------------------------
    def module(self, name: str) -> dict:
        if name in self.globals:
            return self.globals[name]
        env: dict = {"__name__": "d2k_submission"}
        self.globals[name] = env
        tree = ast.parse(self.files[name])
        env["__aliases__"] = aliases(tree)
        env["__file__"] = name
        for s in tree.body:
            try:
                self.stmt(s, env, env, name)
            except (_Abort, _Undecidable, _Break, _Continue, _Return, RecursionError):
                continue
        return env

    def import_value(self, canon: str) -> Any:
        root = canon.split(".")[0]
        if root in self.files:
            mod = self.module(root)
            rest = canon.split(".")[1:]
            value: Any = mod if not rest else mod.get(rest[0], UNKNOWN)
            return value if not rest else value
        return _library(canon)

    # entry point -------------------------------------------------------------------------------
    def call_entry(self, main: str, inputs: list) -> None:
        env = self.module(main)
        run = env.get("run")
        try:
            if isinstance(run, Closure):
                self.call(run, inputs, {})
                return
            cls = env.get("ModelNew")
            if isinstance(cls, ClassVal):
                model = self.call(cls, [], {})
                if isinstance(model, Instance):
                    fwd = cls.methods.get("forward")
                    if fwd is not None:
                        self.call(Closure(fwd.node, fwd.globals, fwd.module, fwd.defaults, fwd.kw_defaults, model), inputs, {})
        except (_Abort, _Undecidable, _Return, _Break, _Continue, RecursionError):
            pass

    # statements --------------------------------------------------------------------------------
    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Abort("step budget")

    def block(self, body: list[ast.stmt], env: dict, glb: dict, mod: str) -> None:
        for s in body:
            self.stmt(s, env, glb, mod)

    def stmt(self, s: ast.stmt, env: dict, glb: dict, mod: str) -> None:
        self.tick()
        if isinstance(s, ast.Expr):
            self.expr(s.value, env, glb, mod)
        elif isinstance(s, ast.Assign):
            value = self.expr(s.value, env, glb, mod)
            for t in s.targets:
                self.assign(t, value, env, glb, mod)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.expr(s.value, env, glb, mod), env, glb, mod)
        elif isinstance(s, ast.AugAssign):
            cur = self.expr(s.target, env, glb, mod)
            self.assign(s.target, _binop(s.op, cur, self.expr(s.value, env, glb, mod)), env, glb, mod)
        elif isinstance(s, ast.If):
            try:
                taken = bool(self.expr(s.test, env, glb, mod))
            except _Undecidable:
                self.block(s.body, env, glb, mod)  # both branches, in order: every launch is seen
                self.block(s.orelse, env, glb, mod)
                return
            self.block(s.body if taken else s.orelse, env, glb, mod)
        elif isinstance(s, ast.For):
            items = self.expr(s.iter, env, glb, mod)
            if items is UNKNOWN or not hasattr(items, "__iter__"):
                raise _Abort("loop over an unknown sequence")
            for n, item in enumerate(items):
                if n >= MAX_LOOP:
                    raise _Abort("loop too long")
                self.assign(s.target, item, env, glb, mod)
                try:
                    self.block(s.body, env, glb, mod)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(s, ast.While):
            for _ in range(MAX_LOOP):
                if not self.expr(s.test, env, glb, mod):
                    break
                try:
                    self.block(s.body, env, glb, mod)
                except _Break:
                    break
                except _Continue:
                    continue
            else:
                raise _Abort("loop too long")
        elif isinstance(s, ast.Return):
            raise _Return(self.expr(s.value, env, glb, mod) if s.value is not None else None)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env[s.name] = self.define(s, env, glb, mod)
        elif isinstance(s, ast.ClassDef):
            body: dict = {}
            for m in s.body:
                if isinstance(m, ast.FunctionDef):
                    body[m.name] = Closure(m, glb, mod, *self.defaults(m, env, glb, mod))
            env[s.name] = ClassVal(s.name, body)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            self.do_import(s, env)
        elif isinstance(s, ast.Try):
            try:
                self.block(s.body, env, glb, mod)
            except _Abort:
                if s.handlers:
                    self.block(s.handlers[0].body, env, glb, mod)
            self.block(s.finalbody, env, glb, mod)
        elif isinstance(s, ast.With):
            self.block(s.body, env, glb, mod)
        elif isinstance(s, ast.Raise):
            raise _Abort("raise")
        elif isinstance(s, ast.Break):
            raise _Break()
        elif isinstance(s, ast.Continue):
            raise _Continue()
        elif isinstance(s, (ast.Pass, ast.Assert, ast.Global, ast.Nonlocal)):
            return
        else:
            raise _Abort(f"unsupported statement {type(s).__name__}")

    def do_import(self, s: ast.Import | ast.ImportFrom, env: dict) -> None:
        if isinstance(s, ast.Import):
            for a in s.names:
                canon = a.name if a.asname else a.name.split(".")[0]
                env[a.asname or a.name.split(".")[0]] = self.module(canon) if canon in self.files else Module(canon)
            return
        base = s.module or ""
        for a in s.names:
            if s.level and not base:
                env[a.asname or a.name] = self.module(a.name) if a.name in self.files else UNKNOWN
            elif base.split(".")[0] in self.files:
                env[a.asname or a.name] = self.module(base.split(".")[0]).get(a.name, UNKNOWN)
            else:
                env[a.asname or a.name] = _library(f"{base}.{a.name}")

    def define(self, s: ast.FunctionDef, env: dict, glb: dict, mod: str) -> Any:
        names = glb.get("__aliases__", {})
        if is_jit(s, names):
            fn: Any = JitRef(mod, s.name, self.params(s, env, glb, mod))
        else:
            fn = Closure(s, glb, mod, *self.defaults(s, env, glb, mod), self_obj=_Scope(env) if env is not glb else None)
        for d in reversed(s.decorator_list):
            target = d.func if isinstance(d, ast.Call) else d
            if dotted(target, names) in ("triton.jit", "triton.runtime.jit"):
                continue
            deco = self.expr(d, env, glb, mod)
            fn = self.call(deco, [fn], {}) if deco is not UNKNOWN else fn
        return fn

    def params(self, s: ast.FunctionDef, env: dict, glb: dict, mod: str) -> tuple[Param, ...]:
        names = glb.get("__aliases__", {})
        args = [*s.args.posonlyargs, *s.args.args]
        defaults = [UNKNOWN] * (len(args) - len(s.args.defaults)) + [self.safe(d, env, glb, mod) for d in s.args.defaults]
        out = []
        for a, d in zip(args, defaults):
            ann = a.annotation
            const = ann is not None and (dotted(ann, names) in ("triton.language.constexpr", "triton.language.core.constexpr")
                                         or (isinstance(ann, ast.Constant) and "constexpr" in str(ann.value)))
            out.append(Param(a.arg, const, d))
        return tuple(out)

    def defaults(self, s: ast.FunctionDef | ast.Lambda, env: dict, glb: dict, mod: str) -> tuple[list, dict]:
        pos = [self.safe(d, env, glb, mod) for d in s.args.defaults]
        kw = {a.arg: self.safe(d, env, glb, mod) for a, d in zip(s.args.kwonlyargs, s.args.kw_defaults) if d is not None}
        return pos, kw

    def safe(self, e: ast.expr, env: dict, glb: dict, mod: str) -> Any:
        try:
            return self.expr(e, env, glb, mod)
        except (_Abort, _Undecidable):
            return UNKNOWN

    def assign(self, t: ast.expr, value: Any, env: dict, glb: dict, mod: str) -> None:
        if isinstance(t, ast.Name):
            env[t.id] = value
        elif isinstance(t, (ast.Tuple, ast.List)):
            items = list(value) if isinstance(value, (tuple, list)) else None
            if items is None or len(items) != len(t.elts):
                items = [UNKNOWN] * len(t.elts)
            for sub, v in zip(t.elts, items):
                self.assign(sub, v, env, glb, mod)
        elif isinstance(t, ast.Subscript):
            obj = self.expr(t.value, env, glb, mod)
            key = self.expr(t.slice, env, glb, mod)
            if isinstance(obj, (dict, list)) and key is not UNKNOWN:
                try:
                    obj[key] = value
                except (IndexError, TypeError):
                    pass
        elif isinstance(t, ast.Attribute):
            obj = self.expr(t.value, env, glb, mod)
            if isinstance(obj, Instance):
                obj.attrs[t.attr] = value
            elif isinstance(obj, Descriptor) and t.attr == "block_shape":
                obj.block_shape = list(value) if isinstance(value, (list, tuple)) else UNKNOWN

    # expressions -------------------------------------------------------------------------------
    def spread(self, elts: list[ast.expr], env: dict, glb: dict, mod: str) -> list | None:
        """The values of a display's items or a call's arguments, ``*xs`` expanded; None when a
        starred value is not a known sequence."""
        out: list = []
        for el in elts:
            if isinstance(el, ast.Starred):
                inner = self.expr(el.value, env, glb, mod)
                if not isinstance(inner, (list, tuple)):
                    return None
                out += list(inner)
            else:
                out.append(self.expr(el, env, glb, mod))
        return out

    def expr(self, e: ast.expr, env: dict, glb: dict, mod: str) -> Any:
        self.tick()
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            if e.id in glb:
                return glb[e.id]
            return _builtin(e.id)
        if isinstance(e, ast.Attribute):
            return _attr(self.expr(e.value, env, glb, mod), e.attr, self)
        if isinstance(e, ast.Subscript):
            obj = self.expr(e.value, env, glb, mod)
            key = self.expr(e.slice, env, glb, mod)
            if isinstance(obj, (JitRef, Autotuned, Heuristic)):
                return LaunchProxy(obj)
            return _item(obj, key)
        if isinstance(e, ast.Slice):
            parts = [self.expr(p, env, glb, mod) if p is not None else None for p in (e.lower, e.upper, e.step)]
            return slice(*parts) if all(p is None or isinstance(p, int) for p in parts) else UNKNOWN
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            items = self.spread(e.elts, env, glb, mod)
            if items is None:
                return UNKNOWN
            return tuple(items) if isinstance(e, ast.Tuple) else items
        if isinstance(e, ast.Dict):
            out: dict = {}
            for k, v in zip(e.keys, e.values):
                if k is None:
                    inner = self.expr(v, env, glb, mod)
                    if isinstance(inner, dict):
                        out.update(inner)
                    continue
                key = self.expr(k, env, glb, mod)
                if key is UNKNOWN:
                    return UNKNOWN
                out[key] = self.expr(v, env, glb, mod)
            return out
        if isinstance(e, ast.BinOp):
            return _binop(e.op, self.expr(e.left, env, glb, mod), self.expr(e.right, env, glb, mod))
        if isinstance(e, ast.UnaryOp):
            v = self.expr(e.operand, env, glb, mod)
            if v is UNKNOWN:
                return UNKNOWN
            if isinstance(e.op, ast.Not):
                return not v
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(e.op)](v)
        if isinstance(e, ast.BoolOp):
            result: Any = None
            for v in e.values:
                result = self.expr(v, env, glb, mod)
                if result is UNKNOWN:
                    return UNKNOWN
                if isinstance(e.op, ast.And) and not result:
                    return result
                if isinstance(e.op, ast.Or) and result:
                    return result
            return result
        if isinstance(e, ast.Compare):
            left = self.expr(e.left, env, glb, mod)
            for op, right_node in zip(e.ops, e.comparators):
                right = self.expr(right_node, env, glb, mod)
                ok = _compare(op, left, right)
                if ok is UNKNOWN or not ok:
                    return ok
                left = right
            return True
        if isinstance(e, ast.IfExp):
            try:
                taken = bool(self.expr(e.test, env, glb, mod))
            except _Undecidable:
                return UNKNOWN
            return self.expr(e.body if taken else e.orelse, env, glb, mod)
        if isinstance(e, ast.Call):
            fn = self.expr(e.func, env, glb, mod)
            args = self.spread(e.args, env, glb, mod)
            if args is None:
                return UNKNOWN
            kwargs: dict = {}
            for k in e.keywords:
                v = self.expr(k.value, env, glb, mod)
                if k.arg is None:
                    if not isinstance(v, dict):
                        return UNKNOWN
                    kwargs.update(v)
                else:
                    kwargs[k.arg] = v
            return self.call(fn, args, kwargs)
        if isinstance(e, ast.Lambda):
            return Closure(e, glb, mod, *self.defaults(e, env, glb, mod), self_obj=_Scope(env))
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return self.comprehension(e, env, glb, mod)
        if isinstance(e, ast.JoinedStr):
            return UNKNOWN
        if isinstance(e, ast.Starred):
            return self.expr(e.value, env, glb, mod)
        return UNKNOWN

    def comprehension(self, e, env: dict, glb: dict, mod: str) -> Any:
        out: list = []
        keys: list = []

        def loop(n: int, scope: dict) -> None:
            if n == len(e.generators):
                if isinstance(e, ast.DictComp):
                    keys.append(self.expr(e.key, scope, glb, mod))
                    out.append(self.expr(e.value, scope, glb, mod))
                else:
                    out.append(self.expr(e.elt, scope, glb, mod))
                return
            gen = e.generators[n]
            items = self.expr(gen.iter, scope, glb, mod)
            if items is UNKNOWN or not hasattr(items, "__iter__"):
                raise _Abort("comprehension over an unknown sequence")
            for i, item in enumerate(items):
                if i >= MAX_LOOP:
                    raise _Abort("comprehension too long")
                inner = dict(scope)
                self.assign(gen.target, item, inner, glb, mod)
                if all(self.expr(c, inner, glb, mod) for c in gen.ifs):
                    loop(n + 1, inner)

        try:
            loop(0, dict(env))
        except _Undecidable:
            return UNKNOWN
        if isinstance(e, ast.DictComp):
            return dict(zip(keys, out)) if UNKNOWN not in keys else UNKNOWN
        return out

    # calls -------------------------------------------------------------------------------------
    def call(self, fn: Any, args: list, kwargs: dict) -> Any:
        self.tick()
        if isinstance(fn, Closure):
            return self.call_closure(fn, args, kwargs)
        if isinstance(fn, Builtin):
            try:
                return fn.fn(self, *args, **kwargs)
            except (_Abort, _Undecidable):
                raise
            except Exception:  # noqa: BLE001 - a modelled call on values it does not expect
                return UNKNOWN
        if isinstance(fn, Bound):
            return _method(self, fn.obj, fn.name, args, kwargs)
        if isinstance(fn, LaunchProxy):
            self.record(fn.target, args, kwargs, ())
            return None
        if isinstance(fn, ClassVal):
            inst = Instance(fn)
            init = fn.methods.get("__init__")
            if init is not None:
                try:
                    self.call_closure(Closure(init.node, init.globals, init.module, init.defaults, init.kw_defaults, inst), args, kwargs)
                except (_Abort, _Undecidable):
                    pass
            return inst
        if isinstance(fn, Instance):
            fwd = fn.cls.methods.get("forward")
            if fwd is not None:
                return self.call_closure(Closure(fwd.node, fwd.globals, fwd.module, fwd.defaults, fwd.kw_defaults, fn), args, kwargs)
        return UNKNOWN

    def call_closure(self, fn: Closure, args: list, kwargs: dict) -> Any:
        if self.depth >= MAX_DEPTH:
            raise _Abort("call depth")
        node = fn.node
        scope: dict = dict(fn.self_obj.env) if isinstance(fn.self_obj, _Scope) else {}
        params = [*node.args.posonlyargs, *node.args.args]
        if fn.self_obj is not None and not isinstance(fn.self_obj, _Scope):
            args = [fn.self_obj, *args]
        defaults = [UNKNOWN] * (len(params) - len(fn.defaults)) + list(fn.defaults)
        for i, p in enumerate(params):
            scope[p.arg] = args[i] if i < len(args) else kwargs.pop(p.arg, defaults[i])
        if node.args.vararg is not None:
            scope[node.args.vararg.arg] = tuple(args[len(params):])
        for a in node.args.kwonlyargs:
            scope[a.arg] = kwargs.pop(a.arg, fn.kw_defaults.get(a.arg, UNKNOWN))
        if node.args.kwarg is not None:
            scope[node.args.kwarg.arg] = dict(kwargs)
        self.depth += 1
        try:
            if isinstance(node, ast.Lambda):
                return self.expr(node.body, scope, fn.globals, fn.module)
            self.block(node.body, scope, fn.globals, fn.module)
        except _Return as r:
            return r.value
        except _Undecidable:
            return UNKNOWN
        finally:
            self.depth -= 1
        return None

    def record(self, target: Any, args: list, kwargs: dict, wrappers: tuple) -> None:
        if isinstance(target, (Autotuned, Heuristic)):
            self.record(target.fn, args, kwargs, (*wrappers, target))
            return
        if not isinstance(target, JitRef):
            return
        bound: dict = {}
        options = {k: kwargs[k] for k in OPTION_NAMES if k in kwargs}
        for i, p in enumerate(target.params):
            if i < len(args):
                bound[p.name] = args[i]
            elif p.name in kwargs:
                bound[p.name] = kwargs[p.name]
        self.launches.append(Launch(target, wrappers, bound, options, dict(kwargs)))


    def bindings(self, launch: Launch) -> list[Binding]:
        """The argument values and options of every compile a launch can cause: one per autotune
        config (after its pre-hook ran on the arguments), heuristics applied, defaults filled in."""
        tuned = next((w for w in launch.wrappers if isinstance(w, Autotuned)), None)
        configs = tuned.configs if tuned is not None else [None]
        if configs is UNKNOWN or not configs:
            return [Binding("autotune configs not resolved", {}, {}, False)]
        pruned = ""
        if tuned is not None and isinstance(tuned.prune, Closure):
            meta = {k: v for k, v in launch.kwargs.items() if k not in OPTION_NAMES}
            try:
                kept = self.call(tuned.prune, [list(configs), dict(launch.bound)], meta)
            except (_Abort, _Undecidable, RecursionError):
                kept = UNKNOWN
            if isinstance(kept, list) and kept and all(isinstance(c, Config) for c in kept):
                pruned = f", {len(kept)} of {len(configs)} kept by its early_config_prune"
                configs = kept
        out = []
        for n, cfg in enumerate(configs):
            # each config gets its own descriptors: its pre-hook sets their block shapes
            values = {k: Descriptor(v.base, list(v.block_shape) if isinstance(v.block_shape, list) else v.block_shape)
                      if isinstance(v, Descriptor) else v for k, v in launch.bound.items()}
            options = dict(launch.options)
            label = "launch"
            if isinstance(cfg, Config):
                values.update(cfg.kwargs)
                options = dict(cfg.options)
                shown = ", ".join(f"{k}={v}" for k, v in cfg.kwargs.items())
                label = f"autotune config {n + 1}/{len(configs)}{pruned}" + (f" ({shown})" if shown else "")
                if isinstance(cfg.pre_hook, Closure):
                    try:
                        self.call(cfg.pre_hook, [values], {})
                    except (_Abort, _Undecidable, RecursionError):
                        pass
            elif cfg is not None:
                out.append(Binding(f"autotune config {n + 1} not resolved", {}, {}, False))
                continue
            for w in launch.wrappers:
                if isinstance(w, Heuristic):
                    for key, fn in w.values.items():
                        try:
                            values[key] = self.call(fn, [dict(values)], {})
                        except (_Abort, _Undecidable, RecursionError):
                            values[key] = UNKNOWN
            for p in launch.kernel.params:
                values.setdefault(p.name, p.default)
            out.append(Binding(label, values, options, True))
        return out


@dataclass
class Binding:
    """One compile of a launched kernel: argument values by parameter and compiler options."""

    label: str
    values: dict
    options: dict
    resolved: bool


@dataclass
class _Scope:
    """The enclosing scope a lambda closes over."""

    env: dict


# --- the modelled library ------------------------------------------------------------------------


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
    fn = ops.get(type(op))
    if fn is None:
        return UNKNOWN
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and fn is operator.pow and abs(b) > 64:
        return UNKNOWN
    try:
        return fn(a, b)
    except Exception:  # noqa: BLE001 - e.g. a division by zero or mismatched types
        return UNKNOWN


def _compare(op: ast.cmpop, a: Any, b: Any) -> Any:
    if isinstance(op, (ast.Is, ast.IsNot)):
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        same = a is b
        return same if isinstance(op, ast.Is) else not same
    if isinstance(op, (ast.In, ast.NotIn)):
        if b is UNKNOWN or a is UNKNOWN or not isinstance(b, (list, tuple, set, dict, str, range)):
            return UNKNOWN
        try:
            found = a in b
        except TypeError:
            return UNKNOWN
        return found if isinstance(op, ast.In) else not found
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    ops = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge}
    try:
        return ops[type(op)](a, b)
    except Exception:  # noqa: BLE001
        return UNKNOWN


def _item(obj: Any, key: Any) -> Any:
    if obj is UNKNOWN or key is UNKNOWN:
        return UNKNOWN
    if isinstance(obj, Tensor):
        return _tensor_index(obj, key)
    try:
        return obj[key]
    except Exception:  # noqa: BLE001
        return UNKNOWN


def _tensor_index(t: Tensor, key: Any) -> Any:
    keys = key if isinstance(key, tuple) else (key,)
    shape, strides = list(t.shape), list(t.strides)
    out_shape, out_strides, dim = [], [], 0
    for k in keys:
        if k is None:
            out_shape.append(1)
            out_strides.append(0)
        elif isinstance(k, int):
            dim += 1
        elif isinstance(k, slice) and dim < len(shape):
            n = shape[dim]
            out_shape.append(len(range(*k.indices(n))) if isinstance(n, int) else UNKNOWN)
            out_strides.append(strides[dim] * (k.step or 1) if isinstance(strides[dim], int) else UNKNOWN)
            dim += 1
        else:
            return UNKNOWN
    return Tensor(tuple(out_shape + shape[dim:]), t.dtype, tuple(out_strides + strides[dim:]))


def _shape_arg(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _dtype_of(value: Any, default: DType | None = None) -> Any:
    return value if isinstance(value, DType) else (default if default is not None else UNKNOWN)


def _new_tensor(shape: Any, dtype: Any) -> Any:
    if not isinstance(shape, (tuple, list)) or not isinstance(dtype, DType):
        return UNKNOWN
    return Tensor.contiguous(tuple(shape), dtype)


def _library(canon: str) -> Any:
    """A torch / triton / math name as a value: dtypes, modelled callables, or a module path."""
    parts = canon.split(".")
    if parts[0] == "torch" and len(parts) == 2 and parts[1] in TORCH_DTYPES:
        return DType(TORCH_DTYPES[parts[1]])
    if canon.startswith("triton.language.") and parts[-1] in TL_DTYPES and len(parts) == 3:
        return DType(TL_DTYPES[parts[-1]])
    fn = LIBRARY.get(canon)
    if fn is not None:
        return Builtin(canon, fn)
    return Module(canon)


def _builtin(name: str) -> Any:
    fn = BUILTINS.get(name)
    return Builtin(name, fn) if fn is not None else UNKNOWN


def _attr(obj: Any, name: str, interp: HostInterpreter) -> Any:
    if obj is UNKNOWN:
        return UNKNOWN
    if isinstance(obj, Module):
        return _library(f"{obj.name}.{name}")
    if isinstance(obj, Builtin) and "." in obj.name:
        return _library(f"{obj.name}.{name}")
    if isinstance(obj, dict) and "__aliases__" in obj:  # a submission module
        return obj.get(name, UNKNOWN)
    if isinstance(obj, Tensor):
        if name == "shape":
            return tuple(obj.shape)
        if name == "dtype":
            return obj.dtype
        if name == "device":
            return Device()
        if name == "ndim":
            return len(obj.shape)
        if name in ("T", "mT"):
            return Tensor(tuple(reversed(obj.shape)), obj.dtype, tuple(reversed(obj.strides)))
        if name == "is_cuda":
            return True
        return Bound(obj, name)
    if isinstance(obj, Device):
        return {"type": obj.type, "index": obj.index}.get(name, UNKNOWN)
    if isinstance(obj, DType):
        if name == "itemsize":
            return obj.itemsize
        if name == "is_floating_point":
            return Builtin("is_floating_point", lambda _i: obj.name.startswith(("fp", "bf")))
        return UNKNOWN
    if isinstance(obj, Descriptor):
        return obj.block_shape if name == "block_shape" else UNKNOWN
    if isinstance(obj, Instance):
        if name in obj.attrs:
            return obj.attrs[name]
        m = obj.cls.methods.get(name)
        return Closure(m.node, m.globals, m.module, m.defaults, m.kw_defaults, obj) if m is not None else UNKNOWN
    if isinstance(obj, _Props):
        return obj.values.get(name, UNKNOWN)
    if isinstance(obj, Config):
        if name in ("kwargs", "all_kwargs"):
            return dict(obj.kwargs) if name == "kwargs" else Builtin("all_kwargs", lambda _i: {**obj.kwargs, **obj.options})
        return obj.options.get(name, obj.pre_hook if name == "pre_hook" else UNKNOWN)
    if isinstance(obj, (dict, list, str)):
        return Bound(obj, name)
    if isinstance(obj, (JitRef, Autotuned, Heuristic)) and name in ("run", "warmup"):
        return UNKNOWN
    return UNKNOWN


@dataclass
class _Props:
    values: dict


def _method(interp: HostInterpreter, obj: Any, name: str, args: list, kwargs: dict) -> Any:
    if isinstance(obj, Tensor):
        return _tensor_method(obj, name, args, kwargs)
    if isinstance(obj, (dict, list, str)):
        fn = getattr(obj, name, None)
        if fn is None or name.startswith("_"):
            return UNKNOWN
        if UNKNOWN in args:
            return UNKNOWN
        try:
            result = fn(*args, **kwargs)
        except Exception:  # noqa: BLE001
            return UNKNOWN
        return list(result) if name in ("items", "keys", "values") else result
    return UNKNOWN


def _tensor_method(t: Tensor, name: str, args: list, kwargs: dict) -> Any:
    if name in ("contiguous", "cuda", "detach", "clone", "requires_grad_", "zero_", "fill_", "normal_", "uniform_"):
        return Tensor.contiguous(t.shape, t.dtype) if name in ("contiguous", "clone") else t
    if name == "stride":
        return t.strides[args[0]] if args else tuple(t.strides)
    if name == "size":
        return t.shape[args[0]] if args else tuple(t.shape)
    if name == "dim":
        return len(t.shape)
    if name == "numel":
        return math.prod(t.shape) if all(isinstance(n, int) for n in t.shape) else UNKNOWN
    if name == "element_size":
        return t.dtype.itemsize
    if name in ("is_contiguous",):
        return True
    if name == "data_ptr":
        return 0
    if name in ("view", "reshape", "expand", "flatten", "unsqueeze", "squeeze", "view_as", "reshape_as"):
        return _reshaped(t, name, args)
    if name == "to":
        dt = next((a for a in [*args, kwargs.get("dtype")] if isinstance(a, DType)), None)
        return Tensor.contiguous(t.shape, dt) if dt is not None else t
    if name in ("float", "half", "bfloat16", "double"):
        return Tensor.contiguous(t.shape, DType({"float": "fp32", "half": "fp16", "bfloat16": "bf16", "double": "fp64"}[name]))
    if name in ("t", "transpose"):
        if len(t.shape) == 2 or name == "t":
            return Tensor(tuple(reversed(t.shape)), t.dtype, tuple(reversed(t.strides)))
        a, b = args[0], args[1]
        shape, strides = list(t.shape), list(t.strides)
        shape[a], shape[b], strides[a], strides[b] = shape[b], shape[a], strides[b], strides[a]
        return Tensor(tuple(shape), t.dtype, tuple(strides))
    if name in ("new_empty", "new_zeros", "new_ones", "new_full"):
        return _new_tensor(_shape_arg(tuple(args[:1])) if args else UNKNOWN, _dtype_of(kwargs.get("dtype"), t.dtype))
    return UNKNOWN


def _reshaped(t: Tensor, name: str, args: list) -> Any:
    if name in ("view_as", "reshape_as"):
        return Tensor.contiguous(args[0].shape, t.dtype) if args and isinstance(args[0], Tensor) else UNKNOWN
    if name == "flatten":
        n = math.prod(t.shape) if all(isinstance(x, int) for x in t.shape) else UNKNOWN
        return Tensor.contiguous((n,), t.dtype)
    if name == "unsqueeze":
        shape = list(t.shape)
        shape.insert(args[0] if args[0] >= 0 else len(shape) + 1 + args[0], 1)
        return Tensor.contiguous(tuple(shape), t.dtype)
    if name == "squeeze":
        return Tensor.contiguous(tuple(n for n in t.shape if n != 1), t.dtype)
    shape = list(_shape_arg(tuple(args)))
    if name == "expand":
        return Tensor(tuple(shape), t.dtype, tuple([0] * (len(shape) - len(t.strides)) + list(t.strides)))
    total = math.prod(t.shape) if all(isinstance(x, int) for x in t.shape) else None
    if -1 in shape and total is not None:
        known = math.prod(n for n in shape if n != -1)
        shape[shape.index(-1)] = total // known if known else UNKNOWN
    return Tensor.contiguous(tuple(shape), t.dtype)


def _empty(_i, *shape, dtype=None, **_kw):
    return _new_tensor(_shape_arg(shape), _dtype_of(dtype, DType("fp32")))


def _like(_i, t, *rest, dtype=None, **_kw):
    return _new_tensor(t.shape, _dtype_of(dtype, t.dtype)) if isinstance(t, Tensor) else UNKNOWN


def _full(_i, shape, _value, dtype=None, **_kw):
    return _new_tensor(tuple(shape) if isinstance(shape, (tuple, list)) else UNKNOWN, _dtype_of(dtype, DType("fp32")))


def _empty_strided(_i, shape, strides, dtype=None, **_kw):
    return Tensor(tuple(shape), _dtype_of(dtype, DType("fp32")), tuple(strides))


def _cdiv(_i, a, b):
    return -(-a // b) if isinstance(a, int) and isinstance(b, int) and b else UNKNOWN


def _next_pow2(_i, n):
    return 1 << (n - 1).bit_length() if isinstance(n, int) and n > 0 else UNKNOWN


def _config(_i, kwargs=None, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None, **rest):
    options = {"num_warps": num_warps, "num_stages": num_stages, "num_ctas": num_ctas}
    if maxnreg is not None:
        options["maxnreg"] = maxnreg
    return Config(dict(kwargs or {}), options, pre_hook)


def _autotune(_i, configs=None, key=None, prune_configs_by=None, *rest, **kw):
    prune = prune_configs_by.get("early_config_prune") if isinstance(prune_configs_by, dict) else None
    return Builtin("autotune", lambda _j, fn: Autotuned(fn, list(configs) if isinstance(configs, (list, tuple)) else UNKNOWN, prune))


def _heuristics(_i, values=None, *rest, **kw):
    return Builtin("heuristics", lambda _j, fn: Heuristic(fn, dict(values) if isinstance(values, dict) else {}))


def _descriptor(_i, base, shape=None, strides=None, block_shape=None, *rest, **kw):
    return Descriptor(base, list(block_shape) if isinstance(block_shape, (list, tuple)) else UNKNOWN) if isinstance(base, Tensor) else UNKNOWN


def _from_tensor(_i, base, block_shape=None, *rest, **kw):
    return _descriptor(_i, base, None, None, block_shape)


def _device_props(interp: HostInterpreter, *args, **kw):
    return _Props({"multi_processor_count": SM_COUNT.get(interp.arch, 132), "major": interp.arch // 10,
                   "minor": interp.arch % 10, "name": "NVIDIA GPU", "total_memory": 80 * 2**30,
                   "max_shared_memory_per_block_optin": 232448 if interp.arch >= 90 else 166912})


def _math(fn):
    return lambda _i, *a: fn(*a) if all(isinstance(x, (int, float)) for x in a) else UNKNOWN


def _pure(fn):
    def wrapped(_i, *a, **kw):
        if any(x is UNKNOWN for x in [*a, *kw.values()]):
            return UNKNOWN
        return fn(*a, **kw)
    return wrapped


def _seq(fn):
    """A builtin over a sequence: unknown when the sequence or any of its items is unknown."""
    def wrapped(_i, *a, **kw):
        for x in a:
            if x is UNKNOWN or (isinstance(x, (list, tuple)) and any(y is UNKNOWN for y in x)):
                return UNKNOWN
        return fn(*a, **kw)
    return wrapped


LIBRARY: dict[str, Callable] = {
    "torch.empty": _empty, "torch.zeros": _empty, "torch.ones": _empty, "torch.randn": _empty, "torch.rand": _empty,
    "torch.empty_like": _like, "torch.zeros_like": _like, "torch.ones_like": _like, "torch.randn_like": _like,
    "torch.full": _full, "torch.full_like": lambda _i, t, v, dtype=None, **k: _like(_i, t, dtype=dtype),
    "torch.empty_strided": _empty_strided,
    "torch.cuda.get_device_properties": _device_props, "torch.cuda.current_device": lambda _i: 0,
    "torch.cuda.is_available": lambda _i: True, "torch.cuda.get_device_capability": lambda i, *a: (i.arch // 10, i.arch % 10),
    "torch.device": lambda _i, *a, **k: Device(),
    "triton.cdiv": _cdiv, "triton.next_power_of_2": _next_pow2, "triton.language.cdiv": _cdiv,
    "triton.Config": _config, "triton.runtime.Config": _config, "triton.autotune": _autotune, "triton.runtime.autotune": _autotune,
    "triton.heuristics": _heuristics, "triton.runtime.heuristics": _heuristics,
    "triton.tools.tensor_descriptor.TensorDescriptor": _descriptor,
    "triton.tools.tensor_descriptor.TensorDescriptor.from_tensor": _from_tensor,
    "math.ceil": _math(math.ceil), "math.floor": _math(math.floor), "math.sqrt": _math(math.sqrt), "math.log2": _math(math.log2),
    "math.log": _math(math.log), "math.exp": _math(math.exp), "math.gcd": _math(math.gcd), "math.isqrt": _math(math.isqrt),
    "math.prod": _seq(math.prod),
    # a clean environment: TRITON_INTERPRET and friends are unset on the GPU being modelled
    "os.environ.get": lambda _i, key, default=None: default, "os.getenv": lambda _i, key, default=None: default,
}
BUILTINS: dict[str, Callable] = {
    "min": _seq(min), "max": _seq(max), "abs": _pure(abs), "int": _pure(int), "float": _pure(float), "bool": _pure(bool),
    "len": _pure(len), "range": _pure(range), "list": _pure(list), "tuple": _pure(tuple), "dict": _pure(dict),
    "sum": _seq(sum), "sorted": _seq(sorted), "zip": _pure(lambda *a: list(zip(*a))), "str": _pure(str),
    "enumerate": _pure(lambda a, start=0: list(enumerate(a, start))), "round": _pure(round), "pow": _pure(pow),
    "isinstance": lambda _i, *a: UNKNOWN, "print": lambda _i, *a, **k: None, "divmod": _pure(divmod),
    "any": _seq(any), "all": _seq(all), "reversed": _pure(lambda a: list(reversed(a))), "set": _pure(set),
}


def workload_inputs(task, params: dict) -> list:
    """Shape-only tensors for a task's inputs under one workload's parameters (ints passed by value as they are)."""
    out = []
    for spec in task.interface.inputs:
        if spec.dtype == VALUE_DTYPE:  # a Python int passed by value (d2k_spec.task.VALUE_DTYPE)
            if not isinstance(params.get(spec.name), int):
                return []
            out.append(params[spec.name])
            continue
        dtype_name = str(params.get(spec.dtype, spec.dtype))
        shape = tuple(params.get(s, s) if isinstance(s, str) else s for s in spec.shape)
        if not all(isinstance(n, int) for n in shape) or dtype_name not in TORCH_DTYPES:
            return []
        out.append(Tensor.contiguous(shape, DType(TORCH_DTYPES[dtype_name])))
    return out


def launch_bindings(files: dict[str, str], main: str, inputs: list, arch: int) -> list[tuple[Launch, Binding]]:
    """Every compile the entry point of module ``main`` causes on ``inputs`` (a target of SM ``arch``):
    each launch with each of its bindings (one per autotune config)."""
    interp = HostInterpreter(files, arch)
    try:
        interp.call_entry(main, inputs)
    except (_Abort, RecursionError, SyntaxError):
        pass
    out = []
    for launch in interp.launches:
        try:
            out += [(launch, b) for b in interp.bindings(launch)]
        except (_Abort, RecursionError):
            out.append((launch, Binding("launch not resolved", {}, {}, False)))
    return out


def python_files(folder: Path) -> dict[str, str]:
    """Module name -> text of the Python files of a submission folder (not its subfolders)."""
    files = [folder] if folder.is_file() else sorted(folder.glob("*.py"))
    out = {}
    for f in files:
        try:
            out[f.stem] = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out
