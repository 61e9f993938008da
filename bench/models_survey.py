"""A wider set of jax programs for `bench_models.py --set survey`: the ops and library
layers that real programs are made of (einsum, layer norm, softmax cross-entropy, FFT, sort
and search, linear algebra, special functions, random sampling, convolutions and their
gradients, integer and bf16 matmuls, control flow inside loops), flax, optax and equinox
models and update steps, and iterative solvers (an adaptive ODE integrator, BFGS and L-BFGS
with line searches, CTC's dynamic program, continued fractions, a training loop in a scan). Written to find where the interpreter falls far behind
XLA on programs it was not tuned on; the default set (`models.PROGRAMS`) is the one the
performance issue's targets are measured on."""
from __future__ import annotations

import numpy as np

_F32 = np.float32


def _rng():
    return np.random.default_rng(0)


def _a(r, *shape):
    return r.standard_normal(shape).astype(_F32)


def _jax():
    import jax
    import jax.numpy as jnp
    from jax import lax
    return jax, jnp, lax


def einsum_attention_scores():
    jax, jnp, lax = _jax()
    r = _rng()
    return "einsum_bhqd", (lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k)), \
        [_a(r, 4, 8, 64, 32), _a(r, 4, 8, 64, 32)]


def layernorm_gelu():
    jax, jnp, lax = _jax()
    r = _rng()

    def f(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return jax.nn.gelu((x - m) / jnp.sqrt(v + 1e-5) * g + b)
    return "layernorm_gelu", f, [_a(r, 256, 512), _a(r, 512), _a(r, 512)]


def softmax_cross_entropy():
    jax, jnp, lax = _jax()
    r = _rng()
    return "softmax_xent", (lambda logits, y: -jnp.take_along_axis(
        jax.nn.log_softmax(logits), y[:, None], 1).mean()), \
        [_a(r, 256, 1000), (np.arange(256) % 1000).astype(np.int32)]


def rfft_magnitude():
    jax, jnp, lax = _jax()
    return "fft_rfft", (lambda x: jnp.abs(jnp.fft.rfft(x)).sum()), [_a(_rng(), 64, 1024)]


def argsort_rows():
    jax, jnp, lax = _jax()
    return "argsort", (lambda x: jnp.argsort(x, axis=-1)), [_a(_rng(), 64, 2048)]


def searchsorted_queries():
    jax, jnp, lax = _jax()
    r = _rng()
    return "searchsorted", (lambda a, v: jnp.searchsorted(a, v)), [np.sort(_a(r, 4096)), _a(r, 4096)]


def associative_scan_sum():
    jax, jnp, lax = _jax()
    return "assoc_scan", (lambda x: lax.associative_scan(jnp.add, x)), [_a(_rng(), 4096)]


def lax_map_sort():
    jax, jnp, lax = _jax()
    return "lax_map_sort", (lambda x: lax.map(lambda row: jnp.sort(row) * 2.0, x)), [_a(_rng(), 64, 128)]


def vmap_matvec():
    jax, jnp, lax = _jax()
    r = _rng()
    return "vmap_matvec", (lambda m, v: jax.vmap(jnp.dot)(m, v)), [_a(r, 128, 64, 64), _a(r, 128, 64)]


def linalg_eigh():
    jax, jnp, lax = _jax()
    a = _a(_rng(), 64, 64)
    return "eigh", (lambda a: jnp.linalg.eigh(a)[0]), [(a + a.T) / 2]


def linalg_svd():
    jax, jnp, lax = _jax()
    return "svd", (lambda a: jnp.linalg.svd(a, compute_uv=False)), [_a(_rng(), 64, 32)]


def linalg_qr():
    jax, jnp, lax = _jax()
    return "qr", (lambda a: jnp.linalg.qr(a)[1]), [_a(_rng(), 64, 64)]


def linalg_cholesky():
    jax, jnp, lax = _jax()
    a = _a(_rng(), 64, 64)
    return "cholesky", (lambda a: jnp.linalg.cholesky(a)), [a @ a.T + 64 * np.eye(64, dtype=_F32)]


def special_gammaln_erf():
    jax, jnp, lax = _jax()
    return "gammaln_erf", (lambda x: jax.scipy.special.gammaln(x) + jax.scipy.special.erf(x)), \
        [np.abs(_a(_rng(), 8192)) + _F32(0.1)]


def random_categorical():
    jax, jnp, lax = _jax()
    return "categorical", (lambda k, l: jax.random.categorical(jax.random.wrap_key_data(k), l)), \
        [np.array([0, 7], np.uint32), _a(_rng(), 512, 100)]


def random_permutation():
    jax, jnp, lax = _jax()
    return "permutation", (lambda k: jax.random.permutation(jax.random.wrap_key_data(k), 4096)), \
        [np.array([0, 9], np.uint32)]


def segment_max():
    jax, jnp, lax = _jax()
    return "segment_max", (lambda d, s: jax.ops.segment_max(d, s, num_segments=64)), \
        [_a(_rng(), 8192), (np.arange(8192) % 64).astype(np.int32)]


def interp_linear():
    jax, jnp, lax = _jax()
    return "interp", (lambda x, xp, fp: jnp.interp(x, xp, fp)), \
        [np.linspace(0, 1, 4096).astype(_F32), np.linspace(0, 1, 256).astype(_F32), _a(_rng(), 256)]


def histogram_bins():
    jax, jnp, lax = _jax()
    return "histogram", (lambda x: jnp.histogram(x, bins=64, range=(-4, 4))[0]), [_a(_rng(), 16384)]


def conv_transpose():
    jax, jnp, lax = _jax()
    r = _rng()
    return "conv_transpose", (lambda x, k: lax.conv_transpose(
        x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))), [_a(r, 4, 16, 16, 8), _a(r, 3, 3, 8, 8)]


def depthwise_conv():
    jax, jnp, lax = _jax()
    r = _rng()
    return "depthwise_conv", (lambda x, k: lax.conv_general_dilated(
        x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=16)), \
        [_a(r, 4, 32, 32, 16), _a(r, 3, 3, 1, 16)]


def maxpool_grad():
    jax, jnp, lax = _jax()
    return "maxpool_grad", (lambda x: jax.grad(lambda x: lax.reduce_window(
        x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum())(x)), [_a(_rng(), 8, 32, 32, 16)]


def while_newton_sqrt():
    jax, jnp, lax = _jax()

    def f(x):
        def c(s):
            return (jnp.max(jnp.abs(s[0] * s[0] - x)) > 1e-5) & (s[1] < 100)

        def b(s):
            return (0.5 * (s[0] + x / s[0]), s[1] + 1)
        return lax.while_loop(c, b, (x, 0))[0]
    return "while_newton", f, [np.abs(_a(_rng(), 1024)) + 1]


def fori_matmul_tanh():
    jax, jnp, lax = _jax()
    r = _rng()
    return "fori_matmul", (lambda a, b: lax.fori_loop(0, 100, lambda i, m: jnp.tanh(m @ a) + b, b)), \
        [_a(r, 32, 32) / 8, _a(r, 32, 32)]


def scan_logaddexp():
    jax, jnp, lax = _jax()
    return "scan_cumlogsumexp", (lambda x: lax.scan(
        lambda c, row: (jnp.logaddexp(c, row), c), jnp.zeros(64, _F32), x)[1]), [_a(_rng(), 512, 64)]


def switch_branches():
    jax, jnp, lax = _jax()
    return "cond_switch", (lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh, jnp.exp], x)), \
        [_a(_rng(), 1024), np.int32(2)]


def gather_embedding():
    jax, jnp, lax = _jax()
    return "gather_embed", (lambda e, ids: e[ids].sum(0)), \
        [_a(_rng(), 10000, 64), (np.arange(2048) * 7 % 10000).astype(np.int32)]


def scatter_add_rows():
    jax, jnp, lax = _jax()
    r = _rng()
    return "scatter_update", (lambda t, i, u: t.at[i].add(u)), \
        [_a(r, 4096, 16), (np.arange(512) * 5 % 4096).astype(np.int32), _a(r, 512, 16)]


def top_k_small():
    jax, jnp, lax = _jax()
    return "top_k_small", (lambda x: lax.top_k(x, 4)[1]), [_a(_rng(), 1024, 64)]


def cumprod_cummax():
    jax, jnp, lax = _jax()
    return "cumprod_cummax", (lambda x: jnp.cumprod(x * 0.01 + 1, axis=1) + lax.cummax(x, axis=1)), \
        [_a(_rng(), 256, 512)]


def bf16_matmul():
    jax, jnp, lax = _jax()
    import ml_dtypes
    r = _rng()
    return "bf16_matmul", (lambda a, b: (a @ b).astype(jnp.float32)), \
        [_a(r, 256, 256).astype(ml_dtypes.bfloat16), _a(r, 256, 256).astype(ml_dtypes.bfloat16)]


def int8_matmul():
    jax, jnp, lax = _jax()
    r = _rng()
    return "int8_matmul", (lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.int32)), \
        [r.integers(-100, 100, (256, 256)).astype(np.int8), r.integers(-100, 100, (256, 256)).astype(np.int8)]


def complex_elementwise():
    jax, jnp, lax = _jax()
    r = _rng()
    return "complex_ops", (lambda z: jnp.abs(jnp.exp(z) * jnp.conj(z) / (z + 1))), \
        [(_a(r, 4096) + 1j * _a(r, 4096)).astype(np.complex64)]


def pad_concat_reverse():
    jax, jnp, lax = _jax()
    return "pad_concat_rev", (lambda x: jnp.concatenate([jnp.pad(x, 3), jnp.flip(jnp.pad(x, 3), 0)], 1).sum()), \
        [_a(_rng(), 128, 128)]


def remat_mlp_grad():
    jax, jnp, lax = _jax()
    r = _rng()

    def f(x, w1, w2):
        g = jax.checkpoint(lambda x, w1, w2: jnp.tanh(jnp.tanh(x @ w1) @ w2).sum())
        return jax.grad(g, argnums=(1, 2))(x, w1, w2)
    return "remat_mlp_grad", f, [_a(r, 64, 256), _a(r, 256, 256) / 16, _a(r, 256, 10) / 16]


def normal_logsumexp():
    jax, jnp, lax = _jax()
    return "logsumexp_normal", (lambda k: jax.nn.logsumexp(
        jax.random.normal(jax.random.wrap_key_data(k), (256, 256)), axis=1)), [np.array([1, 2], np.uint32)]


def dropout_mask():
    jax, jnp, lax = _jax()
    return "dropout_bernoulli", (lambda k, x: jnp.where(
        jax.random.bernoulli(jax.random.wrap_key_data(k), 0.9, x.shape), x / 0.9, 0)), \
        [np.array([3, 4], np.uint32), _a(_rng(), 512, 512)]


def sort_two_operands():
    jax, jnp, lax = _jax()
    r = _rng()
    return "sort_multi_operand", (lambda a, b: lax.sort((a, b), num_keys=1)), [_a(r, 8192), _a(r, 8192)]


def fori_dynamic_slice():
    jax, jnp, lax = _jax()
    return "fori_dynamic_slice", (lambda x: lax.fori_loop(
        0, 250, lambda i, acc: acc + lax.dynamic_slice(x, (i * 4,), (16,)), jnp.zeros(16, _F32))), \
        [_a(_rng(), 1024)]


def scan_ode():
    jax, jnp, lax = _jax()
    return "scan_ode", (lambda y0: lax.scan(
        lambda y, _: (y + 0.01 * (-y ** 3 + jnp.sin(y)), y), y0, None, length=300)[1]), [_a(_rng(), 32)]


def while_bisect_scalar():
    jax, jnp, lax = _jax()

    def f(a):
        def body(s):
            mid = (s[0] + s[1]) / 2
            return lax.cond(mid ** 3 > a, lambda: (s[0], mid), lambda: (mid, s[1]))
        return lax.while_loop(lambda s: s[1] - s[0] > 1e-6, body, (jnp.float32(0), jnp.float32(10)))
    return "while_bisect_scalar", f, [np.float32(7.0)]


def cond_in_scan():
    jax, jnp, lax = _jax()
    return "cond_in_scan", (lambda xs: lax.scan(
        lambda c, x: (lax.cond(x > 0, lambda: c + x, lambda: c * 0.9), c), jnp.float32(0), xs)[1]), \
        [_a(_rng(), 256)]


def nested_fori():
    jax, jnp, lax = _jax()
    return "nested_fori", (lambda x: lax.fori_loop(0, 20, lambda i, a: lax.fori_loop(
        0, 20, lambda j, b: b * 0.99 + jnp.float32(i - j), a), x)), [_a(_rng(), 64)]


def per_example_grads():
    jax, jnp, lax = _jax()
    r = _rng()
    return "vmap_grad_per_example", (lambda w, x: jax.vmap(jax.grad(
        lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), (None, 0))(w, x)), [_a(r, 32, 32), _a(r, 64, 32)]


def hessian_small():
    jax, jnp, lax = _jax()
    return "hessian_quad", (lambda x: jax.hessian(lambda v: jnp.sum(jnp.exp(v) * v ** 2))(x)), [_a(_rng(), 32)]


def _flax(name, make_module, x, **kw):
    import jax
    module = make_module()
    params = module.init(jax.random.PRNGKey(0), x, **kw)
    leaves, td = jax.tree_util.tree_flatten(params)

    def f(x, *ls):
        return module.apply(jax.tree_util.tree_unflatten(td, ls), x, **kw)
    return name, f, [x] + [np.asarray(v) for v in leaves]


def flax_cnn_batchnorm():
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.BatchNorm(use_running_average=True)(nn.Conv(16, (3, 3))(x)))
            x = nn.avg_pool(x, (2, 2), (2, 2))
            x = nn.relu(nn.Conv(32, (3, 3))(x))
            return nn.Dense(10)(x.reshape(x.shape[0], -1))
    return _flax("flax_cnn_bn", CNN, _a(_rng(), 8, 28, 28, 1))


def flax_transformer_block():
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.LayerNorm()(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=4)(y, y)
            y = nn.Dense(64)(nn.gelu(nn.Dense(256)(nn.LayerNorm()(x))))
            return x + y
    return _flax("flax_transformer", Block, _a(_rng(), 4, 32, 64))


def flax_gru():
    import flax.linen as nn

    class GRU(nn.Module):
        @nn.compact
        def __call__(self, xs):
            return nn.RNN(nn.GRUCell(32))(xs)
    return _flax("flax_gru_rnn", GRU, _a(_rng(), 4, 32, 16))


def flax_embed_mlp():
    import flax.linen as nn
    return _flax("flax_embed_dense", lambda: nn.Sequential(
        [nn.Embed(1000, 64), nn.Dense(64), nn.swish, nn.Dense(1000)]),
        (np.arange(128) % 1000).astype(np.int32).reshape(4, 32))


def _optax_step(name, make_tx):
    import jax
    import jax.numpy as jnp
    import optax
    r = _rng()
    tx = make_tx(optax)
    w = {"a": _a(r, 256, 256) / 16, "b": _a(r, 256)}
    leaves, td = jax.tree_util.tree_flatten((w, tx.init(w)))

    def step(x, *ls):
        w, st = jax.tree_util.tree_unflatten(td, ls)
        g = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w["a"] + w["b"]) ** 2))(w)
        up, st = tx.update(g, st, w)
        return optax.apply_updates(w, up), st
    return name, step, [_a(r, 32, 256)] + [np.asarray(v) for v in leaves]


def optax_adamw_clip():
    return _optax_step("optax_adamw_clip", lambda o: o.chain(o.clip_by_global_norm(1.0), o.adamw(1e-3)))


def optax_lion():
    return _optax_step("optax_lion", lambda o: o.lion(1e-4))


def optax_sgd_nesterov():
    return _optax_step("optax_sgd_nesterov", lambda o: o.sgd(1e-2, momentum=0.9, nesterov=True))


def _eqx(name, module, x):
    import jax
    import equinox as eqx
    params, static = eqx.partition(module, eqx.is_array)
    leaves, td = jax.tree_util.tree_flatten(params)

    def f(x, *ls):
        return jax.vmap(eqx.combine(jax.tree_util.tree_unflatten(td, ls), static))(x)
    return name, f, [x] + [np.asarray(v) for v in leaves]


def equinox_mlp_vmap():
    import jax
    import equinox as eqx
    return _eqx("eqx_mlp_vmap", eqx.nn.MLP(64, 10, 128, 3, key=jax.random.PRNGKey(1)), _a(_rng(), 64, 64))


def equinox_conv_vmap():
    import jax
    import equinox as eqx
    return _eqx("eqx_conv_vmap", eqx.nn.Conv2d(3, 8, 3, key=jax.random.PRNGKey(2)), _a(_rng(), 8, 3, 32, 32))


# Added in session 41 from a probe of library programs the survey did not hold: samplers
# whose lowering is a rejection loop over whole arrays (gamma, beta, poisson), a cumulative
# op with a non-primitive body (cumlogsumexp over rows), a Kalman filter's `scan` of small
# matrices with LAPACK calls, scipy.special functions on f32 arrays, an equinox LSTM's
# `scan` (gates split from one matmul) and a `fori_loop` writing rows.
def random_gamma():
    jax, jnp, lax = _jax()
    return "random_gamma", (lambda k: jax.random.gamma(jax.random.wrap_key_data(k), 2.5, (1000,))), \
        [np.array([0, 7], np.uint32)]


def random_beta():
    jax, jnp, lax = _jax()
    return "random_beta", (lambda k: jax.random.beta(jax.random.wrap_key_data(k), 2.0, 3.0, (500,))), \
        [np.array([0, 9], np.uint32)]


def random_poisson():
    jax, jnp, lax = _jax()
    return "random_poisson", (lambda k: jax.random.poisson(jax.random.wrap_key_data(k), 3.0, (1000,))), \
        [np.array([2, 9], np.uint32)]


def cumlogsumexp_rows():
    jax, jnp, lax = _jax()
    return "cumlogsumexp_2d", (lambda x: (lax.cumlogsumexp(x, axis=1), jnp.cumsum(x, axis=0))), \
        [_a(_rng(), 128, 128)]


def scan_kalman():
    jax, jnp, lax = _jax()
    a = (np.eye(4) * 0.9).astype(_F32)
    q = (np.eye(4) * 0.01).astype(_F32)

    def f(ys, a, q):
        def step(c, y):
            m, p = c
            m = a @ m
            p = a @ p @ a.T + q
            k = p[:, :2] @ jnp.linalg.inv(p[:2, :2] + jnp.eye(2) * 0.1)
            m = m + k @ (y - m[:2])
            return (m, p - k @ p[:2, :]), m
        return lax.scan(step, (jnp.zeros(4), jnp.eye(4)), ys)[1]
    return "scan_kalman", f, [_a(_rng(), 200, 2), a, q]


def special_misc():
    jax, jnp, lax = _jax()
    import jax.scipy.special as jss
    r = _rng()
    return "special_misc", (lambda x, y: (
        jss.betaln(jnp.abs(x) + 0.5, jnp.abs(y) + 0.5), jss.xlogy(x, jnp.abs(y)),
        jss.ndtri(jax.nn.sigmoid(x)), jss.i0e(x), jss.logit(jax.nn.sigmoid(y)),
        jss.entr(jnp.abs(x)))), [_a(r, 1000), _a(r, 1000)]


def equinox_lstm_scan():
    import jax
    import equinox as eqx
    from jax import lax
    import jax.numpy as jnp
    cell = eqx.nn.LSTMCell(16, 32, key=jax.random.PRNGKey(0))
    params, static = eqx.partition(cell, eqx.is_array)
    leaves, td = jax.tree_util.tree_flatten(params)

    def f(xs, *leaves):
        c = eqx.combine(jax.tree_util.tree_unflatten(td, leaves), static)

        def step(h, x):
            h = c(x, h)
            return h, h[0]
        return lax.scan(step, (jnp.zeros(32), jnp.zeros(32)), xs)[1]
    return "equinox_lstm_scan", f, [_a(_rng(), 100, 16), *leaves]


def fori_dus_rows():
    jax, jnp, lax = _jax()
    r = _rng()

    def f(w, x0):
        def body(i, c):
            h, buf = c
            h = jnp.tanh(w @ h)
            return h, lax.dynamic_update_slice(buf, h[None], (i, 0))
        return lax.fori_loop(0, 64, body, (x0, jnp.zeros((64, 32), jnp.float32)))[1]
    return "fori_dus_rows", f, [_a(r, 32, 32) / 6, _a(r, 32)]


def odeint_adaptive():
    jax, jnp, lax = _jax()
    from jax.experimental.ode import odeint

    def f(y0, ts):
        def rhs(y, t):
            return jnp.stack([y[0] - 0.1 * y[0] * y[1], 0.075 * y[0] * y[1] - 1.5 * y[1]])
        return odeint(rhs, y0, ts, rtol=1e-5, atol=1e-5)
    return "odeint_adaptive", f, [np.array([10.0, 5.0], _F32), np.linspace(0, 5, 20).astype(_F32)]


def scipy_bfgs():
    jax, jnp, lax = _jax()
    from jax.scipy.optimize import minimize
    w = np.arange(1, 7, dtype=_F32)
    return "scipy_bfgs", (lambda x0: minimize(
        lambda x: jnp.sum(w * (x - 1.0) ** 2) + 0.01 * jnp.sum(x ** 4), x0, method="BFGS",
        options=dict(maxiter=30)).x), [np.zeros(6, _F32)]


def optax_lbfgs():
    jax, jnp, lax = _jax()
    import optax

    def f(x0):
        def fun(x):
            return jnp.sum((x - 1.0) ** 2 * jnp.arange(1, 9)) + 0.01 * jnp.sum(x ** 4)
        opt = optax.lbfgs()
        value_and_grad = optax.value_and_grad_from_state(fun)

        def step(carry, _):
            x, state = carry
            v, g = value_and_grad(x, state=state)
            u, state = opt.update(g, state, x, value=v, grad=g, value_fn=fun)
            return (optax.apply_updates(x, u), state), v
        (x, _), vs = lax.scan(step, (x0, opt.init(x0)), None, length=10)
        return x, vs
    return "optax_lbfgs", f, [np.zeros(8, _F32)]


def optax_ctc_loss():
    jax, jnp, lax = _jax()
    import optax
    r = _rng()
    logits = _a(r, 4, 30, 12)
    labels = r.integers(1, 12, (4, 8)).astype(np.int32)
    lpad = np.zeros((4, 30), _F32)
    lpad[0, 25:] = 1
    ypad = np.zeros((4, 8), _F32)
    ypad[1, 6:] = 1
    return "optax_ctc_loss", (lambda a, b, c, d: optax.ctc_loss(a, c, b, d)), [logits, labels, lpad, ypad]


def special_incomplete():
    jax, jnp, lax = _jax()
    import jax.scipy.special as jss
    r = _rng()
    a = np.abs(_a(r, 200)) * 3 + 0.1
    x = np.abs(_a(r, 200)) * 3
    return "special_incomplete", (lambda a, x: (
        jss.gammainc(a, x), jss.gammaincc(a, x), jss.betainc(a, a + 1, jnp.clip(x / 10, 0, 1)),
        jss.erfinv(jnp.tanh(x) * 0.99), jss.i1e(x), jss.zeta(a + 1.5, x + 1))), [a, x]


def train_loop_adam_scan():
    jax, jnp, lax = _jax()
    import optax
    r = _rng()
    params = {"w1": _a(r, 8, 32) * 0.3, "b1": np.zeros(32, _F32), "w2": _a(r, 32, 1) * 0.3}
    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 1e-2, 5, 30)))
    leaves, td = jax.tree_util.tree_flatten((params, opt.init(params)))

    def f(x, y, *ls):
        p, s = jax.tree_util.tree_unflatten(td, ls)

        def loss(p, xb, yb):
            return jnp.mean((jnp.tanh(xb @ p["w1"] + p["b1"]) @ p["w2"] - yb) ** 2)

        def step(c, i):
            p, s = c
            xb = lax.dynamic_slice_in_dim(x, (i % 4) * 16, 16)
            yb = lax.dynamic_slice_in_dim(y, (i % 4) * 16, 16)
            l, g = jax.value_and_grad(loss)(p, xb, yb)
            u, s = opt.update(g, s, p)
            return (optax.apply_updates(p, u), s), l
        (p, s), losses = lax.scan(step, (p, s), jnp.arange(30))
        return losses, p
    return "train_loop_adam_scan", f, [_a(r, 64, 8), _a(r, 64, 1), *leaves]


def random_in_scan():
    jax, jnp, lax = _jax()

    def f(x):
        def step(c, i):
            key, acc = c
            key, sub = jax.random.split(key)
            acc = acc + jax.random.normal(jax.random.fold_in(sub, i), acc.shape) * 0.1 \
                + jax.random.bernoulli(sub, 0.3, acc.shape)
            return (key, acc), jnp.sum(acc)
        return lax.scan(step, (jax.random.PRNGKey(3), x), jnp.arange(25))
    return "random_in_scan", f, [_a(_rng(), 32)]


SURVEY = {f.__name__: f for f in (
    einsum_attention_scores, layernorm_gelu, softmax_cross_entropy, rfft_magnitude, argsort_rows,
    searchsorted_queries, associative_scan_sum, lax_map_sort, vmap_matvec, linalg_eigh,
    linalg_svd, linalg_qr, linalg_cholesky, special_gammaln_erf, random_categorical,
    random_permutation, segment_max, interp_linear, histogram_bins, conv_transpose,
    depthwise_conv, maxpool_grad, while_newton_sqrt, fori_matmul_tanh, scan_logaddexp,
    switch_branches, gather_embedding, scatter_add_rows, top_k_small, cumprod_cummax,
    bf16_matmul, int8_matmul, complex_elementwise, pad_concat_reverse, remat_mlp_grad,
    normal_logsumexp, dropout_mask, sort_two_operands, fori_dynamic_slice, scan_ode,
    while_bisect_scalar, cond_in_scan, nested_fori, per_example_grads, hessian_small,
    flax_cnn_batchnorm, flax_transformer_block, flax_gru, flax_embed_mlp, optax_adamw_clip,
    optax_lion, optax_sgd_nesterov, equinox_mlp_vmap, equinox_conv_vmap, random_gamma,
    random_beta, random_poisson, cumlogsumexp_rows, scan_kalman, special_misc, equinox_lstm_scan,
    fori_dus_rows, odeint_adaptive, scipy_bfgs, optax_lbfgs, optax_ctc_loss, special_incomplete,
    train_loop_adam_scan, random_in_scan)}

NEEDS = {"flax_cnn_batchnorm": ("flax",), "flax_transformer_block": ("flax",), "flax_gru": ("flax",),
         "flax_embed_mlp": ("flax",), "optax_adamw_clip": ("optax",), "optax_lion": ("optax",),
         "optax_sgd_nesterov": ("optax",), "equinox_mlp_vmap": ("equinox",),
         "equinox_conv_vmap": ("equinox",), "equinox_lstm_scan": ("equinox",),
         "optax_lbfgs": ("optax",), "optax_ctc_loss": ("optax",), "train_loop_adam_scan": ("optax",)}
