"""funcgraph.profiler, JAX's profiling API over the runtime's profiler: a trace written
for TensorBoard and Perfetto holds the annotations made while it ran."""
import gzip
import json
import os

import numpy as np
import pytest

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import profiler


def _perfetto_events(log_dir):
    (folder,) = [root for root, _, files in os.walk(log_dir)
                 if any(f.endswith(".xplane.pb") for f in files)]
    with gzip.open(os.path.join(folder, "perfetto_trace.json.gz")) as f:
        return json.load(f)["traceEvents"]


def test_a_trace_holds_the_annotations_made_while_it_ran(tmp_path):
    f = fg.jit(lambda x: fnp.tanh(x @ x.T))
    x = np.ones((32, 32), np.float32)
    f(x).block_until_ready()

    @profiler.annotate_function
    def annotated(v):
        return f(v).block_until_ready()

    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with profiler.TraceAnnotation("my_label", step=3):
            f(x).block_until_ready()
        with profiler.StepTraceAnnotation("train", step_num=1):
            annotated(x)
    names = {e.get("name") for e in _perfetto_events(tmp_path)}
    assert {"my_label", "train", annotated.__wrapped__.__qualname__} <= names
    with profiler.TraceAnnotation("no trace running"):  # a no-op outside a trace
        pass


def test_one_trace_at_a_time(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(tmp_path)
    finally:
        profiler.stop_trace()
    assert any(f.endswith(".xplane.pb") for _, _, files in os.walk(tmp_path) for f in files)


def test_device_memory_profile_is_gzipped_pprof(tmp_path):
    keep = fg.device_put(np.ones(1000, np.float32))
    data = profiler.device_memory_profile()
    assert gzip.decompress(data)  # a pprof protocol buffer
    profiler.save_device_memory_profile(tmp_path / "memory.prof")
    assert (tmp_path / "memory.prof").read_bytes()[:2] == b"\x1f\x8b"
    del keep


def test_jax_s_module_path_works():
    assert fg.profiler.TraceAnnotation is profiler.TraceAnnotation
