"""The sandbox: the only process that imports a submission. It receives inputs, calls the
submission, hands the outputs back, and runs the native timed loop. Nothing here decides a verdict.

Started by the judge (:mod:`.session`) as ``python -m d2k_profile.sandbox CTL_IN CTL_OUT CMD RES``
with four pipe descriptors: JSON control messages in and out (:mod:`.protocol`), fixed-size
binary commands in and signed result frames out (:mod:`.frames`, read and written only by the
native loop). Order of life:

1. read :class:`~.protocol.Setup`, confine itself (:mod:`.confine`: Landlock, seccomp, no
   capabilities), import torch and the harness modules, answer :class:`~.protocol.Confined`;
2. on :class:`~.protocol.Load`: initialise the device and the native loop (which reads its MAC key
   from the command pipe), load the task's reference and expert, answer
   :class:`~.protocol.Loaded`; until the judge says :class:`~.protocol.Import`, this is a clean
   process in which the judge times the reference and the expert; then snapshot what a patch
   could change and import the submission: :class:`~.protocol.Imported` or
   :class:`~.protocol.ImportFailed`;
3. answer requests: bind shared buffers, serve native commands (every call of every
   implementation), record the ops of one call, capture CUDA graphs, mark NVTX ranges, report
   patched names.
"""

from __future__ import annotations

import os
import sys


class Sandbox:
    """State of the untrusted process between requests."""

    def __init__(self, ctl_in: int, ctl_out: int, cmd_fd: int, res_fd: int):
        from .pipes import LineReader

        self.reader, self.ctl_out, self.cmd_fd, self.res_fd = LineReader(ctl_in), ctl_out, cmd_fd, res_fd
        self.impls: list = []
        self.names: list[str] = []
        self.sub_index = -1
        self.input_sets: list[tuple] = []
        self.escrows: list[tuple] = []
        self.expect: tuple = ()
        self.keep: list = []  # mapped buffers stay alive as long as the process
        self.opened: dict[str, object] = {}  # buffers mapped so far, by handle: a set bound again is not mapped twice
        self.own_extensions = os.environ.get("TORCH_EXTENSIONS_DIR")  # set by the judge (session.sandbox_env)

    # --- messages -----------------------------------------------------------------------------
    def receive(self, allowed: tuple):
        from . import protocol

        msg, _ = protocol.decode(self.reader.read(), allowed)
        return msg

    def send(self, msg) -> None:
        from . import protocol
        from .pipes import write_all

        write_all(self.ctl_out, protocol.encode(msg))

    # --- life -----------------------------------------------------------------------------------
    def confine(self):
        from . import confine, protocol

        self.setup = self.receive((protocol.Setup,))
        policy = self.setup.policy
        os.makedirs(self.setup.build_dir, exist_ok=True)
        if policy.enabled:
            report = confine.apply(self.setup.build_dir, policy.write_dirs, policy.layers).as_dict()
        else:
            report = {"enforced": {"sandbox": "off (--no-sandbox)"}, "self_test": {}}
        self._import_harness()
        self.send(protocol.Confined(report))

    def _import_harness(self) -> None:
        """Everything the harness needs, imported before the submission can touch it."""
        import torch  # noqa: F401
        import torch.utils._python_dispatch  # noqa: F401

        from . import anticheat, loader, native, protocol, shared  # noqa: F401

        if self.setup.device == "cpu":
            from . import interpreter

            interpreter.apply()
        try:
            import triton  # noqa: F401  (now, so that its import cannot look like a patch later)
        except ImportError:
            pass

    def load(self) -> None:
        import traceback

        import torch

        from . import anticheat, loader, native, protocol

        self.receive((protocol.Load,))
        cuda = self.setup.device == "cuda"
        self.native = native.load(self.setup.native_path)
        stream = torch.cuda.current_stream().cuda_stream if cuda else 0
        device = torch.cuda.current_device() if cuda else 0
        base = torch._C.TensorBase
        descriptors = (torch.Tensor, base.data_ptr, base.nbytes, base.dtype, base.shape, base.is_contiguous, base.is_cuda, base.contiguous,
                       anticheat.classify_exception, lambda e: "".join(traceback.format_exception(e)))
        self.native.setup(self.cmd_fd, self.res_fd, descriptors, cuda, stream, device, self.setup.flush_mode)
        if cuda:
            self.native.cupti_check(native.cupti_library())  # where to load CUPTI from when tracing starts
        self._use_trusted_extensions()
        ref_mod = loader.load_module(self.setup.reference_path, "d2k_reference")
        init = tuple(ref_mod.get_init_inputs()) if callable(getattr(ref_mod, "get_init_inputs", None)) else ()
        self.impls, self.names = [loader.reference_entry(ref_mod)], ["reference"]
        strict = [("reference", ref_mod)]
        expert_error = ""
        if self.setup.expert_path:
            try:
                exp_mod = loader.load_module(self.setup.expert_path, "d2k_expert")
                self.impls.append(loader.entry_point(exp_mod, init, self.setup.device))
                self.names.append("expert")
                strict.append(("expert", exp_mod))
            except Exception as exc:  # noqa: BLE001  (timing goes on without the expert)
                expert_error = f"expert failed to load: {type(exc).__name__}: {exc}"
        self.init, self.strict = init, strict
        self.send(protocol.Loaded(list(self.names), expert_error))

    def _use_trusted_extensions(self) -> None:
        """Until the import, the torch extensions of the trusted code (the expert's ``load_inline``,
        usually compiled at its first call, in the clean timing) are built in, and loaded from, the
        expert job's own build folder: compiled once per run, not once per submission (a CUDA
        expert takes tens of seconds to build). Only where this sandbox may write there (torch
        locks the folder while it checks the build); under Landlock it may not, and it builds its
        own copy as before."""
        trusted = self.setup.trusted_extensions
        if not trusted:
            return
        probe = os.path.join(trusted, f".d2k-probe-{os.getpid()}")
        try:
            os.makedirs(trusted, exist_ok=True)
            os.close(os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
            os.unlink(probe)
        except OSError:
            return
        os.environ["TORCH_EXTENSIONS_DIR"] = trusted

    def _use_own_extensions(self) -> None:
        """From the import on, every torch extension is built in this sandbox's own folder."""
        if self.own_extensions is None:
            os.environ.pop("TORCH_EXTENSIONS_DIR", None)
        else:
            os.environ["TORCH_EXTENSIONS_DIR"] = self.own_extensions

    def import_submission(self) -> None:
        """The submission, imported after the snapshot of everything a patch could change."""
        import traceback

        from . import anticheat, loader, protocol

        init = self.init
        self._use_own_extensions()
        harness = [(name, sys.modules[name]) for name in sorted(sys.modules) if name.startswith("d2k_profile.")]
        self.watch = (harness, self.strict)
        self.before = anticheat.snapshot(*self.watch)
        try:
            if self.setup.role == "reference":  # noise floor: a second, independent import of the reference
                sub = loader.reference_entry(loader.load_module(self.setup.path, "d2k_reference_self"))
            else:
                sub = loader.entry_point(loader.load_module(self.setup.path, "d2k_submission"), init, self.setup.device)
        except BaseException as exc:  # noqa: BLE001  (whatever the submission raises is its result)
            self.send(protocol.ImportFailed(anticheat.import_failure_kind(exc), "".join(traceback.format_exception(exc))[-4000:]))
            raise SystemExit(0) from None
        self.impls.append(sub)
        self.names.append("submission")
        self.sub_index = len(self.impls) - 1
        if self.input_sets:
            self._bind_native()
        self.send(protocol.Imported(list(self.names)))

    # --- requests -----------------------------------------------------------------------------------
    def bind(self, msg) -> None:
        from . import shared

        def attach(spec):
            buf = self.opened.get(spec.handle)
            if buf is None or buf.spec != spec:
                buf = self.opened[spec.handle] = shared.attach(spec, self.setup.device, self.native)
                self.keep.append(buf)
            return buf

        self.input_sets = [tuple(s.value if s.dtype == "value" else attach(s).tensor for s in specs) for specs in msg.input_sets]
        escs = [tuple(attach(s) for s in specs) for specs in msg.escrow_sets]
        self.escrows = [tuple((b.addr, b.spec.nbytes) for b in s) for s in escs]
        self.expect = tuple((shared.dtype_named(b.spec.dtype), tuple(b.spec.shape), b.spec.nbytes) for b in escs[0]) if escs else ()
        self._bind_native()

    def _bind_native(self) -> None:
        self.native.bind(tuple(self.impls), tuple(self.input_sets), tuple(self.escrows), self.expect)

    def record_ops(self, input_set: int):
        from . import anticheat, protocol

        try:
            with anticheat.OpRecorder() as rec:
                status, _flags, _ev, _host, text = self.native.call_local(self.sub_index, input_set, 0, 0)
            return protocol.Recorded(sorted(rec.names), "" if status == 0 else text[-500:])
        except Exception as exc:  # noqa: BLE001  (a confession we could not take; the judge notes it)
            return protocol.Recorded([], f"{type(exc).__name__}: {exc}")

    def capture(self, input_set: int):
        """Replace every implementation by the replay of a CUDA graph captured on ``input_set``."""
        import torch

        from . import protocol

        inputs = self.input_sets[input_set]
        replays = []
        try:
            for call in self.impls:
                cur = torch.cuda.current_stream()
                side = torch.cuda.Stream()
                side.wait_stream(cur)
                with torch.cuda.stream(side):
                    for _ in range(2):
                        call(inputs)
                cur.wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    out = call(inputs)
                replays.append((graph, out))
        except Exception as exc:  # noqa: BLE001  (timed eagerly instead; the judge notes why)
            torch.cuda.synchronize()
            return protocol.Captured(f"{type(exc).__name__}: {str(exc)[:300]}")
        self.impls = [(lambda g, o: (lambda _inputs: (g.replay(), o)[1]))(g, o) for g, o in replays]
        self._bind_native()
        return protocol.Captured("")

    def mark(self, prefix: str, input_set: int):
        """One untimed call per implementation inside the NVTX range ``<prefix>/<name>``, for an
        ``ncu --nvtx-include`` pass (kept out of the timed loop: a range costs ~10 us)."""
        import torch

        from . import protocol

        ranges = {}
        for i, name in enumerate(self.names):
            label = f"{prefix}/{name}"
            torch.cuda.nvtx.range_push(label)
            self.native.call_local(i, input_set, 0, 0)
            torch.cuda.nvtx.range_pop()
            ranges[name] = label
        return protocol.Marked(ranges)

    def run(self) -> int:
        from . import anticheat, protocol
        from .pipes import PipeClosed

        self.confine()
        self.load()
        while True:
            try:
                msg = self.receive(tuple(m for m in protocol.TO_SANDBOX if m not in (protocol.Setup, protocol.Load)))
            except PipeClosed:
                return 0
            if isinstance(msg, protocol.Import):
                self.import_submission()
            elif isinstance(msg, protocol.Bind):
                self.bind(msg)
                self.send(protocol.Bound())
            elif isinstance(msg, protocol.Serve):
                self.send(protocol.Serving())
                if not self.native.serve():
                    return 0
            elif isinstance(msg, protocol.RecordOps):
                self.send(self.record_ops(msg.input_set))
            elif isinstance(msg, protocol.Capture):
                self.send(self.capture(msg.input_set))
            elif isinstance(msg, protocol.Mark):
                self.send(self.mark(msg.prefix, msg.input_set))
            elif isinstance(msg, protocol.CheckPatches):
                self.send(protocol.Patches(anticheat.patched(self.before, *self.watch)))
            elif isinstance(msg, protocol.Shutdown):
                return 0


def _die_with_parent() -> None:
    """SIGKILL this process when the judge dies (PR_SET_PDEATHSIG), so no sandbox outlives it."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    args = [int(a) for a in (argv if argv is not None else sys.argv[1:])]
    ppid = os.getppid()
    _die_with_parent()
    if os.getppid() != ppid:  # the judge died before the request took effect
        return 1
    return Sandbox(*args).run()


if __name__ == "__main__":
    sys.exit(main())
