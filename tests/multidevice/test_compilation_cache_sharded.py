"""The persistent compilation cache with programs laid out over 8 devices: the entry
(keyed by the device assignment among the rest) is loaded with its layout."""
import logging
import os

import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph.experimental.compilation_cache import compilation_cache as cc
from funcgraph.sharding import NamedSharding, PartitionSpec as P


def test_sharded_program_is_saved_and_loaded(meshes, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="funcgraph.compilation_cache")
    saved = (fg.config.jax_compilation_cache_dir,
             fg.config.jax_persistent_cache_min_compile_time_secs)
    cc.reset_cache()
    fg.clear_caches()
    cc.set_cache_dir(tmp_path)
    fg.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        mesh, _ = meshes((4, 2), ("x", "y"))
        x = np.arange(32, dtype=np.float32).reshape(8, 4)

        def run():
            f = fg.jit(lambda a: fnp.tanh(a) @ a.T,
                       in_shardings=NamedSharding(mesh, P("x")),
                       out_shardings=NamedSharding(mesh, P("x", "y")))
            return f(x)
        first = run()
        entries = [n for n in os.listdir(tmp_path) if n.startswith("funcgraph-")]
        assert len(entries) == 1
        fg.clear_caches()
        again = run()
        assert any("cache hit" in r.getMessage() for r in caplog.records)
        np.testing.assert_array_equal(np.asarray(again), np.asarray(first))
        assert repr(again.sharding) == repr(first.sharding)
        assert [s.index for s in again.addressable_shards] == \
            [s.index for s in first.addressable_shards]
    finally:
        fg.config.update("jax_compilation_cache_dir", saved[0])
        fg.config.update("jax_persistent_cache_min_compile_time_secs", saved[1])
        cc.reset_cache()
        fg.clear_caches()
