"""The analyzer's fact layer: one lowered IR for CUDA C++ and Triton, an abstract interpreter
that resolves what every value *is* (launch geometry, parameters by position, memory objects,
loads), and the kernel facts detectors read (accesses, loops, calls, launches). See
docs/analyzer.md."""
