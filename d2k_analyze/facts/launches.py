"""Kernel launches seen while interpreting host code: ``k<<<grid, block, smem>>>(...)``,
``cudaLaunchKernel``/``cudaLaunchKernelEx``/``cudaLaunchCooperativeKernel``, Triton
``kernel[grid](...)``. The grid, block and arguments are resolved in the host code, so a grid
sized from ``multiProcessorCount`` carries the ``sm_count`` atom into the launch record."""

from __future__ import annotations

from dataclasses import replace

from .expr import Attr, Call, Cast, E, Lambda, Name, Num, Op, Ptr, Sym, Tup, TypeRef, short
from .ir import Decl, If, Loc, Loop
from .kernel import LaunchFact

LAUNCHERS = {"<<<>>>", "launch[]", "cudaLaunchKernel", "cudaLaunchKernelEx", "cudaLaunchCooperativeKernel",
             "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernelExC", "cutlass.launch_kernel_on_cluster"}
TRITON_LAUNCH_OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid", "launch_pdl", "grid"}


def kernel_name(interp, value: E) -> str | None:
    if isinstance(value, TypeRef) and value.name.startswith("fn:"):
        name = value.name[3:]
    elif isinstance(value, Sym) and value.key.startswith("lib:"):
        name = value.key[4:]
    elif isinstance(value, Attr):
        return kernel_name(interp, value.base)  # kern.fn[grid](...) / kern.run(...)
    elif isinstance(value, Op) and value.op == "?:" and len(value.args) == 3:
        # a kernel picked by a condition (``wide ? k<8, 512> : nullptr``): the branches that name a
        # kernel must agree; a null branch launches nothing
        names = {kernel_name(interp, v) for v in value.args[1:] if not _null(v)}
        return names.pop() if len(names) == 1 else None
    else:
        return None
    aliases = getattr(interp.p, "aliases", {})
    return aliases.get(name, name).split(".")[-1]


def kernel_choices(interp, value: E, cond: tuple[E, ...] = ()) -> list[tuple[str, tuple[E, ...]]]:
    """The kernels a launched value names, each with the conditions that pick it: one kernel
    with none, or for a kernel chosen by a condition (``k = rowvec if m <= 4 else tiled``,
    ``(wide ? k8 : k4)<<<...>>>``) every branch's kernel with its side of the condition. A null
    branch launches nothing."""
    if isinstance(value, Op) and value.op == "?:" and len(value.args) == 3:
        c, a, b = value.args
        names = {kernel_name(interp, v) for v in (a, b) if not _null(v)}
        if len(names) > 1 and None not in names:
            return [*(kernel_choices(interp, a, cond + (c,)) if not _null(a) else []),
                    *(kernel_choices(interp, b, cond + (Op("not", (c,)),)) if not _null(b) else [])]
    name = kernel_name(interp, value)
    return [(name, cond)] if name else []


def _null(value: E) -> bool:
    return (isinstance(value, Num) and value.v == 0) or (isinstance(value, Sym) and value.key in ("lib:nullptr", "lib:NULL", "none"))


def dims(value: E) -> tuple[E, ...]:
    """A grid/block value as its components: dim3(x, y, z), (x, y), or one scalar."""
    if isinstance(value, Call) and value.fn in ("ctor:dim3", "dim3"):
        return value.args or (Num(1),)
    if isinstance(value, Tup):
        return value.items
    return (value,)


def record(interp, raw: Call, loc: Loc) -> E:
    fn = raw.fn
    if fn == "<<<>>>":
        kernel = interp.ev(raw.kwarg("kernel"), loc)
        grid = dims(interp.ev(raw.kwarg("grid"), loc)) if raw.kwarg("grid") is not None else ()
        block = dims(interp.ev(raw.kwarg("block"), loc)) if raw.kwarg("block") is not None else ()
        smem = interp.ev(raw.kwarg("smem"), loc) if raw.kwarg("smem") is not None else None
        args = tuple(interp.ev(a, loc) for a in raw.args)
        targs = tuple(interp.resolve_typeref(t) if isinstance(t, TypeRef) else interp.ev(t, loc) for t in raw.targs)
        if not targs and isinstance(raw.kwarg("kernel"), Name):
            init = _declared_init(interp, raw.kwarg("kernel").id)
            targs = _kernel_targs(interp, init, loc) if init is not None else ()
        _add_choices(interp, kernel_choices(interp, kernel), LaunchFact(loc, grid, block, smem, args, {}, (), targs))
        return Num(0)
    if fn == "launch[]":
        target = raw.kwarg("kernel")
        aliases = getattr(interp.p, "aliases", {})
        choices = [(aliases[target.id], ())] if isinstance(target, Name) and target.id in aliases else kernel_choices(interp, interp.ev(target, loc))
        grid_value = interp.ev(raw.kwarg("grid"), loc)
        if isinstance(grid_value, Lambda):
            grid_value = interp.inline_lambda(grid_value, [Sym("meta")], loc)
        elif isinstance(grid_value, TypeRef) and grid_value.name.startswith("fn:"):
            f = interp.p.function(grid_value.name[3:], 1)
            grid_value = interp.inline(f, [Sym("meta")], loc) if f is not None else grid_value
        args = tuple(interp.ev(a, loc) for a in raw.args)
        kwargs = {k: interp.ev(v, loc) for k, v in raw.kw if k not in ("kernel", "grid")}
        _add_choices(interp, choices, LaunchFact(loc, dims(grid_value), (), None, args, kwargs))
        return Num(0)
    args = [interp.ev(a, loc) for a in raw.args]
    if fn in ("cudaLaunchKernel", "cudaLaunchCooperativeKernel") and len(args) >= 3:
        name = kernel_name(interp, _pointee(args[0]))
        _add(interp, name, LaunchFact(loc, dims(args[1]), dims(args[2]), args[4] if len(args) > 4 else None, (), {}, (fn,),
                                      _kernel_targs(interp, raw.args[0], loc)))
    elif fn in ("cudaLaunchKernelEx", "cudaLaunchKernelExC", "cuLaunchKernelEx") and len(args) >= 2:
        name = kernel_name(interp, _pointee(args[1]))
        config = raw.args[0].args[0] if isinstance(raw.args[0], Op) and raw.args[0].op == "addr" else raw.args[0]
        grid = interp.ev(Attr(config, "gridDim"), loc)
        block = interp.ev(Attr(config, "blockDim"), loc)
        _add(interp, name, LaunchFact(loc, dims(grid), dims(block), interp.ev(Attr(config, "dynamicSmemBytes"), loc), tuple(args[2:]), {}, (fn,),
                                      _kernel_targs(interp, raw.args[1], loc)))
    elif fn == "cutlass.launch_kernel_on_cluster" and len(args) >= 2:
        # CUTLASS's cluster launcher: ClusterLaunchParams{grid, block, cluster, smem}, the kernel pointer, its arguments
        name = kernel_name(interp, _pointee(args[1]))
        params = args[0]
        if isinstance(params, Tup) and len(params.items) >= 2:
            grid, block = dims(params.items[0]), dims(params.items[1])
            smem = params.items[3] if len(params.items) > 3 else None
        else:
            grid, block, smem = dims(interp.ev(Attr(raw.args[0], "grid_dims"), loc)), dims(interp.ev(Attr(raw.args[0], "block_dims"), loc)), None
        _add(interp, name, LaunchFact(loc, grid, block, smem, tuple(args[2:]), {}, (fn, "cluster")))
    elif fn == "cuLaunchKernel" and len(args) >= 7:
        name = kernel_name(interp, _pointee(args[0]))
        _add(interp, name, LaunchFact(loc, tuple(args[1:4]), tuple(args[4:7]), args[7] if len(args) > 7 else None, (), {}, (fn,)))
    return Num(0)


def _declared_init(interp, name: str) -> E | None:
    """The initialiser of the local ``name`` in the function being run: a kernel launched through
    a pointer it holds (``auto kernel = &transform_kernel<Ktraits>; kernel<<<grid, block>>>(p)``)
    takes its template arguments from there."""
    frame = interp.frames[-1] if interp.frames else None
    todo = list(frame.func.body) if frame is not None and frame.func is not None else []
    while todo:
        st = todo.pop()
        if isinstance(st, Decl) and st.name == name and st.init is not None:
            return st.init
        if isinstance(st, If):
            todo += st.then + st.orelse
        elif isinstance(st, Loop):
            todo += st.init + st.body
    return None


def _kernel_targs(interp, lowered: E, loc: Loc) -> tuple[E, ...]:
    """Template arguments of a kernel passed by pointer (``cudaLaunchKernelEx(cfg, k<C, 4>, ...)``)."""
    node = _strip(lowered)
    while isinstance(node, Cast):
        node = _strip(node.arg)
    if not isinstance(node, Name):
        return ()
    return tuple(interp.resolve_typeref(t) if isinstance(t, TypeRef) else interp.ev(t, loc) for t in node.targs)


def _pointee(e: E) -> E:
    """The function a kernel-pointer value names, through casts and address-of."""
    for _ in range(4):
        e = _strip(e)
        if isinstance(e, Cast):
            e = e.arg
        elif isinstance(e, Ptr) or not isinstance(e, (Op, Call)):
            break
    return e


def _strip(e: E) -> E:
    while isinstance(e, Call) and e.args and short(e.fn) in ("void", "ctor:void*", "ctor:const void*"):
        e = e.args[0]
    if isinstance(e, Op) and e.op == "addr":
        return e.args[0]
    return e


def _add_choices(interp, choices: list[tuple[str, tuple[E, ...]]], fact: LaunchFact) -> None:
    """One launch record per kernel the launched value may name, each under its own conditions."""
    for name, cond in choices:
        _add(interp, name, replace(fact, kwargs=dict(fact.kwargs)) if len(choices) > 1 else fact, cond)


def _add(interp, name: str | None, fact: LaunchFact, cond: tuple[E, ...] = ()) -> None:
    if name:
        fact.guards = tuple(interp.guards) + cond
        interp.host_launches.append((name, fact))
        func = interp.frame.func
        if func is not None and hasattr(interp.p, "node_of"):
            interp.launching_functions.add(id(interp.p.node_of(func)))
