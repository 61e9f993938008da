"""Model-scale programs written with jax, shared by bench_models.py. Each entry is
(name, function, example arguments); `lower(fn, args)` gives its StableHLO text."""
from __future__ import annotations

import numpy as np


def _rng(seed=0):
    return np.random.default_rng(seed)


def mlp_program(batch=64, sizes=(256, 512, 512, 10)):
    import jax
    import jax.numpy as jnp
    r = _rng(1)
    ws = [(r.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
    bs = [r.standard_normal(b).astype(np.float32) * 0.1 for b in sizes[1:]]
    x = r.standard_normal((batch, sizes[0])).astype(np.float32)

    def mlp(x, *params):
        n = len(params) // 2
        h = x
        for i in range(n):
            h = h @ params[i] + params[n + i]
            if i < n - 1:
                h = jax.nn.relu(h)
        return jax.nn.log_softmax(h, axis=-1)
    del jnp
    return "mlp", mlp, [x, *ws, *bs]


def cnn_program(batch=8, hw=32, cin=3, c1=16, c2=32, classes=10):
    import jax
    import jax.numpy as jnp
    from jax import lax
    r = _rng(2)
    x = r.standard_normal((batch, hw, hw, cin)).astype(np.float32)
    k1 = (r.standard_normal((3, 3, cin, c1)) * 0.3).astype(np.float32)
    k2 = (r.standard_normal((3, 3, c1, c2)) * 0.1).astype(np.float32)
    w = (r.standard_normal(((hw // 4) ** 2 * c2, classes)) * 0.02).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def cnn(x, k1, k2, w):
        h = lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn)
        h = jax.nn.relu(h)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax.conv_general_dilated(h, k2, (1, 1), "SAME", dimension_numbers=dn)
        h = jax.nn.relu(h)
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        return h.reshape(h.shape[0], -1) @ w
    return "cnn", cnn, [x, k1, k2, w]


def attention_program(seq=128, d_model=128, heads=4):
    import jax
    import jax.numpy as jnp
    r = _rng(3)
    x = r.standard_normal((seq, d_model)).astype(np.float32)
    wq, wk, wv, wo = [(r.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(np.float32)
                      for _ in range(4)]
    gamma = np.ones(d_model, np.float32)
    beta = np.zeros(d_model, np.float32)

    def attention(x, wq, wk, wv, wo, gamma, beta):
        dh = d_model // heads

        def split(t):
            return t.reshape(seq, heads, dh).transpose(1, 0, 2)
        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        s = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(dh).astype(np.float32)
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        s = jnp.where(mask, s, -1e9)
        p = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("hqk,hkd->hqd", p, v).transpose(1, 0, 2).reshape(seq, d_model)
        y = x + o @ wo
        mu = y.mean(-1, keepdims=True)
        var = ((y - mu) ** 2).mean(-1, keepdims=True)
        return (y - mu) / jnp.sqrt(var + 1e-5) * gamma + beta
    return "attention", attention, [x, wq, wk, wv, wo, gamma, beta]


def cumsum_program(n=2048):
    from jax import lax
    x = _rng(4).standard_normal(n).astype(np.float32)

    def cumsum(x):
        # spelled as upstream's testdata spells it (and as jax lowers cumsum on TPU): a
        # reduce_window whose window covers the whole prefix
        return lax.reduce_window(x, 0.0, lax.add, (n,), (1,), [(n - 1, 0)])
    return "cumsum_reduce_window", cumsum, [x]


def scan_program(steps=200, d=64):
    import jax
    import jax.numpy as jnp
    r = _rng(5)
    xs = r.standard_normal((steps, d)).astype(np.float32)
    w = (r.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    u = (r.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    h0 = np.zeros(d, np.float32)

    def rnn(xs, w, u, h0):
        def step(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, h.sum()
        return jax.lax.scan(step, h0, xs)
    return "scan_rnn", rnn, [xs, w, u, h0]


def while_program(n=1000):
    import jax
    import jax.numpy as jnp

    def collatz_steps(x):
        def cond(s):
            return jnp.any(s[0] != 1) & (s[2] < n)

        def body(s):
            v, c, i = s
            nxt = jnp.where(v % 2 == 0, v // 2, 3 * v + 1)
            nxt = jnp.where(v == 1, 1, nxt)
            return nxt, c + (v != 1), i + 1
        return jax.lax.while_loop(cond, body, (x, jnp.zeros_like(x), 0))[1]
    x = np.arange(1, 257, dtype=np.int32)
    return "while_collatz", collatz_steps, [x]


def fori_program(n=1000):
    import jax
    import jax.numpy as jnp

    def fori(x):
        def body(i, acc):
            a, b = acc
            a = a * jnp.float32(0.999) + jnp.sin(b)
            b = jnp.where(i % 3 == 0, b + 1.0, b * 0.5)
            return a, b
        return jax.lax.fori_loop(0, n, body, (x, x))
    return "fori_scalar", fori, [np.float32(0.25)]


def top_k_program(rows=64, cols=4096, k=16):
    import jax
    x = _rng(6).standard_normal((rows, cols)).astype(np.float32)
    return "top_k", lambda x: jax.lax.top_k(x, k), [x]


def sort_program(rows=32, cols=2048):
    import jax
    import jax.numpy as jnp
    r = _rng(7)
    x = r.standard_normal((rows, cols)).astype(np.float32)
    y = r.integers(0, 50, (rows, cols)).astype(np.int32)

    def sort_ops(x, y):
        a = jnp.sort(x, axis=-1)
        i = jnp.argsort(x, axis=-1)
        k1, k2 = jax.lax.sort((y, x), num_keys=2)
        return a, i, k1, k2
    return "sort_ops", sort_ops, [x, y]


def cumulative_program(rows=128, cols=1024):
    import jax.numpy as jnp
    from jax import lax
    x = (_rng(8).standard_normal((rows, cols)) * 0.01 + 1).astype(np.float32)

    def cumulative(x):
        return jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=1), lax.cummax(x, axis=1)
    return "cumulative", cumulative, [x]


def random_program(n=4096):
    import jax

    def sample(key):
        k1, k2, k3 = jax.random.split(jax.random.wrap_key_data(key), 3)
        return (jax.random.normal(k1, (n,)), jax.random.uniform(k2, (n, 4)),
                jax.random.bernoulli(k3, 0.3, (n,)))
    return "random_threefry", sample, [np.array([0, 42], np.uint32)]


def loop_update_program(n=200, size=512):
    import jax
    import jax.numpy as jnp
    r = _rng(9)
    data = r.standard_normal(size).astype(np.float32)
    seg = r.integers(0, 16, size).astype(np.int32)

    def loop_update(data, seg):
        def body(i, acc):
            buf, sums = acc
            row = jnp.sin(data[:8] * i.astype(jnp.float32))
            buf = jax.lax.dynamic_update_slice(buf, row, (i * 8 % (size - 8),))
            sums = sums + jax.ops.segment_sum(buf, seg, num_segments=16)
            return buf, sums
        return jax.lax.fori_loop(0, n, body, (jnp.zeros(size, jnp.float32), jnp.zeros(16, jnp.float32)))
    return "loop_dus_segment_sum", loop_update, [data, seg]


def lstm_program(steps=64, d=32, batch=8):
    import jax
    import jax.numpy as jnp
    r = _rng(10)
    xs = r.standard_normal((steps, batch, d)).astype(np.float32)
    w = (r.standard_normal((2 * d, 4 * d)) / np.sqrt(2 * d)).astype(np.float32)

    def lstm(xs, w):
        def cell(carry, x):
            h, c = carry
            z = jnp.concatenate([x, h], -1) @ w
            i, f, g, o = jnp.split(z, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h
        zeros = jnp.zeros((batch, d), jnp.float32)
        return jax.lax.scan(cell, (zeros, zeros), xs)[1]
    return "lstm_scan", lstm, [xs, w]


def linalg_program(n=32):
    import jax.numpy as jnp
    r = _rng(11)
    a = (r.standard_normal((n, n)) + n * np.eye(n)).astype(np.float32)
    b = r.standard_normal((n, 4)).astype(np.float32)

    def linalg(a, b):
        return jnp.linalg.solve(a, b), jnp.linalg.inv(a), jnp.linalg.det(a)
    return "linalg_solve_inv_det", linalg, [a, b]


def mlp_grad_program(batch=64, sizes=(128, 256, 10)):
    import jax
    _, mlp, params = mlp_program(batch, sizes)
    x, *ws = params
    labels = np.zeros((batch, sizes[-1]), np.float32)
    labels[np.arange(batch), np.arange(batch) % sizes[-1]] = 1

    def loss(ws, x, labels):
        return -(mlp(x, *ws) * labels).sum() / batch

    def grad(x, labels, *ws):
        return jax.grad(loss)(list(ws), x, labels)
    return "mlp_grad", grad, [x, labels, *ws]


def flax_optax_program(batch=32):
    """A flax MLP trained one step with optax's adam (skipped without flax/optax)."""
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(128)(x))
            x = nn.LayerNorm()(x)
            return nn.Dense(10)(x)
    model = MLP()
    x = _rng(12).standard_normal((batch, 64)).astype(np.float32)
    y = (np.arange(batch) % 10).astype(np.int32)
    params = model.init(jax.random.PRNGKey(0), jnp.asarray(x))
    tx = optax.adam(1e-3)
    state = tx.init(params)
    leaves, treedef = jax.tree_util.tree_flatten((params, state))

    def step(x, y, *leaves):
        params, state = jax.tree_util.tree_unflatten(treedef, leaves)

        def loss(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        g = jax.grad(loss)(params)
        updates, state = tx.update(g, state, params)
        return jax.tree_util.tree_leaves((optax.apply_updates(params, updates), state))
    return "flax_optax_adam_step", step, [x, y, *[np.asarray(v) for v in leaves]]


def flax_scan_program(steps=32, d=32, batch=4):
    """flax's nn.scan over an LSTM cell (skipped without flax)."""
    import jax
    import jax.numpy as jnp
    import flax.linen as nn

    class Scanned(nn.Module):
        @nn.compact
        def __call__(self, carry, xs):
            cell = nn.scan(nn.OptimizedLSTMCell, variable_broadcast="params",
                           split_rngs={"params": False}, in_axes=1, out_axes=1)(d)
            return cell(carry, xs)
    model = Scanned()
    xs = _rng(13).standard_normal((batch, steps, d)).astype(np.float32)
    carry = (jnp.zeros((batch, d)), jnp.zeros((batch, d)))
    params = model.init(jax.random.PRNGKey(1), carry, jnp.asarray(xs))
    leaves, treedef = jax.tree_util.tree_flatten(params)

    def run(xs, *leaves):
        p = jax.tree_util.tree_unflatten(treedef, leaves)
        z = jnp.zeros((batch, d), jnp.float32)
        return model.apply(p, (z, z), xs)[1]
    return "flax_nn_scan_lstm", run, [xs, *[np.asarray(v) for v in leaves]]


def equinox_program(batch=32):
    """An equinox MLP's gradient (skipped without equinox)."""
    import jax
    import equinox as eqx
    model = eqx.nn.MLP(64, 10, 128, 2, key=jax.random.PRNGKey(2))
    params, static = eqx.partition(model, eqx.is_array)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    x = _rng(14).standard_normal((batch, 64)).astype(np.float32)

    def grad(x, *leaves):
        p = jax.tree_util.tree_unflatten(treedef, leaves)

        def loss(p):
            m = eqx.combine(p, static)
            return (jax.vmap(m)(x) ** 2).mean()
        return jax.tree_util.tree_leaves(jax.grad(loss)(p))
    return "equinox_mlp_grad", grad, [x, *[np.asarray(v) for v in leaves]]


PROGRAMS = {
    "mlp": mlp_program,
    "cnn": cnn_program,
    "attention": attention_program,
    "cumsum": cumsum_program,
    "scan": scan_program,
    "while": while_program,
    "fori": fori_program,
    "top_k": top_k_program,
    "sort": sort_program,
    "cumulative": cumulative_program,
    "random": random_program,
    "loop_update": loop_update_program,
    "lstm": lstm_program,
    "linalg": linalg_program,
    "mlp_grad": mlp_grad_program,
    "flax_optax": flax_optax_program,
    "flax_scan": flax_scan_program,
    "equinox": equinox_program,
}

# programs that need packages beyond jax: skipped (with a message) when these are absent
NEEDS = {"flax_optax": ("flax", "optax"), "flax_scan": ("flax",), "equinox": ("equinox",)}


def missing_packages(key, needs=None):
    import importlib.util
    return [m for m in (NEEDS if needs is None else needs).get(key, ())
            if importlib.util.find_spec(m) is None]


def lower(fn, args) -> str:
    import jax
    return jax.jit(fn, keep_unused=True).lower(*args).as_text()
