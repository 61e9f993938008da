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


PROGRAMS = {
    "mlp": mlp_program,
    "cnn": cnn_program,
    "attention": attention_program,
    "cumsum": cumsum_program,
    "scan": scan_program,
    "while": while_program,
}


def lower(fn, args) -> str:
    import jax
    return jax.jit(fn).lower(*args).as_text()
