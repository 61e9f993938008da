"""More programs through the public APIs of JAX's ecosystem, beyond tests/jax_ecosystem_programs.py:
jax.random, lax control flow, convolutions and pooling, sorting, FFT, complex and integer
arithmetic, narrow float types, training steps with flax + optax, equinox layers, more
jnp.linalg / jax.scipy.linalg; and programs as `jax.jit(f).lower(...).as_text()` gives them,
with the CHLO ops that JAX writes there (`check_lowered`: run as is, then legalized, each
matched against XLA, then written as a portable artifact that jaxlib reads).

Each builder returns (function, example arguments[, polymorphic shapes]); results do not depend
on implementation choices."""
from __future__ import annotations

import numpy as np

import jax
import jax.numpy as jnp

import stablehlo_ref as shlo
from jax_ecosystem_programs import ATOL, RTOL, _nnx_apply, _plain, compare_results, f32, jaxlib_read
from stablehlo_ref.serialization import serialize
from stablehlo_ref.transforms import legalize_chlo


def check_lowered(fn, args, rtol=RTOL, atol=ATOL):
    """`jax.jit(fn).lower(*args).as_text()`: parses, verifies, runs and matches XLA; with its
    CHLO ops legalized it verifies, runs and matches XLA again, and its portable artifact (the
    oldest version that carries it) is read by jaxlib. Returns the legalization counts."""
    text = jax.jit(fn, keep_unused=True).lower(*args).as_text()
    flat = [_plain(a) for a in jax.tree.leaves(args)]
    expected = [_plain(x) for x in jax.tree.leaves(jax.jit(fn)(*args))]
    m = shlo.parse(text, "-")
    shlo.verify(m)
    compare_results(shlo.run(m, *flat), expected, rtol, atol)
    counts = legalize_chlo(m)
    shlo.verify(m)
    assert not [o.name for o in m.walk() if o.name.startswith("chlo.")]
    m = shlo.parse(shlo.print_module(m), "-")
    compare_results(shlo.run(m, *flat), expected, rtol, atol)
    from stablehlo_ref.verifier.versions import minimum_version
    target = minimum_version(m) or "1.0.0"
    jaxlib_read(serialize(m, target))
    return counts


# ----------------------------------------------------------------------------- jax.random

def random_samplers(rng):
    def fn(key_data, x):
        k = jax.random.wrap_key_data(key_data)
        k1, k2, k3, k4, k5 = jax.random.split(k, 5)
        return (jax.random.normal(k1, (3, 4)), jax.random.uniform(k2, (5,), minval=-2, maxval=3),
                jax.random.bernoulli(k3, 0.3, (6,)), jax.random.categorical(k4, x),
                jax.random.permutation(k5, 7), jax.random.randint(k1, (4,), 0, 100),
                jax.random.truncated_normal(k2, -1.0, 1.0, (3,)), jax.random.gamma(k3, 2.0, (3,)))
    return fn, (np.asarray(jax.random.key_data(jax.random.key(11))), f32(rng, 2, 5))


def random_rbg(rng):
    """The "rbg" PRNG: stablehlo.rng_bit_generator (whose bits are the backend's: compared
    through values that do not depend on them)."""
    def fn(key_data, x):
        k = jax.random.wrap_key_data(key_data, impl="rbg")
        u = jax.random.uniform(k, (64,))
        return jnp.all((u >= 0) & (u < 1)), x * 2
    return fn, (np.asarray(jax.random.key_data(jax.random.key(3, impl="rbg"))), f32(rng, 3))


# ----------------------------------------------------------------------------- lax control flow

def lax_control_flow(rng):
    def fn(x, n, i):
        a = jax.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
        b = jax.lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)
        c = jax.lax.fori_loop(0, 5, lambda k, v: v * 0.9 + k, x)
        d = jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.1), (0, x))[1]
        e = jax.lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(x.shape[1:]), x, unroll=2)
        return a, b, c, d, e
    return fn, (f32(rng, 4, 3), np.int32(3), np.int32(1))


def lax_associative_scan(rng):
    def fn(x):
        return (jax.lax.associative_scan(jnp.add, x, axis=1), jax.lax.cummax(x, axis=0),
                jnp.cumprod(x, axis=1), jax.lax.cumlogsumexp(x, axis=1))
    return fn, (f32(rng, 3, 8),)


# ----------------------------------------------------------------------------- conv, pooling, sort, fft

def lax_conv_dilated_grouped(rng):
    def fn(x, w, w2):
        y = jax.lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (2, 0)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)
        z = jax.lax.conv_transpose(x, w2, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return y, z
    return fn, (f32(rng, 2, 7, 6, 4), f32(rng, 3, 2, 2, 6), f32(rng, 3, 3, 4, 5))


def linen_pooling_norms(rng):
    import flax.linen as nn

    class M(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(8, (3, 3), padding="VALID", kernel_dilation=(1, 2))(x)
            x = nn.GroupNorm(num_groups=4)(x)
            x = nn.avg_pool(x, (2, 2), strides=(1, 2), padding="SAME")
            x = nn.max_pool(x, (3, 1), strides=(2, 1))
            x = nn.LayerNorm()(x)
            return nn.swish(nn.Dense(3)(x.reshape(x.shape[0], -1)))
    module = M()
    x = f32(rng, 2, 10, 12, 3)
    variables = module.init(jax.random.key(0), x)
    return (lambda v, x: module.apply(v, x)), (variables, x)


def sort_search(rng):
    def fn(x, keys, q):
        return (jnp.sort(x, axis=-1), jnp.argsort(x, axis=0, stable=True), jax.lax.sort((keys, x[0]), num_keys=1),
                jnp.searchsorted(jnp.sort(x[0]), q), jnp.argmax(x, axis=1), jnp.argmin(x, axis=0),
                jax.lax.top_k(x, 3))
    x = f32(rng, 4, 6)
    return fn, (x, rng.integers(0, 3, 6).astype(np.int32), f32(rng, 5))


def fft(rng):
    def fn(x, z):
        return (jnp.fft.rfft(x, axis=-1), jnp.fft.irfft(jnp.fft.rfft(x), n=x.shape[-1]),
                jnp.fft.fft2(z), jnp.fft.ifft(z, axis=0))
    z = (f32(rng, 4, 6) + 1j * f32(rng, 4, 6)).astype(np.complex64)
    return fn, (f32(rng, 3, 8), z)


def complex_arith(rng):
    def fn(z, w):
        return (z * w / (w + 2), jnp.abs(z), jnp.angle(w), jnp.exp(z), jnp.log(w), jnp.sqrt(z),
                jnp.conj(z) @ w.T, jnp.real(z * jnp.conj(z)))
    c = lambda: (f32(rng, 3, 4) + 1j * f32(rng, 3, 4)).astype(np.complex64)
    return fn, (c(), c())


def integer_bits(rng):
    def fn(a, b, u):
        return (a // 3, a % 5, jnp.left_shift(a, 2), jnp.right_shift(a, 1), a & b, a | b, a ^ b, ~a,
                jax.lax.population_count(u), jax.lax.clz(u), jnp.clip(a, -3, 4), jax.nn.one_hot(b % 4, 4),
                jnp.sum(a, axis=0), jnp.prod(b % 3 + 1, axis=1), u >> 3, jax.lax.shift_right_logical(a, 2))
    return fn, (rng.integers(-50, 50, (3, 5)).astype(np.int32), rng.integers(-50, 50, (3, 5)).astype(np.int32),
                rng.integers(0, 2 ** 31, (4,)).astype(np.uint32))


def narrow_floats(rng):
    """An MLP in bfloat16 and float16 (each dot in its own type) with mixed-precision sums."""
    def fn(x, w1, w2):
        h = jax.nn.relu(x.astype(jnp.bfloat16) @ w1.astype(jnp.bfloat16))
        y = jnp.tanh(h.astype(jnp.float16) @ w2.astype(jnp.float16))
        return y, jnp.sum(y.astype(jnp.float32), axis=-1), jax.lax.reduce_precision(x, 5, 10)
    return fn, (f32(rng, 4, 8), f32(rng, 8, 16, scale=0.3), f32(rng, 16, 3, scale=0.3))


def jax_nn_functions(rng):
    def fn(x):
        return (jax.nn.gelu(x, approximate=False), jax.nn.gelu(x), jax.nn.softplus(x), jax.nn.silu(x),
                jax.nn.log_softmax(x, axis=-1), jax.nn.logsumexp(x, axis=0), jax.nn.sigmoid(x),
                jax.nn.elu(x), jax.nn.celu(x), jax.nn.glu(x, axis=-1), jax.nn.standardize(x, axis=-1),
                jax.nn.relu6(x * 4), jax.nn.hard_tanh(x * 2), jax.nn.mish(x))
    return fn, (f32(rng, 4, 6, scale=2.0),)


def einsum_and_dots(rng):
    def fn(a, b, c):
        return (jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,kj->bki", a, c), jnp.tensordot(a, b, axes=([1, 2], [2, 1])),
                jnp.einsum("bii->bi", a[:, :, :3]), jnp.outer(c[0], c[1]), jnp.kron(c[:2, :2], c[:2, :2]))
    return fn, (f32(rng, 2, 3, 4), f32(rng, 2, 4, 3), f32(rng, 5, 4))


def ragged_dot(rng):
    def fn(lhs, rhs, groups):
        return jax.lax.ragged_dot(lhs, rhs, groups)
    return fn, (f32(rng, 7, 4), f32(rng, 3, 4, 5), np.array([2, 0, 5], np.int32))


# ----------------------------------------------------------------------------- training steps

def nnx_train_step(rng):
    """A flax nnx model's full training step: value_and_grad through the model, optax adam
    with a cosine schedule, the new parameters and optimizer state out."""
    from flax import nnx
    import optax

    class M(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(6, 12, rngs=rngs)
            self.ln = nnx.LayerNorm(12, rngs=rngs)
            self.l2 = nnx.Linear(12, 3, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.gelu(self.ln(self.l1(x))))
    model = M(nnx.Rngs(0))
    graphdef, params = nnx.split(model, nnx.Param)
    tx = optax.adam(optax.cosine_decay_schedule(1e-2, 100))
    opt_state = tx.init(params)

    def step(params, opt_state, x, y):
        def loss(p):
            logits = nnx.merge(graphdef, p)(x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        l, g = jax.value_and_grad(loss)(params)
        upd, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, upd), opt_state, l
    return step, (params, opt_state, f32(rng, 8, 6), rng.integers(0, 3, 8).astype(np.int32))


def optax_optimizers(rng):
    import optax
    params = {"w": f32(rng, 4, 3), "b": f32(rng, 3)}
    grads = {"w": f32(rng, 4, 3), "b": f32(rng, 3)}
    opts = [optax.sgd(0.1, momentum=0.9, nesterov=True), optax.lion(1e-3), optax.adafactor(1e-2),
            optax.lamb(1e-3), optax.rmsprop(1e-3, centered=True)]
    states = [o.init(params) for o in opts]

    def fn(params, grads, states):
        out = []
        for o, s in zip(opts, states):
            u, s2 = o.update(grads, s, params)
            out.append((optax.apply_updates(params, u), s2))
        return out
    return fn, (params, grads, states)


# ----------------------------------------------------------------------------- equinox

def eqx_attention_norm(rng):
    import equinox as eqx
    k = jax.random.split(jax.random.key(5), 4)
    att = eqx.nn.MultiheadAttention(num_heads=2, query_size=8, key=k[0])
    ln = eqx.nn.LayerNorm(8)
    emb = eqx.nn.Embedding(10, 8, key=k[1])
    conv = eqx.nn.Conv1d(8, 4, 3, padding=1, key=k[2])
    model = (att, ln, emb, conv)
    params, static = eqx.partition(model, eqx.is_array)

    def fn(params, tokens):
        att, ln, emb, conv = eqx.combine(params, static)
        x = jax.vmap(emb)(tokens)
        x = x + att(x, x, x)
        x = jax.vmap(ln)(x)
        return conv(x.T)
    return fn, (params, rng.integers(0, 10, 5).astype(np.int32))


# ----------------------------------------------------------------------------- linalg

def linalg_more(rng):
    import jax.scipy.linalg as sl

    def fn(a, b):
        spd = a @ a.T + 4 * jnp.eye(4)
        sign, logdet = jnp.linalg.slogdet(spd)
        lu, piv = sl.lu_factor(spd)
        x = sl.lu_solve((lu, piv), b)
        t = sl.solve_triangular(jnp.tril(spd), b, lower=True)
        w = jnp.linalg.eigvalsh(spd)
        n = jnp.linalg.norm(a, ord=2)
        pinv_check = jnp.linalg.pinv(a) @ a @ jnp.linalg.pinv(a) - jnp.linalg.pinv(a)
        return sign, logdet, x, t, w, n, jnp.abs(pinv_check).max() < 1e-3, jnp.linalg.matrix_power(a, 3), sl.expm(a * 0.1)
    return fn, (f32(rng, 4, 4), f32(rng, 4, 2))


def linalg_eig(rng):
    """jnp.linalg.eig (@lapack_?geev_ffi), real and complex, batched; eigenvectors enter
    through |v| and the residual A v - v w, which do not depend on their sign or phase; left
    eigenvectors through u^H A - w u^H."""
    def fn(a, z):
        w, v = jnp.linalg.eig(a)
        wz, vz = jnp.linalg.eig(z)
        res = jnp.abs(a.astype(jnp.complex64) @ v - v * w[..., None, :]).max()
        wl, ul = jax.lax.linalg.eig(a[0], compute_left_eigenvectors=True, compute_right_eigenvectors=False)
        left = jnp.abs(jnp.conj(ul).T @ a[0] - wl[:, None] * jnp.conj(ul).T).max()
        return w, jnp.abs(v), res < 1e-4, wz, jnp.abs(vz), jnp.linalg.eigvals(a[1]), left < 1e-4
    z = (f32(rng, 4, 4) + 1j * f32(rng, 4, 4)).astype(np.complex64)
    return fn, (f32(rng, 2, 5, 5), z)


def linalg_hessenberg_tridiagonal(rng):
    """jax.scipy.linalg.hessenberg (@lapack_?gehrd_ffi then ?orgqr), lax.linalg.tridiagonal
    (@lapack_?sytrd_ffi / ?hetrd_ffi, either triangle) and
    lax.linalg.tridiagonal_solve (@lapack_?gtsv_ffi, rows interchanged where the sub-diagonal
    is larger), real and complex; a singular system (LAPACK's info > 0) gives NaN."""
    def fn(a, z, dl, d, du, b, cdl, cd, cdu, cb):
        return (jax.scipy.linalg.hessenberg(a, calc_q=True), jax.scipy.linalg.hessenberg(z, calc_q=True),
                jax.lax.linalg.tridiagonal_solve(dl, d, du, b), jax.lax.linalg.tridiagonal_solve(cdl, cd, cdu, cb),
                jax.lax.linalg.tridiagonal_solve(dl * 0, d * 0, du, b),
                jax.lax.linalg.tridiagonal(a, lower=True), jax.lax.linalg.tridiagonal(a, lower=False),
                jax.lax.linalg.tridiagonal(z, lower=True), jax.lax.linalg.tridiagonal(z, lower=False))
    c = lambda *s: (f32(rng, *s) + 1j * f32(rng, *s)).astype(np.complex64)
    return fn, (f32(rng, 5, 5), c(4, 4), np.array([0, 5, -3, 4, 2, 7], np.float32),
                np.array([1, 0.5, 2, -1, 0.1, 3], np.float32), np.array([2, 1, 1, -2, 3, 0], np.float32),
                f32(rng, 6, 3), c(2, 5), c(2, 5) + 3, c(2, 5), c(2, 5, 2))


def linalg_schur(rng):
    """jax.scipy.linalg.schur (@lapack_?gees_ffi), real (batched) and complex, and sqrtm (a
    complex Schur form underneath); the Schur form is not unique, so the checks are what it
    fixes: A = Q T Q^H, Q unitary, T (quasi-)upper triangular, the eigenvalues on T's diagonal."""
    def fn(a, z, spd):
        t, q = jax.vmap(jax.scipy.linalg.schur)(a)
        qt = jnp.swapaxes(q, -1, -2)
        res = jnp.abs(q @ t @ qt - a).max() < 1e-4
        orth = jnp.abs(qt @ q - jnp.eye(5)).max() < 1e-5
        quasi = jnp.abs(jnp.tril(t, -2)).max() == 0
        tz, qz = jax.scipy.linalg.schur(z, output="complex")
        resz = jnp.abs(qz @ tz @ qz.conj().T - z).max() < 1e-4
        upper = jnp.abs(jnp.tril(tz, -1)).max() == 0
        ev = jnp.sort(jnp.abs(jnp.diagonal(tz)))
        return res, orth, quasi, resz, upper, ev, jax.scipy.linalg.sqrtm(spd)
    z = (f32(rng, 4, 4) + 1j * f32(rng, 4, 4)).astype(np.complex64)
    m = f32(rng, 4, 4)
    return fn, (f32(rng, 3, 5, 5), z, (m @ m.T + 4 * np.eye(4)).astype(np.float32))


# ----------------------------------------------------------------------------- more models, dtypes, indexing, shape polymorphism

def nnx_vmap_scan(rng):
    from flax import nnx
    class Block(nnx.Module):
        def __init__(self, rngs):
            self.l = nnx.Linear(4, 4, rngs=rngs)
        def __call__(self, x):
            return jax.nn.relu(self.l(x))
    @nnx.vmap(in_axes=0, out_axes=0)
    def make(key):
        return Block(nnx.Rngs(key))
    stack = make(jax.random.split(jax.random.key(0), 3))
    g, st = nnx.split(stack)
    def fn(st, x):
        m = nnx.merge(g, st)
        @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
        def body(b, x):
            return b(x)
        return body(m, x)
    return fn, (st, f32(rng, 2, 4))
def linen_attention(rng):
    import flax.linen as nn
    m = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8, dropout_rate=0.0, deterministic=True)
    x = f32(rng, 2, 5, 8)
    v = m.init(jax.random.key(0), x)
    return (lambda v, x: m.apply(v, x, mask=nn.make_causal_mask(jnp.ones((2, 5))))), (v, x)
def eqx_lstm_scan(rng):
    import equinox as eqx
    cell = eqx.nn.LSTMCell(3, 5, key=jax.random.key(0))
    p, s = eqx.partition(cell, eqx.is_array)
    def fn(p, xs):
        c = eqx.combine(p, s)
        def step(carry, x):
            h = c(x, carry); return h, h[0]
        return jax.lax.scan(step, (jnp.zeros(5), jnp.zeros(5)), xs)[1]
    return fn, (p, f32(rng, 6, 3))
def dtype_zoo(rng):
    """int8, uint8 (wrapping), f16, int4 and float8_e4m3fn conversions."""
    def fn(a, b, c, d):
        return (a.astype(jnp.int8) * 3, b.astype(jnp.uint8) + 250, c.astype(jnp.float16) * 2, d,
                jnp.float32(1) / a, (a > 0).astype(jnp.int4), a.astype(jnp.float8_e4m3fn).astype(jnp.float32))
    return fn, (f32(rng, 5), f32(rng, 5) * 10, f32(rng, 5), np.arange(5, dtype=np.int32))
def while_with_dynamic_update(rng):
    def fn(x):
        def body(i, acc):
            return jax.lax.dynamic_update_slice(acc, jnp.sin(jax.lax.dynamic_slice(x, (i,), (1,))), (i,))
        return jax.lax.fori_loop(0, x.shape[0], body, jnp.zeros_like(x))
    return fn, (f32(rng, 7),)
def scatter_gather(rng):
    def fn(x, idx, upd):
        y = x.at[idx].add(upd)
        z = x.at[idx].max(upd)
        w = x.at[:, 1].set(0.0)
        return y, z, w, x[idx], jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1), x[::2, ::-1]
    return fn, (f32(rng, 5, 3), np.array([0, 2, 2], np.int32), f32(rng, 3, 3))
def poly_vmap(rng):
    def fn(x, y):
        return jax.vmap(lambda a, b: jnp.dot(a, b))(x, y), jnp.where(x > 0, x, 0).sum(0)
    return fn, (f32(rng, 4, 3), f32(rng, 4, 3)), ("b, n", "b, n")
def poly_conv_pool(rng):
    import flax.linen as nn
    def fn(x, w):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return nn.max_pool(y, (2, 2), strides=(2, 2)), jnp.mean(y, axis=(1, 2))
    return fn, (f32(rng, 2, 8, 8, 3), f32(rng, 3, 3, 3, 4)), ("b, 8, 8, 3", "3, 3, 3, 4")
def poly_reshape_argsort(rng):
    def fn(x):
        return jnp.argsort(x.reshape(-1)), jnp.cumsum(x, axis=0), jnp.max(x), x.T @ x
    return fn, (f32(rng, 6, 2),), ("2*b, 2",)

# ----------------------------------------------------------------------------- jax.image, scipy.signal/stats/special, attention

def image_resize(rng):
    def fn(x):
        return (jax.image.resize(x, (2, 9, 7, 3), "bilinear"), jax.image.resize(x, (2, 3, 3, 3), "nearest"),
                jax.image.resize(x, (2, 10, 10, 3), "lanczos3"))
    return fn, (f32(rng, 2, 6, 5, 3),)


def signal_convolve(rng):
    from jax.scipy import signal
    return (lambda a, b: (signal.convolve(a, b, mode="same"), signal.correlate2d(a, b))), (f32(rng, 8, 7), f32(rng, 3, 3))


def unique_nonzero_histogram(rng):
    def fn(x):
        return (jnp.unique(jnp.round(x), size=6, fill_value=0), jnp.nonzero(x > 0, size=5),
                jnp.histogram(x, bins=4, range=(-2, 2))[0])
    return fn, (f32(rng, 10),)


def random_choice_dirichlet_beta(rng):
    def fn(kd):
        k = jax.random.wrap_key_data(kd)
        return (jax.random.choice(k, 10, (4,), replace=False), jax.random.dirichlet(k, jnp.ones(3)),
                jax.random.beta(k, 2.0, 3.0, (3,)))
    return fn, (np.asarray(jax.random.key_data(jax.random.key(2))),)


def dot_product_attention(rng):
    return (lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True)), \
        (f32(rng, 2, 5, 2, 4), f32(rng, 2, 5, 2, 4), f32(rng, 2, 5, 2, 4))


def int8_matmul(rng):
    def fn(a, b):
        return jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
    return fn, (rng.integers(-100, 100, (4, 5)).astype(np.int8), rng.integers(-100, 100, (5, 3)).astype(np.int8))


def scipy_stats(rng):
    from jax.scipy import stats

    def fn(x):
        return (stats.norm.cdf(x), stats.norm.logpdf(x), stats.norm.ppf(jax.nn.sigmoid(x)), stats.t.logpdf(x, 3.0),
                stats.gamma.logpdf(jnp.abs(x) + 0.1, 2.0), stats.beta.logpdf(jax.nn.sigmoid(x), 2.0, 3.0),
                stats.poisson.logpmf(jnp.round(jnp.abs(x) * 3), 2.0))
    return fn, (f32(rng, 8),)


def special_more(rng):
    from jax.scipy import special

    def fn(x):
        a = jnp.abs(x)
        return (special.betaln(a + 0.5, 2.0), special.gammaincc(2.0, a), special.expi(a + 0.1),
                special.logit(jax.nn.sigmoid(x)), special.entr(a), special.log_ndtr(x), special.multigammaln(a + 2, 2),
                special.spence(a + 0.1), special.bessel_jn(a + 0.1, v=2)[1])
    return fn, (f32(rng, 8),)


def fftn_3d(rng):
    return (lambda x: jnp.fft.fftn(x)), (f32(rng, 3, 4, 5),)


def narrow_specials(rng):
    def fn(x):
        return (jax.lax.erf_inv(jnp.tanh(x).astype(jnp.bfloat16)), jax.scipy.special.erf(x.astype(jnp.float16)),
                jax.lax.top_k(x.astype(jnp.bfloat16), 2))
    return fn, (f32(rng, 3, 6),)


def approx_min_k_windows(rng):
    def fn(x):
        return (jax.lax.approx_min_k(x, 2), jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2), (1, 1), "SAME"),
                jax.lax.cumsum(x, axis=1, reverse=True))
    return fn, (f32(rng, 4, 8),)


def rng_uniform_legacy(rng):
    """lax.rng_uniform: stablehlo.rng, whose values are the backend's; compared through a
    property of them."""
    return (lambda x: x + jnp.sum(jax.lax.rng_uniform(0.0, 1.0, (3,)) >= 0)), (f32(rng, 3),)


def complex_linalg(rng):
    def fn(z):
        h = z @ jnp.conj(z).T + 3 * jnp.eye(3)
        return jnp.sort(z), jnp.linalg.solve(h, z), jnp.linalg.cholesky(h), jnp.linalg.svd(z, compute_uv=False)
    return fn, ((f32(rng, 3, 3) + 1j * f32(rng, 3, 3)).astype(np.complex64),)


# ----------------------------------------------------------------------------- a third round: more of each library's surface

def random_distributions(rng):
    """jax.random's samplers built on loops and rejection (gamma, poisson, t), categorical,
    permutation, bernoulli, truncated_normal and orthogonal (a QR) from one key."""
    def fn(k):
        ks = jax.random.split(jax.random.wrap_key_data(k), 8)
        return (jax.random.gamma(ks[0], 2.0, (5,)), jax.random.poisson(ks[1], 3.0, (5,)),
                jax.random.categorical(ks[2], jnp.zeros((3, 4))), jax.random.permutation(ks[3], 10),
                jax.random.bernoulli(ks[4], 0.3, (6,)), jax.random.truncated_normal(ks[5], -1., 1., (4,)),
                jax.random.t(ks[6], 3.0, (3,)), jax.random.orthogonal(ks[7], 3))
    return fn, (np.asarray(jax.random.key_data(jax.random.key(3))),)


def linalg_lu_lstsq_complex(rng):
    import jax.scipy.linalg as sl

    def fn(a, z):
        p, l, u = sl.lu(a)
        q, r = jnp.linalg.qr(z)
        x, _, rank, _ = jnp.linalg.lstsq(a, a[:, :2])
        return (p, l, u, jnp.abs(q @ r - z).max() < 1e-4, jnp.linalg.svd(z, compute_uv=False),
                jnp.linalg.eigvalsh(z @ jnp.conj(z).T), x, rank, jnp.linalg.matrix_rank(a),
                sl.cho_solve(sl.cho_factor(a @ a.T + 4 * jnp.eye(4)), a))
    return fn, (f32(rng, 4, 4), (f32(rng, 4, 4) + 1j * f32(rng, 4, 4)).astype(np.complex64))


def numeric_misc(rng):
    def fn(x, i):
        m, e = jnp.frexp(x)
        return (jnp.ldexp(m, e), jnp.nextafter(x, jnp.inf), jax.lax.reduce_precision(x, 5, 10),
                jax.lax.population_count(i), jax.lax.clz(i), jax.lax.rem(i, 3), jax.lax.integer_pow(x, 5),
                jnp.float_power(jnp.abs(x), 1.5), jnp.round(x, 2), jnp.cumsum(x[::-1]), jax.lax.cumlogsumexp(x),
                jax.lax.cummax(x, reverse=True), jnp.polyval(jnp.array([1., 2., 3.]), x),
                jnp.interp(x, jnp.arange(4.), jnp.arange(4.) ** 2), jnp.digitize(x, jnp.array([-1., 0., 1.])),
                jnp.bincount(jnp.abs(i) % 5, length=5), jnp.argwhere(x > 0, size=8, fill_value=-1))
    return fn, (f32(rng, 8), np.arange(-4, 4, dtype=np.int32) * 1234567)


def sort_variants(rng):
    def fn(x, z, k):
        s = jnp.sort(x)
        return (jnp.lexsort((x, k)), jnp.partition(x, 3), jnp.sort(z), jax.lax.top_k(k, 3),
                jnp.argsort(x, stable=True, descending=True), jnp.unique(k, size=6, fill_value=0),
                jnp.searchsorted(s, x, method="compare_all"), jnp.searchsorted(s, x, method="sort"),
                jax.lax.sort((k, x, -x), num_keys=2))
    return fn, (f32(rng, 8), (f32(rng, 5) + 1j * f32(rng, 5)).astype(np.complex64),
                np.array([3, 1, 2, 3, 1, 0, 9, 2], np.int32))


def linen_convtranspose_groupnorm_embed(rng):
    import flax.linen as nn

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x, tok):
            y = nn.GroupNorm(num_groups=2)(nn.ConvTranspose(4, (3, 3), strides=(2, 2))(x))
            e = nn.Embed(10, 4)(tok)
            a = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4)(e, e, mask=nn.make_causal_mask(tok))
            return y.mean(), a
    m = Model()
    x, tok = f32(rng, 1, 4, 4, 2), np.array([[1, 2, 3, 4]], np.int32)
    return (lambda p, x, t: m.apply(p, x, t)), (m.init(jax.random.key(0), x, tok), x, tok)


def eqx_conv_gru_mha_embedding(rng):
    import equinox as eqx
    k = jax.random.split(jax.random.key(0), 4)
    layers = (eqx.nn.Conv2d(2, 3, 3, padding=1, key=k[0]), eqx.nn.GRUCell(3, 5, key=k[1]),
              eqx.nn.MultiheadAttention(2, 4, key=k[2]), eqx.nn.Embedding(7, 4, key=k[3]))
    params, static = eqx.partition(layers, eqx.is_array)

    def fn(params, x, t):
        conv, gru, mha, emb = eqx.combine(params, static)
        h = gru(conv(x).mean((1, 2)), jnp.zeros(5))
        e = jax.vmap(emb)(t)
        return h, mha(e, e, e)
    return fn, (params, f32(rng, 2, 5, 5), np.array([1, 2, 3], np.int32))


def optax_lion_adafactor_lamb(rng):
    import optax
    opts = (optax.chain(optax.clip_by_global_norm(1.0), optax.lion(1e-3)), optax.adafactor(1e-2), optax.lamb(1e-3))

    def fn(w, g):
        out = []
        for opt in opts:
            u, _ = opt.update(g, opt.init(w), w)
            out.append(optax.apply_updates(w, u))
        return out
    return fn, ({"a": f32(rng, 4, 3), "b": f32(rng, 3)}, {"a": f32(rng, 4, 3), "b": f32(rng, 3)})


def remat_switch_map_custom_derivatives(rng):
    @jax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    @softplus.defjvp
    def _(p, t):
        return softplus(p[0]), jax.nn.sigmoid(p[0]) * t[0]

    @jax.custom_vjp
    def g(x):
        return jnp.sin(x)
    g.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, ct: (c * ct * 2,))

    def body(x):
        return jnp.sin(x) * 2

    def fn(x, i):
        y = jax.checkpoint(body)(x)
        z = jax.lax.switch(i, [lambda v: v + 1, lambda v: v * 2, lambda v: -v], y)
        m = jax.lax.map(lambda r: r.sum(), x.reshape(2, 4))
        grad = jax.grad(lambda v: jax.checkpoint(body)(v).sum() + softplus(v).sum() + g(v).sum())(x)
        return z, m, grad, jax.jvp(softplus, (x,), (jnp.ones_like(x),))
    return fn, (f32(rng, 8), np.int32(1))


def scipy_special_incomplete(rng):
    import jax.scipy.special as sp

    def fn(x):
        a = jnp.abs(x) + 0.5
        return (sp.gammaln(a), sp.betaln(a, a + 1), sp.gammainc(a, a), sp.gammaincc(a, 1.0), sp.xlogy(a, a),
                sp.xlog1py(a, a), sp.logsumexp(x), sp.log_ndtr(x), sp.ndtri(jax.nn.sigmoid(x)), sp.i0e(x), sp.i1(x),
                sp.entr(a), sp.betainc(a, a, jax.nn.sigmoid(x)))
    return fn, (f32(rng, 6),)


def poly_causal_attention(rng):
    """Attention over symbolic batch and sequence sizes (b, n): einsum, a causal mask of n x n."""
    def fn(q, k):
        s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1])
        mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool))
        return jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1) @ k
    return fn, (f32(rng, 2, 5, 4), f32(rng, 2, 5, 4)), ["b, n, 4", "b, n, 4"]


def vmap_collectives_image_signal(rng):
    import jax.scipy.signal as sg

    def fn(x, img):
        y = jax.vmap(lambda r: r - jax.lax.pmean(r, "i"), axis_name="i")(x)
        z = jax.vmap(lambda r: jax.lax.pmax(r, "i"), axis_name="i")(x)
        r = jax.image.resize(img, (6, 6, 2), "lanczos3")
        s = jax.image.scale_and_translate(img, (5, 5, 2), (0, 1), jnp.array([1.2, 1.2]), jnp.array([0.3, -0.2]), "linear")
        return (y, z, r, s, sg.correlate2d(img[..., 0], img[..., 1], mode="same"), jnp.fft.rfft(x[0], norm="ortho"),
                jnp.fft.ihfft(x[1]), jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1))
    return fn, (f32(rng, 2, 8), f32(rng, 4, 4, 2))


def windows_and_scatter_modes(rng):
    def fn(x, i, u):
        a = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2), (1, 1), "SAME")
        b = jax.lax.reduce_window((x, x * 2), (0., 0.), lambda p, q: (p[0] + q[0], jnp.maximum(p[1], q[1])),
                                  (3, 1), (2, 1), [(1, 1), (0, 0)])
        c = jax.lax.reduce_window(x, 1., jax.lax.mul, (1, 3), (1, 1), "VALID", base_dilation=(2, 1), window_dilation=(1, 2))
        v = x[0]
        return (a, b, c, v.at[i].add(u, mode="drop"), v.at[i].min(u, mode="clip"),
                v.at[i].set(u, indices_are_sorted=True), jnp.take(v, i, mode="fill", fill_value=-7.))
    return fn, (f32(rng, 5, 6), np.array([0, 2, 4, 7], np.int32), f32(rng, 4))


PROGRAMS = {
    "random_samplers": random_samplers,
    "random_rbg": random_rbg,
    "lax_control_flow": lax_control_flow,
    "lax_associative_scan": lax_associative_scan,
    "lax_conv_dilated_grouped": lax_conv_dilated_grouped,
    "linen_pooling_norms": linen_pooling_norms,
    "sort_search": sort_search,
    "fft": fft,
    "complex_arith": complex_arith,
    "integer_bits": integer_bits,
    "narrow_floats": narrow_floats,
    "jax_nn_functions": jax_nn_functions,
    "einsum_and_dots": einsum_and_dots,
    "ragged_dot": ragged_dot,
    "nnx_train_step": nnx_train_step,
    "optax_optimizers": optax_optimizers,
    "eqx_attention_norm": eqx_attention_norm,
    "linalg_more": linalg_more,
    "linalg_eig": linalg_eig,
    "linalg_hessenberg_tridiagonal": linalg_hessenberg_tridiagonal,
    "linalg_schur": linalg_schur,
    "nnx_vmap_scan": nnx_vmap_scan,
    "linen_attention": linen_attention,
    "eqx_lstm_scan": eqx_lstm_scan,
    "dtype_zoo": dtype_zoo,
    "while_with_dynamic_update": while_with_dynamic_update,
    "scatter_gather": scatter_gather,
    "poly_vmap": poly_vmap,
    "poly_conv_pool": poly_conv_pool,
    "poly_reshape_argsort": poly_reshape_argsort,
    "image_resize": image_resize,
    "signal_convolve": signal_convolve,
    "unique_nonzero_histogram": unique_nonzero_histogram,
    "random_choice_dirichlet_beta": random_choice_dirichlet_beta,
    "dot_product_attention": dot_product_attention,
    "int8_matmul": int8_matmul,
    "scipy_stats": scipy_stats,
    "special_more": special_more,
    "fftn_3d": fftn_3d,
    "narrow_specials": narrow_specials,
    "approx_min_k_windows": approx_min_k_windows,
    "rng_uniform_legacy": rng_uniform_legacy,
    "complex_linalg": complex_linalg,
    "random_distributions": random_distributions,
    "linalg_lu_lstsq_complex": linalg_lu_lstsq_complex,
    "numeric_misc": numeric_misc,
    "sort_variants": sort_variants,
    "linen_convtranspose_groupnorm_embed": linen_convtranspose_groupnorm_embed,
    "eqx_conv_gru_mha_embedding": eqx_conv_gru_mha_embedding,
    "optax_lion_adafactor_lamb": optax_lion_adafactor_lamb,
    "remat_switch_map_custom_derivatives": remat_switch_map_custom_derivatives,
    "scipy_special_incomplete": scipy_special_incomplete,
    "poly_causal_attention": poly_causal_attention,
    "vmap_collectives_image_signal": vmap_collectives_image_signal,
    "windows_and_scatter_modes": windows_and_scatter_modes,
}


# ----------------------------------------------------------------------------- lowered text with CHLO ops

def lowered_layernorm_rmsnorm(rng):
    from flax import nnx

    class M(nnx.Module):
        def __init__(self, rngs):
            self.ln = nnx.LayerNorm(8, rngs=rngs)
            self.rms = nnx.RMSNorm(8, rngs=rngs)
            self.bn = nnx.BatchNorm(8, rngs=rngs)

        def __call__(self, x):
            return self.rms(self.ln(x)) + self.bn(x)
    return _nnx_apply(M(nnx.Rngs(0)), f32(rng, 4, 8))


def lowered_special(rng):
    from jax.scipy import special

    def fn(x, p, n):
        return (special.erf(x), special.erfc(x), special.erfinv(jnp.tanh(x)), special.gammaln(p),
                special.digamma(p), special.polygamma(n, p), special.zeta(p + 1.5, p),
                special.i1e(x), special.i0e(x), jax.lax.bessel_i1e(x), special.ndtri(jax.nn.sigmoid(x)),
                special.xlogy(p, p), special.gammainc(p, p + 0.5), special.betainc(p, p + 1, jax.nn.sigmoid(x)))
    return fn, (f32(rng, 12), np.abs(f32(rng, 12)) + 0.5, rng.integers(0, 4, 12).astype(np.int32))


def lowered_special_f64(rng):
    """f64 CHLO (with jax_enable_x64): erf/erfc/erf_inv/bessel_i1e take their f64
    approximations. Run under `jax.enable_x64(True)`."""
    from jax.scipy import special

    def fn(x, p):
        return (special.erf(x), special.erfc(x), special.erfinv(jnp.tanh(x)), special.i1e(x), special.gammaln(p),
                special.zeta(p + 1.5, p), special.polygamma(2, p))
    return fn, (rng.standard_normal(12), np.abs(rng.standard_normal(12)) + 0.5)


def lowered_complex_inverse(rng):
    def fn(z):
        return (jnp.arcsin(z), jnp.arccos(z), jnp.arcsinh(z), jnp.arccosh(z), jnp.arctan(z), jnp.arctanh(z),
                jnp.sinh(z), jnp.cosh(z), jnp.tan(z), jnp.square(z))
    return fn, ((f32(rng, 10) * 2 + 1j * f32(rng, 10) * 2).astype(np.complex64),)


def lowered_top_k_nextafter(rng):
    def fn(x, y):
        return jax.lax.top_k(x, 3), jnp.nextafter(x[0], y), jnp.isinf(x / 0.0), jnp.arctan(y), jnp.arctanh(y * 0.5)
    return fn, (f32(rng, 3, 6), f32(rng, 6))


def lowered_decoder(rng):
    from jax_ecosystem_programs import nnx_decoder
    return nnx_decoder(rng)


def lowered_qr_pivoting(rng):
    """jax.scipy.linalg.qr with column pivoting: @lapack_?geqp3_ffi, which jax.export does not
    write (no compatibility guarantee), so only as jit's text; real (batched by vmap) and
    complex."""
    def fn(a, z):
        r, p = jax.vmap(lambda m: jax.scipy.linalg.qr(m, pivoting=True, mode="r"))(a)
        q, rz, pz = jax.scipy.linalg.qr(z, pivoting=True, mode="economic")
        return r, p, jnp.abs(q @ rz - z[:, pz]).max() < 1e-4, pz
    z = (f32(rng, 6, 4) + 1j * f32(rng, 6, 4)).astype(np.complex64)
    return fn, (f32(rng, 3, 7, 5), z)


def lowered_svd_qr_algorithm(rng):
    """lax.linalg.svd with the QR algorithm: @lapack_?gesvd_ffi (jit's text only), values and
    a reconstruction (the vectors' signs are LAPACK's to choose), full and reduced."""
    def fn(a):
        s = jax.lax.linalg.svd(a, compute_uv=False, algorithm=jax.lax.linalg.SvdAlgorithm.QR)
        u, s2, vt = jax.lax.linalg.svd(a, full_matrices=False, algorithm=jax.lax.linalg.SvdAlgorithm.QR)
        uf, _, _ = jax.lax.linalg.svd(a, full_matrices=True, algorithm=jax.lax.linalg.SvdAlgorithm.QR)
        return (s, jnp.abs((u * s2[..., None, :]) @ vt - a).max() < 1e-4,
                jnp.abs(jnp.swapaxes(uf, -1, -2) @ uf - jnp.eye(7)).max() < 1e-5)
    return fn, (f32(rng, 2, 7, 5),)


LOWERED = {
    "lowered_layernorm_rmsnorm": lowered_layernorm_rmsnorm,
    "lowered_special": lowered_special,
    "lowered_complex_inverse": lowered_complex_inverse,
    "lowered_top_k_nextafter": lowered_top_k_nextafter,
    "lowered_decoder": lowered_decoder,
    "lowered_stats": scipy_stats,
    "lowered_special_more": special_more,
    "lowered_narrow_specials": narrow_specials,
    "lowered_qr_pivoting": lowered_qr_pivoting,
    "lowered_svd_qr_algorithm": lowered_svd_qr_algorithm,
}
