"""Programs built through the public APIs of JAX's ecosystem (flax nnx and linen, optax,
equinox, jax.numpy.linalg, shard_map, shape polymorphism), exported with `jax.export` in the
default JAX configuration (Shardy on), and the checks tests/test_jax_ecosystem*.py run on each:
load the artifact, validate, run and match XLA, serialize, jaxlib reads our artifact, and our
artifact is byte-identical to jaxlib's for the same text.

Each builder returns (function, example arguments); functions return values that do not depend
on implementation choices (eigenvectors and singular vectors enter only through products that
fix their signs)."""
from __future__ import annotations

import numpy as np

import jax
import jax.numpy as jnp
from jax import export

import stablehlo_ref as shlo
from stablehlo_ref.serialization import artifact_version, deserialize, serialize_as

RTOL, ATOL = 2e-4, 2e-5     # float32 against XLA CPU; loose enough for any accumulation order


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def export_program(fn, args, poly=None):
    """jax.export of jax.jit(fn) on the arguments' shapes (or symbolic `poly` shapes)."""
    if poly is None:
        specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype),
                             args)
    else:
        specs = export.symbolic_args_specs(tuple(args), tuple(poly))
    return export.export(jax.jit(fn))(*specs)


def jaxlib_serialize(text: str, target: str) -> bytes:
    from jax._src.interpreters import mlir as M
    from jax._src.lib import _jax
    from jax._src.lib.mlir import ir
    with M.make_ir_context():
        return _jax.mlir.serialize_portable_artifact(ir.Module.parse(text), target, True)


def jaxlib_stablehlo_version() -> str:
    """The StableHLO version of jaxlib's own serializer."""
    from jax._src.lib.mlir.dialects import hlo
    return hlo.get_current_version()


def jaxlib_read(data: bytes) -> str:
    from jax._src.interpreters import mlir as M
    from jax._src.lib import _jax
    with M.make_ir_context():
        return str(_jax.mlir.deserialize_portable_artifact(data))


def _plain(a) -> np.ndarray:
    """An argument or result as the module sees it: typed PRNG keys as their key data."""
    if jax.dtypes.issubdtype(getattr(a, "dtype", np.float32), jax.dtypes.prng_key):
        a = jax.random.key_data(a)
    return np.asarray(a)


def compare_results(got, expected, rtol=RTOL, atol=ATOL):
    """Our results against XLA's: floats (f16/bf16 too) and complex numbers within rtol/atol,
    integers and booleans exactly."""
    assert len(got) == len(expected), (len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        assert g.shape == e.shape, f"result {i}: shape {g.shape} != {e.shape}"
        if np.iscomplexobj(e):
            np.testing.assert_allclose(g.astype(np.complex128), e.astype(np.complex128), rtol=rtol, atol=atol,
                                       err_msg=f"result {i}")
        elif np.issubdtype(e.dtype, np.floating) or e.dtype.kind == "V" or e.dtype.name in ("bfloat16", "float16"):
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=f"result {i}")
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"result {i}")


def check_program(fn, args, poly=None):
    """All the checks on one program; raises AssertionError (or a StableHLOError) on failure."""
    exp = export_program(fn, args, poly)
    data = exp.mlir_module_serialized
    # the module's arguments: the flattened ones jax kept (it drops unused ones, such as the
    # running statistics of a BatchNorm in train mode), PRNG keys as their key data
    leaves = [_plain(a) for a in jax.tree.leaves(args)]
    flat = [leaves[i] for i in sorted(exp.module_kept_var_idx)]
    expected = [_plain(x) for x in jax.tree.leaves(jax.jit(fn)(*args))]
    # 1. the artifact jax wrote loads and validates
    m = deserialize(data)
    shlo.verify(m)
    # 2. the text loads, validates, runs, and matches XLA
    text = exp.mlir_module()
    mt = shlo.parse(text, "-")
    shlo.verify(mt)
    compare_results(shlo.run(mt, *flat), expected)
    # 3. serialize; jaxlib reads ours; byte-identical to jaxlib's for the same text, laid out as
    # jaxlib's StableHLO version lays it out (a newer serializer reaches an older target's ops by
    # rewriting newer ones, which reorders use lists: see serialize_as)
    target = artifact_version(data)
    ours = serialize_as(mt, target, writer_version=jaxlib_stablehlo_version())
    theirs = jaxlib_serialize(text, target)
    jaxlib_text = jaxlib_read(ours)              # jaxlib reads ours (raises if it cannot)
    if ours != theirs:                           # equal bytes read equally: compare only on a difference
        assert jaxlib_text == jaxlib_read(theirs)
        raise AssertionError(f"artifact differs from jaxlib's ({len(ours)} vs {len(theirs)} bytes)")
    # 4. the artifact read back equals the module under the IR's equality (default-valued
    # attributes dropped on the way count as equal) and prints as jaxlib reads it
    back = deserialize(ours)
    assert back == mt
    assert shlo.print_module(back, strip_debuginfo=True).strip() == jaxlib_text.strip()
    return exp


# ----------------------------------------------------------------------------- flax nnx

def _nnx_apply(model, *xs):
    from flax import nnx
    graphdef, state = nnx.split(model)

    def fn(state, *xs):
        return nnx.merge(graphdef, state)(*xs)
    return fn, (state, *xs)


def nnx_mlp(rng):
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(8, 16, rngs=rngs)
            self.l2 = nnx.Linear(16, 4, rngs=rngs)

        def __call__(self, x):
            return jax.nn.softmax(self.l2(nnx.gelu(self.l1(x))))
    return _nnx_apply(MLP(nnx.Rngs(0)), f32(rng, 3, 8))


def _nnx_cnn(train: bool):
    def build(rng):
        from flax import nnx

        class CNN(nnx.Module):
            def __init__(self, rngs):
                self.conv = nnx.Conv(3, 8, (3, 3), rngs=rngs)
                self.bn = nnx.BatchNorm(8, rngs=rngs)
                self.out = nnx.Linear(8, 5, rngs=rngs)

            def __call__(self, x):
                h = nnx.relu(self.bn(self.conv(x)))
                h = nnx.avg_pool(h, (2, 2), strides=(2, 2))
                return self.out(h.mean(axis=(1, 2)))
        m = CNN(nnx.Rngs(1))
        m.train() if train else m.eval()
        return _nnx_apply(m, f32(rng, 2, 8, 8, 3))
    return build


def _nnx_resnet(train: bool):
    def build(rng):
        from flax import nnx

        class Block(nnx.Module):
            def __init__(self, rngs):
                self.c1 = nnx.Conv(4, 4, (3, 3), use_bias=False, rngs=rngs)
                self.b1 = nnx.BatchNorm(4, rngs=rngs)
                self.c2 = nnx.Conv(4, 4, (3, 3), use_bias=False, rngs=rngs)
                self.b2 = nnx.BatchNorm(4, rngs=rngs)

            def __call__(self, x):
                h = nnx.relu(self.b1(self.c1(x)))
                return nnx.relu(x + self.b2(self.c2(h)))
        m = Block(nnx.Rngs(2))
        m.train() if train else m.eval()
        return _nnx_apply(m, f32(rng, 2, 6, 6, 4))
    return build


def _nnx_rnn(cell_name: str):
    def build(rng):
        from flax import nnx
        cell = getattr(nnx, cell_name)(4, 6, rngs=nnx.Rngs(3))
        return _nnx_apply(nnx.RNN(cell), f32(rng, 2, 5, 4))
    return build


def nnx_dropout(rng):
    from flax import nnx
    drop = nnx.Dropout(0.3)

    def fn(key_data, x):
        return drop(x, rngs=nnx.Rngs(dropout=jax.random.wrap_key_data(key_data)))
    return fn, (np.asarray(jax.random.key_data(jax.random.key(7))), f32(rng, 4, 8))


def nnx_decoder(rng):
    from flax import nnx

    class Decoder(nnx.Module):
        def __init__(self, rngs):
            self.emb = nnx.Embed(11, 16, rngs=rngs)
            self.ln1 = nnx.LayerNorm(16, rngs=rngs)
            self.att = nnx.MultiHeadAttention(num_heads=2, in_features=16, decode=False, rngs=rngs)
            self.ln2 = nnx.RMSNorm(16, rngs=rngs)
            self.ff = nnx.Linear(16, 16, rngs=rngs)
            self.head = nnx.Linear(16, 11, rngs=rngs)

        def __call__(self, tokens):
            x = self.emb(tokens)
            mask = nnx.make_causal_mask(tokens)
            x = x + self.att(self.ln1(x), mask=mask)
            x = x + nnx.gelu(self.ff(self.ln2(x)))
            return jax.nn.log_softmax(self.head(x))
    return _nnx_apply(Decoder(nnx.Rngs(4)), rng.integers(0, 11, size=(2, 6)).astype(np.int32))


# ----------------------------------------------------------------------------- flax linen

def _linen_apply(module, x, train=None, mutable=False):
    variables = module.init(jax.random.key(0), x, **({} if train is None else {"train": train}))

    def fn(variables, x):
        kw = {} if train is None else {"train": train}
        if mutable:
            y, upd = module.apply(variables, x, mutable=["batch_stats"], **kw)
            return y, upd
        return module.apply(variables, x, **kw)
    return fn, (variables, x)


def _linen_cnn(train: bool):
    def build(rng):
        import flax.linen as nn

        class CNN(nn.Module):
            @nn.compact
            def __call__(self, x, train):
                x = nn.Conv(8, (3, 3))(x)
                x = nn.BatchNorm(use_running_average=not train)(x)
                x = nn.relu(x)
                x = nn.max_pool(x, (2, 2), strides=(2, 2))
                return nn.Dense(4)(x.reshape(x.shape[0], -1))
        return _linen_apply(CNN(), f32(rng, 2, 8, 8, 3), train=train, mutable=train)
    return build


def linen_scan_lstm(rng):
    import flax.linen as nn

    class Seq(nn.Module):
        @nn.compact
        def __call__(self, xs):
            cell = nn.scan(nn.OptimizedLSTMCell, variable_broadcast="params", split_rngs={"params": False},
                           in_axes=1, out_axes=1)(features=6)
            carry = cell.initialize_carry(jax.random.key(0), xs[:, 0].shape)
            _, ys = cell(carry, xs)
            return ys
    return _linen_apply(Seq(), f32(rng, 2, 5, 4))


def linen_gru_rnn(rng):
    import flax.linen as nn
    return _linen_apply(nn.RNN(nn.GRUCell(features=5)), f32(rng, 2, 4, 3))


def linen_mlp_dropout(rng):
    import flax.linen as nn

    class M(nn.Module):
        @nn.compact
        def __call__(self, x, key_data):
            x = nn.Dense(8)(x)
            x = nn.Dropout(0.5, deterministic=False)(x, rng=jax.random.wrap_key_data(key_data))
            return nn.tanh(nn.Dense(3)(x))
    x, kd = f32(rng, 4, 6), np.asarray(jax.random.key_data(jax.random.key(3)))
    module = M()
    variables = module.init(jax.random.key(1), x, kd)
    return (lambda v, x, k: module.apply(v, x, k)), (variables, x, kd)


# ----------------------------------------------------------------------------- optax, equinox

def optax_adamw(rng):
    import optax
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2, weight_decay=1e-3))
    params = {"w": f32(rng, 5, 3), "b": f32(rng, 3)}
    state = opt.init(params)
    x, y = f32(rng, 8, 5), f32(rng, 8, 3)

    def step(params, state, x, y):
        def loss(p):
            return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state, l
    return step, (params, state, x, y)


def _eqx_apply(model, *xs):
    import equinox as eqx
    params, static = eqx.partition(model, eqx.is_array)

    def fn(params, *xs):
        return eqx.combine(params, static)(*xs)
    return fn, (params, *xs)


def eqx_mlp(rng):
    import equinox as eqx
    return _eqx_apply(eqx.nn.MLP(6, 3, 16, 2, key=jax.random.key(0)), f32(rng, 6))


def eqx_conv(rng):
    import equinox as eqx
    return _eqx_apply(eqx.nn.Conv2d(3, 4, 3, padding=1, key=jax.random.key(1)), f32(rng, 3, 6, 6))


def eqx_gru_scan(rng):
    import equinox as eqx
    cell = eqx.nn.GRUCell(3, 5, key=jax.random.key(2))

    class Seq(eqx.Module):
        cell: eqx.nn.GRUCell

        def __call__(self, xs):
            def f(h, x):
                h = self.cell(x, h)
                return h, h
            return jax.lax.scan(f, jnp.zeros(5), xs)[1]
    return _eqx_apply(Seq(cell), f32(rng, 4, 3))


# ----------------------------------------------------------------------------- linalg

def _spd(rng, n):
    a = f32(rng, n, n)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


def linalg_solve(rng):
    return (lambda a, b: jnp.linalg.solve(a, b)), (_spd(rng, 4), f32(rng, 4, 2))


def linalg_eigh(rng):
    def fn(a):
        w, v = jnp.linalg.eigh(a)
        return w, (v * w) @ v.T
    return fn, (_spd(rng, 4),)


def linalg_svd(rng):
    def fn(a):
        u, s, vt = jnp.linalg.svd(a, full_matrices=False)
        return s, (u * s) @ vt
    return fn, (f32(rng, 5, 3),)


def linalg_qr(rng):
    def fn(a):
        q, r = jnp.linalg.qr(a)
        return q @ r, jnp.abs(jnp.diag(r))
    return fn, (f32(rng, 4, 3),)


def linalg_cholesky(rng):
    return (lambda a: jnp.linalg.cholesky(a)), (_spd(rng, 4),)


def linalg_inv_det(rng):
    return (lambda a: (jnp.linalg.inv(a), jnp.linalg.det(a))), (_spd(rng, 3),)


# ----------------------------------------------------------------------------- sharding

def shard_map_one_device(rng):
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))

    def fn(a, b):
        def body(a, b):
            return jax.lax.psum(a, "x") * 2, jax.lax.all_gather(b, "x", tiled=True)
        return jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=(P("x"), P()),
                             check_vma=False)(a, b)
    return fn, (f32(rng, 4, 3), f32(rng, 4))


def sharding_constraint(rng):
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))

    def fn(a, b):
        z = jnp.tanh(a) @ b
        return jax.lax.with_sharding_constraint(z, NamedSharding(mesh, P("x", None)))
    return fn, (f32(rng, 4, 4), f32(rng, 4, 2))


# ----------------------------------------------------------------------------- shape polymorphism

def poly_two_dims(rng):
    def fn(x, y):
        return jnp.tanh(x) @ y + jnp.sum(x, axis=1, keepdims=True)
    return fn, (f32(rng, 3, 5), f32(rng, 5, 2)), ("b, n", "n, 2")


def poly_pad_concat(rng):
    def fn(x):
        return jnp.concatenate([jnp.pad(x, ((0, 0), (1, 2))), x[:, :1] * 2], axis=1)
    return fn, (f32(rng, 3, 4),), ("b, n",)


def poly_cumsum_top_k(rng):
    """jnp.cumsum and lax.top_k with a symbolic k: @stablehlo.dynamic_reduce_window and
    @stablehlo.dynamic_top_k."""
    def fn(x):
        v, i = jax.lax.top_k(jnp.cumsum(x, axis=1), x.shape[1] // 2)
        return v, i
    return fn, (f32(rng, 3, 6),), ("b, 2*n",)


def approx_max_k(rng):
    """lax.approx_max_k: @ApproxTopK, which XLA CPU computes exactly."""
    def fn(x):
        return jax.lax.approx_max_k(x, 3)
    return fn, (f32(rng, 4, 16),)


def special_functions(rng):
    """jax.scipy.special functions JAX writes as CHLO ops decomposed by jax.export."""
    from jax.scipy import special

    def fn(x, p):
        return (special.erf(x), special.erfc(x), special.erfinv(jnp.tanh(x)), special.gammaln(p),
                special.digamma(p), jnp.arcsinh(x), jnp.arccosh(p + 1), jnp.sinh(x), jnp.cosh(x))
    return fn, (f32(rng, 16), np.abs(f32(rng, 16)) + 0.5)


def vmap_take(rng):
    """jax.vmap of indexing: a gather with batching dimensions (StableHLO 1.1.0)."""
    def fn(a, i):
        return jax.vmap(lambda row, j: row[j])(a, i)
    return fn, (f32(rng, 4, 7), np.array([[0, 3], [6, 1], [2, 2], [5, 0]], np.int32))


def scipy_bfgs(rng):
    """jax.scipy.optimize.minimize with BFGS on a convex function: a while loop holding the
    line search's loops, with the inverse Hessian's update (an identity of iotas) and the
    gradient's infinity norm in calls the loop body inlines."""
    from jax.scipy.optimize import minimize
    w = np.arange(1, 7, dtype=np.float32)

    def fn(x0):
        return minimize(lambda x: jnp.sum(w * (x - 1.0) ** 2) + 0.01 * jnp.sum(x ** 4), x0,
                        method="BFGS", options=dict(maxiter=30)).x
    return fn, (np.zeros(6, np.float32),)


def odeint_adaptive(rng):
    """jax.experimental.ode.odeint: Dormand-Prince steps of adaptive size in a loop over the
    output times (the stages written into a 7-row table by one-row scatters)."""
    from jax.experimental.ode import odeint

    def fn(y0, ts):
        def rhs(y, t):
            return jnp.stack([y[0] - 0.1 * y[0] * y[1], 0.075 * y[0] * y[1] - 1.5 * y[1]])
        return odeint(rhs, y0, ts, rtol=1e-5, atol=1e-5)
    return fn, (np.array([10.0, 5.0], np.float32), np.linspace(0, 3, 8).astype(np.float32))


def optax_lbfgs(rng):
    """optax.lbfgs with its zoom line search, ten steps in a scan."""
    import optax

    def fn(x0):
        def fun(x):
            return jnp.sum((x - 1.0) ** 2 * jnp.arange(1, 9)) + 0.01 * jnp.sum(x ** 4)
        opt = optax.lbfgs()
        value_and_grad = optax.value_and_grad_from_state(fun)

        def step(carry, _):
            x, state = carry
            v, g = value_and_grad(x, state=state)
            u, state = opt.update(g, state, x, value=v, grad=g, value_fn=fun)
            return (optax.apply_updates(x, u), state), v
        (x, _), vs = jax.lax.scan(step, (x0, opt.init(x0)), None, length=10)
        return x, vs
    return fn, (np.zeros(8, np.float32),)


PROGRAMS = {
    "nnx_mlp": nnx_mlp,
    "nnx_cnn_batchnorm_train": _nnx_cnn(True),
    "nnx_cnn_batchnorm_eval": _nnx_cnn(False),
    "nnx_resnet_block_train": _nnx_resnet(True),
    "nnx_resnet_block_eval": _nnx_resnet(False),
    "nnx_rnn_lstm": _nnx_rnn("LSTMCell"),
    "nnx_rnn_gru": _nnx_rnn("GRUCell"),
    "nnx_dropout": nnx_dropout,
    "nnx_causal_decoder": nnx_decoder,
    "linen_cnn_batchnorm_train": _linen_cnn(True),
    "linen_cnn_batchnorm_eval": _linen_cnn(False),
    "linen_scan_lstm": linen_scan_lstm,
    "linen_rnn_gru": linen_gru_rnn,
    "linen_mlp_dropout": linen_mlp_dropout,
    "optax_adamw_clip": optax_adamw,
    "eqx_mlp": eqx_mlp,
    "eqx_conv": eqx_conv,
    "eqx_gru_scan": eqx_gru_scan,
    "linalg_solve": linalg_solve,
    "linalg_eigh": linalg_eigh,
    "linalg_svd": linalg_svd,
    "linalg_qr": linalg_qr,
    "linalg_cholesky": linalg_cholesky,
    "linalg_inv_det": linalg_inv_det,
    "shard_map_1_device": shard_map_one_device,
    "sharding_constraint": sharding_constraint,
    "shape_poly_two_dims": poly_two_dims,
    "shape_poly_pad_concat": poly_pad_concat,
    "shape_poly_cumsum_top_k": poly_cumsum_top_k,
    "approx_max_k": approx_max_k,
    "special_functions": special_functions,
    "vmap_take": vmap_take,
    "scipy_bfgs": scipy_bfgs,
    "odeint_adaptive": odeint_adaptive,
    "optax_lbfgs": optax_lbfgs,
}
