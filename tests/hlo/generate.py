#!/usr/bin/env python3
"""Generate the HLO fixtures of tests/hlo/ from real JAX programs.

The committed `.hlo` files are what this script printed; the tests read them
and never need JAX. To regenerate (CPU only, no accelerator needed):

    python3 -m venv target/jaxvenv
    target/jaxvenv/bin/pip install "jax[cpu]==0.10.2"
    target/jaxvenv/bin/python tests/hlo/generate.py

Each module runs in its own process, because the number of host devices
(`XLA_FLAGS=--xla_force_host_platform_device_count=N`) is fixed when JAX
starts. A module is written as `NAME.lowered.hlo` (`Lowered.as_text(
dialect="hlo")`, the program before XLA's passes) and/or `NAME.compiled.hlo`
(`Compiled.as_text()`, after SPMD partitioning, combiners and scheduling:
async start/done pairs, tuple-shaped combined collectives, iota and mesh-axes
replica groups). The lines holding the source file's path (FileNames) are
rewritten to `generate.py` so the output does not depend on where the
repository is checked out.
"""

import os
import subprocess
import sys

JAX_VERSION = "0.10.2"
HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (device count, which texts to keep)
MODULES = {
    "dp_train_step_8": (8, ("compiled",)),
    "tp_train_step_16": (16, ("lowered", "compiled")),
    "fsdp_train_step_32": (32, ("compiled",)),
    "fsdp_gather_scatter_64": (64, ("lowered", "compiled")),
    "gspmd_matmul_8": (8, ("lowered", "compiled")),
    "gspmd_matmul_2d_32": (32, ("compiled",)),
    "moe_all_to_all_16": (16, ("lowered", "compiled")),
    "ring_ppermute_8": (8, ("lowered", "compiled")),
    "max_min_reductions_16": (16, ("lowered", "compiled")),
    "mixed_dtypes_8": (8, ("lowered", "compiled")),
    "group_shapes_64": (64, ("lowered", "compiled")),
    "auto_sharded_grad_16": (16, ("compiled",)),
    "reshard_2d_32": (32, ("compiled",)),
    "partly_manual_8": (8, ("lowered", "compiled")),
    "partly_manual_gspmd_8": (8, ("lowered",)),
    "partly_manual_callback_8": (8, ("lowered",)),
    "nested_manual_8": (8, ("lowered",)),
    "nested_manual_gspmd_8": (8, ("lowered",)),
    "manual_then_partly_8": (8, ("lowered",)),
    "manual_size_one_axis_8": (8, ("lowered",)),
}


def build(name):
    """Returns the jitted function and its example arguments for `name`."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    def mesh(*axes):
        shape = tuple(size for _, size in axes)
        devices = np.array(jax.devices()).reshape(shape)
        return Mesh(devices, tuple(n for n, _ in axes))

    def sharded(m, shape, dtype, spec):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(m, spec))

    def mlp_loss(params, x, y):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"]
        return jnp.mean((out - y) ** 2)

    def sgd(params, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        return loss, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    if name == "dp_train_step_8":
        # Data parallel: batch sharded over 8 devices, parameters replicated;
        # XLA all-reduces the gradients (combined into one tuple all-reduce).
        m = mesh(("data", 8))
        rep = P()
        params = {
            "w1": sharded(m, (64, 128), jnp.float32, rep),
            "b1": sharded(m, (128,), jnp.float32, rep),
            "w2": sharded(m, (128, 16), jnp.float32, rep),
        }
        x = sharded(m, (256, 64), jnp.float32, P("data", None))
        y = sharded(m, (256, 16), jnp.float32, P("data", None))
        return jax.jit(sgd), (params, x, y)

    if name == "tp_train_step_16":
        # Tensor (Megatron) parallel inside 4-device groups, data parallel
        # across 4 groups, written with shard_map so the lowered text already
        # holds the collectives.
        m = mesh(("data", 4), ("model", 4))

        def step(w1, w2, x, y):
            def loss(w1, w2):
                h = jnp.tanh(x @ w1)
                out = jax.lax.psum(h @ w2, "model")
                return jnp.mean((out - y) ** 2)

            l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
            g1 = jax.lax.pmean(g1, "data")
            g2 = jax.lax.pmean(g2, "data")
            return jax.lax.pmean(l, "data"), w1 - 0.01 * g1, w2 - 0.01 * g2

        f = jax.shard_map(
            step,
            mesh=m,
            in_specs=(P(None, "model"), P("model", None), P("data", None), P("data", None)),
            out_specs=(P(), P(None, "model"), P("model", None)),
            check_vma=False,
        )
        args = (
            jnp.zeros((64, 256), jnp.bfloat16),
            jnp.zeros((256, 64), jnp.bfloat16),
            jnp.zeros((32, 64), jnp.bfloat16),
            jnp.zeros((32, 64), jnp.bfloat16),
        )
        return jax.jit(f), args

    if name == "fsdp_train_step_32":
        # FSDP by sharding annotations: parameters sharded over all 32
        # devices along their first axis, batch sharded too; XLA gathers the
        # parameters and reduce-scatters the gradients.
        m = mesh(("fsdp", 32))
        params = {
            "w1": sharded(m, (64, 128), jnp.float32, P("fsdp", None)),
            "b1": sharded(m, (128,), jnp.float32, P("fsdp")),
            "w2": sharded(m, (128, 32), jnp.float32, P("fsdp", None)),
        }
        x = sharded(m, (256, 64), jnp.float32, P("fsdp", None))
        y = sharded(m, (256, 32), jnp.float32, P("fsdp", None))
        out = (None, {k: NamedSharding(m, v.sharding.spec) for k, v in params.items()})
        return jax.jit(sgd, out_shardings=(NamedSharding(m, P()), out[1])), (params, x, y)

    if name == "fsdp_gather_scatter_64":
        # Explicit FSDP collectives over 64 devices: all-gather the weight
        # shard, use it, reduce-scatter the gradient.
        m = mesh(("fsdp", 64))

        def step(w, x):
            full = jax.lax.all_gather(w, "fsdp", tiled=True)
            g = x.T @ jnp.tanh(x @ full)
            return jax.lax.psum_scatter(g, "fsdp", scatter_dimension=0, tiled=True)

        f = jax.shard_map(step, mesh=m, in_specs=(P("fsdp", None), P("fsdp", None)),
                          out_specs=P("fsdp", None), check_vma=False)
        return jax.jit(f), (jnp.zeros((128, 64), jnp.bfloat16), jnp.zeros((256, 128), jnp.bfloat16))

    if name == "gspmd_matmul_8":
        # An auto-sharded matmul: XLA decides the collectives (the lowered
        # text holds sharding annotations only; the compiled one holds them).
        m = mesh(("x", 2), ("y", 4))
        a = sharded(m, (64, 128), jnp.float32, P("x", "y"))
        b = sharded(m, (128, 32), jnp.float32, P("y", None))
        f = jax.jit(lambda a, b: a @ b, out_shardings=NamedSharding(m, P(None, None)))
        return f, (a, b)

    if name == "gspmd_matmul_2d_32":
        m = mesh(("x", 4), ("y", 8))
        a = sharded(m, (128, 256), jnp.bfloat16, P("x", "y"))
        b = sharded(m, (256, 64), jnp.bfloat16, P("y", "x"))
        f = jax.jit(lambda a, b: jnp.tanh(a @ b), out_shardings=NamedSharding(m, P("x", None)))
        return f, (a, b)

    if name == "moe_all_to_all_16":
        # Mixture of experts: tokens dispatched to experts with an all-to-all
        # over 8 expert devices, in 2 data-parallel groups, and combined back.
        m = mesh(("data", 2), ("expert", 8))

        def moe(tokens, w):
            dispatched = jax.lax.all_to_all(tokens, "expert", 0, 0, tiled=True)
            y = jnp.tanh(dispatched @ w)
            return jax.lax.all_to_all(y, "expert", 0, 0, tiled=True)

        f = jax.shard_map(moe, mesh=m, in_specs=(P(("data", "expert"), None), P("expert", None)),
                          out_specs=P(("data", "expert"), None), check_vma=False)
        return jax.jit(f), (jnp.zeros((1024, 32), jnp.bfloat16), jnp.zeros((256, 32), jnp.bfloat16))

    if name == "ring_ppermute_8":
        # Ring attention's KV rotation: each device passes its block to the
        # next one, around a ring of 8, twice (K then V).
        m = mesh(("ring", 8))
        perm = [(i, (i + 1) % 8) for i in range(8)]

        def rotate(k, v):
            return jax.lax.ppermute(k, "ring", perm), jax.lax.ppermute(v, "ring", perm)

        f = jax.shard_map(rotate, mesh=m, in_specs=(P("ring"), P("ring")), out_specs=(P("ring"), P("ring")),
                          check_vma=False)
        return jax.jit(f), (jnp.zeros((8 * 512,), jnp.bfloat16), jnp.zeros((8 * 512,), jnp.bfloat16))

    if name == "max_min_reductions_16":
        # Max and min reductions (gradient clipping statistics, integer
        # bounds) over sub-groups of a 2 x 8 mesh.
        m = mesh(("x", 2), ("y", 8))

        def stats(a, b):
            return (jax.lax.pmax(a, "y"), jax.lax.pmin(a, "x"), jax.lax.pmax(b, ("x", "y")),
                    jax.lax.pmin(b, "y"))

        f = jax.shard_map(stats, mesh=m, in_specs=(P("x", "y"), P("x", "y")), out_specs=(P("x", "y"),) * 4,
                          check_vma=False)
        return jax.jit(f), (jnp.zeros((32, 64), jnp.float32), jnp.zeros((32, 64), jnp.int32))

    if name == "mixed_dtypes_8":
        # Several dtypes reduced in one step: XLA's combiner puts same-dtype
        # operands into one tuple all-reduce.
        m = mesh(("data", 8))

        def step(a, b, c, d):
            return jax.lax.psum((a, b, c, d), "data")

        f = jax.shard_map(step, mesh=m, in_specs=(P("data"),) * 4, out_specs=(P(),) * 4, check_vma=False)
        args = (jnp.zeros((8 * 64,), jnp.float32), jnp.zeros((8 * 32,), jnp.float32),
                jnp.zeros((8 * 128,), jnp.bfloat16), jnp.zeros((8 * 16,), jnp.int32))
        return jax.jit(f), args

    if name == "group_shapes_64":
        # One collective per group shape of a 4 x 4 x 4 mesh: groups along
        # each axis, along pairs of axes, and over all 64 devices.
        m = mesh(("a", 4), ("b", 4), ("c", 4))

        def step(x):
            return (jax.lax.psum(x, "a"), jax.lax.psum(x, "b"), jax.lax.psum(x, "c"),
                    jax.lax.psum(x, ("a", "c")), jax.lax.psum(x, ("b", "c")),
                    jax.lax.all_gather(x, ("a", "b"), tiled=True), jax.lax.psum(x, ("a", "b", "c")))

        spec = P(("a", "b", "c"))
        f = jax.shard_map(step, mesh=m, in_specs=(spec,),
                          out_specs=(spec, spec, spec, spec, spec, P(("c",)), spec), check_vma=False)
        return jax.jit(f), (jnp.zeros((64 * 32,), jnp.float32),)

    if name == "auto_sharded_grad_16":
        # A gradient jitted with shardings alone (no shard_map): XLA's SPMD
        # partitioner picks the collectives, and prints their groups as
        # mesh axes over devices in an iota order (`device_ids=([4,4]T(1,0))`).
        m = mesh(("d", 4), ("f", 4))
        w = sharded(m, (64, 64), jnp.bfloat16, P("f", None))
        x = sharded(m, (32, 64), jnp.bfloat16, P(("d", "f"), None))

        def loss(w, x):
            return jnp.sum(jnp.tanh(x @ w) ** 2)

        return jax.jit(jax.grad(loss), out_shardings=NamedSharding(m, P("f", None))), (w, x)

    if name == "reshard_2d_32":
        # A reshard of a 4 x 8 mesh from P("x", "y") to P("y", "x"): the
        # partitioner's all-to-alls group a sub-axis of a mesh over
        # devices in an iota order (`device_ids=([4,4,2]T(0,2,1))
        # {'axis_0':(4)2}`).
        m = mesh(("x", 4), ("y", 8))
        x = sharded(m, (256, 512), jnp.bfloat16, P("x", "y"))
        return jax.jit(jnp.sin, out_shardings=NamedSharding(m, P("y", "x"))), (x,)

    if name == "partly_manual_8":
        # A shard_map manual over one axis of a 2 x 4 mesh (`axis_names`):
        # in the lowered text, shapes inside it are per device along `x`
        # only (`f32[4,16]`, each device holding `f32[4,4]`) and its
        # reductions' roots are wrapped in `Sharding` calls; ccc refuses
        # that text and imports the compiled one, whose shapes are per
        # device.
        m = mesh(("x", 2), ("y", 4))
        x = sharded(m, (8, 16), jnp.float32, P("x", "y"))

        def inner(v):
            gathered = jax.lax.all_gather(v, "x", tiled=True)
            return jax.lax.psum(v, "x"), gathered, jax.lax.ppermute(v, "x", [(0, 1), (1, 0)])

        f = jax.shard_map(inner, mesh=m, in_specs=P("x"), out_specs=(P("x"), P(), P("x")), axis_names={"x"},
                          check_vma=False)
        return jax.jit(f), (x,)

    if name == "partly_manual_gspmd_8":
        # The same shard_map's permute lowered with Shardy off (GSPMD):
        # the manual axis is a subgroup of `SPMDFullToShardShape`'s
        # sharding (`last_tile_dims={manual, replicated}`), the permute
        # `f32[4,16]` where each device moves `f32[4,4]`.
        jax.config.update("jax_use_shardy_partitioner", False)
        m = mesh(("x", 2), ("y", 4))
        x = sharded(m, (8, 16), jnp.float32, P("x", "y"))

        def inner(v):
            return (jax.lax.ppermute(v, "x", [(0, 1), (1, 0)]),)

        f = jax.shard_map(inner, mesh=m, in_specs=P("x"), out_specs=(P("x"),), axis_names={"x"}, check_vma=False)
        return jax.jit(f), (x,)

    if name == "partly_manual_callback_8":
        # The permute of partly_manual_gspmd_8 beside a `jax.debug.callback`,
        # which adds a maximal mesh (no axes) to the header's meshes.
        m = mesh(("x", 2), ("y", 4))
        x = sharded(m, (8, 16), jnp.float32, P("x", "y"))

        def inner(v):
            jax.debug.callback(lambda z: None, v)
            return jax.lax.ppermute(v, "x", [(0, 1), (1, 0)])

        f = jax.shard_map(inner, mesh=m, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}, check_vma=False)
        return jax.jit(f), (x,)

    if name in ("nested_manual_8", "nested_manual_gspmd_8"):
        # A shard_map manual over `x` holding one manual over `y`: inside
        # the inner one every axis is manual, and its psum's shape is one
        # device's (`f32[4,4]`).
        if name == "nested_manual_gspmd_8":
            jax.config.update("jax_use_shardy_partitioner", False)
        m = mesh(("x", 2), ("y", 4))
        x = sharded(m, (8, 16), jnp.float32, P("x", "y"))

        def outer(v):
            inner = jax.shard_map(
                lambda w: jax.lax.psum(w, "y"), in_specs=P(None, "y"), out_specs=P(None, "y"), axis_names={"y"},
                check_vma=False,
            )
            return inner(v)

        f = jax.shard_map(outer, mesh=m, in_specs=P("x"), out_specs=P("x"), axis_names={"x"}, check_vma=False)
        return jax.jit(f), (x,)

    if name == "manual_then_partly_8":
        # A fully manual psum, then a shard_map manual over `x` alone that
        # holds no collective.
        m = mesh(("x", 2), ("y", 4))
        x = sharded(m, (8, 16), jnp.float32, P("x", "y"))

        def step(v):
            v = jax.shard_map(lambda w: jax.lax.psum(w, ("x", "y")), mesh=m, in_specs=P("x", "y"),
                              out_specs=P("x", "y"), check_vma=False)(v)
            return jax.shard_map(lambda w: w * 2, mesh=m, in_specs=P("x"), out_specs=P("x"), axis_names={"x"},
                                 check_vma=False)(v)

        return jax.jit(step), (x,)

    if name == "manual_size_one_axis_8":
        # Manual over `x` of an 8 x 1 mesh: the axis left out holds one
        # device, so shapes are one device's; the psum's reduction root is
        # still wrapped in a `Sharding` annotation.
        m = mesh(("x", 8), ("y", 1))
        x = sharded(m, (8, 16), jnp.float32, P("x"))
        f = jax.shard_map(lambda v: jax.lax.psum(v, "x"), mesh=m, in_specs=P("x"), out_specs=P("x"),
                          axis_names={"x"}, check_vma=False)
        return jax.jit(f), (x,)

    raise SystemExit(f"unknown module {name}")


def one(name):
    """Runs in a child process with the device count set."""
    import jax

    if jax.__version__ != JAX_VERSION:
        raise SystemExit(f"expected jax {JAX_VERSION}, found {jax.__version__}")
    _, texts = MODULES[name]
    f, args = build(name)
    lowered = f.lower(*args)
    out = {"lowered": lambda: lowered.as_text(dialect="hlo"), "compiled": lambda: lowered.compile().as_text()}
    for kind in texts:
        text = out[kind]().replace(os.path.abspath(__file__), "generate.py")
        with open(os.path.join(HERE, f"{name}.{kind}.hlo"), "w") as fh:
            fh.write(text)
        print(f"wrote {name}.{kind}.hlo")


def main():
    if len(sys.argv) == 2:
        one(sys.argv[1])
        return
    for name, (devices, _) in MODULES.items():
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, os.path.abspath(__file__), name], env=env, check=True)


if __name__ == "__main__":
    main()
