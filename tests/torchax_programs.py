"""PyTorch programs exported to StableHLO through torchax (torch.export, then torchax's
`exported_program_to_jax`, then jax.export): inference of common torch.nn layers, functional
ops (fft, linalg, integer and bitwise ops, activations, special functions, losses, pooling
with indices, unfold/fold, grid_sample, indexing, complex, reductions), and training losses
differentiated by jax.grad. (torch.linalg.det, torch.angle and EmbeddingBag do not get through
torchax 0.0.13; median/quantile not through torch.export.) Each builder returns
(jax function, its arguments): the function takes the module's weights (a pytree of arrays)
and the inputs, as torchax hands them to jax. Used by tests/test_torchax.py and
bench/models_torch.py; needs torch and torchax (`pip install -e .[torch]`)."""
from __future__ import annotations

import numpy as np


def _torchax_function(model, args, target=None):
    """(fn, [weights, *inputs]) of torch `model` on the torch tensors `args`; with `target`
    (class indices), the gradient of the mean cross-entropy of the model's logits instead."""
    import jax
    import jax.numpy as jnp
    import torch
    import torchax.export

    exported = torch.export.export(model, tuple(args))
    weights, jfn = torchax.export.exported_program_to_jax(exported)
    weights = jax.tree_util.tree_map(lambda w: np.asarray(w.numpy() if hasattr(w, "numpy") else w),
                                     weights)
    inputs = [np.asarray(a.numpy()) for a in args]
    if target is None:
        def fn(w, *a):
            return jfn(w, a)
    else:
        tgt = jnp.asarray(target.numpy())

        def loss(w, *a):
            logits = jfn(w, a)
            logits = logits[0] if isinstance(logits, (list, tuple)) else logits
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), tgt[:, None], 1))
        fn = jax.grad(loss)
    return fn, [weights, *inputs]


def _modules():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Attn(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    class Xent(nn.Module):
        def forward(self, x, y):
            return F.cross_entropy(x, y)

    class SortTopK(nn.Module):
        def forward(self, x):
            s, i = torch.sort(x, dim=-1)
            t = torch.topk(x, 3, dim=-1)
            return (s, i, t.values, t.indices, torch.cumsum(x, -1), torch.argmax(x, -1),
                    torch.logsumexp(x, -1))

    class Pools(nn.Module):
        def forward(self, x):
            return (F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 1),
                    F.interpolate(x, scale_factor=2, mode="nearest"))

    class Ops(nn.Module):
        def forward(self, x, y):
            return (torch.where(x > 0, x, y).softmax(-1), torch.einsum("ij,jk->ik", x, y.T),
                    x.norm(dim=-1), torch.clamp(x, -0.5, 0.5).tanh())

    class RnnUnrolled(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.RNNCell(8, 16)

        def forward(self, xs):
            h = torch.zeros(xs.shape[1], 16)
            outs = []
            for t in range(xs.shape[0]):
                h = self.cell(xs[t], h)
                outs.append(h)
            return torch.stack(outs)

    class Up(nn.Module):
        def forward(self, x):
            return (F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
                    F.pixel_shuffle(x[:, :4], 2))

    class Dist(nn.Module):
        def forward(self, a, b):
            return (torch.cdist(a, b).min(-1).values, F.normalize(a, dim=-1),
                    F.cosine_similarity(a[:, None], b[None], dim=-1))

    class Resid(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(8)

        def forward(self, x):
            return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))

    class Scans(nn.Module):
        def forward(self, x):
            return (torch.cumprod(x, 0), torch.cummax(x, 0).values, torch.flip(x, [0]),
                    torch.tril(x), torch.roll(x, 3, 0))

    class GatherScatter(nn.Module):
        def forward(self, x, idx):
            return (torch.gather(x, 1, idx), x[idx[:, 0]], torch.index_select(x, 0, idx[:, 1]),
                    x.scatter_add(1, idx, torch.ones_like(idx, dtype=x.dtype)))

    class Fn(nn.Module):
        """A module computing `f` of its inputs."""
        def __init__(self, f):
            super().__init__()
            self.f = f

        def forward(self, *a):
            return self.f(*a)

    class LstmUnrolled(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.LSTMCell(6, 10)

        def forward(self, xs):
            h = torch.zeros(xs.shape[1], 10)
            c = torch.zeros(xs.shape[1], 10)
            for t in range(xs.shape[0]):
                h, c = self.cell(xs[t], (h, c))
            return h, c

    def spd(a):
        return a @ a.T + 4 * torch.eye(a.shape[0])

    r = torch.randn
    more = {
        "fft": lambda: (Fn(lambda x: (torch.fft.rfft(x).abs(), torch.fft.fft(x.to(torch.complex64)).real,
                                      torch.fft.irfft(torch.fft.rfft(x), n=16))), (r(4, 16),)),
        "linalg": lambda: (Fn(lambda a, b: (torch.linalg.solve(spd(a), b), torch.linalg.inv(spd(a)),
                                            torch.linalg.cholesky(spd(a)), torch.linalg.qr(a).R,
                                            torch.linalg.eigh(a + a.T).eigenvalues)), (r(5, 5), r(5, 3))),
        "svd": lambda: (Fn(lambda a: torch.linalg.svd(a, full_matrices=False).S), (r(6, 4),)),
        "integer_ops": lambda: (Fn(lambda a, b: (torch.floor_divide(a, b), torch.remainder(a, b),
                                                 torch.fmod(a, b), a & b, a | b, a ^ b, a << 2, a >> 1,
                                                 torch.bitwise_not(a))),
                                (torch.randint(-50, 50, (20,)), torch.randint(1, 7, (20,)))),
        "activations": lambda: (Fn(lambda x: (F.hardswish(x), F.mish(x), F.silu(x), F.elu(x), F.selu(x),
                                              F.leaky_relu(x, 0.1), F.gelu(x, approximate="tanh"),
                                              F.softsign(x), F.hardtanh(x), F.logsigmoid(x),
                                              F.glu(x, -1))), (r(8, 12),)),
        "special_functions": lambda: (Fn(lambda x: (torch.erfinv(torch.tanh(x) * 0.9),
                                                    torch.lgamma(x.abs() + 0.1),
                                                    torch.digamma(x.abs() + 0.5), torch.special.erfc(x),
                                                    torch.special.i0(x), torch.nan_to_num(torch.log(x)),
                                                    torch.special.expit(x))), (r(50),)),
        "losses": lambda: (Fn(lambda x, y, t: (F.nll_loss(F.log_softmax(x, -1), t, ignore_index=2),
                                               F.smooth_l1_loss(x, y),
                                               F.kl_div(F.log_softmax(x, -1), F.softmax(y, -1),
                                                        reduction="batchmean"),
                                               F.binary_cross_entropy_with_logits(x, torch.sigmoid(y)),
                                               F.huber_loss(x, y), F.mse_loss(x, y))),
                           (r(16, 5), r(16, 5), torch.randint(0, 5, (16,)))),
        "maxpool_indices": lambda: (Fn(lambda x: F.max_pool2d(x, 2, return_indices=True)), (r(1, 2, 8, 8),)),
        "unfold_fold": lambda: (Fn(lambda x: (F.unfold(x, 3, padding=1),
                                              F.fold(F.unfold(x, 2, stride=2), (8, 8), 2, stride=2))),
                                (r(2, 3, 8, 8),)),
        "grid_sample": lambda: (Fn(lambda x, g: F.grid_sample(x, g, align_corners=False)),
                                (r(1, 2, 6, 6), torch.rand(1, 4, 4, 2) * 2 - 1)),
        "indexing_misc": lambda: (Fn(lambda x, i: (F.one_hot(i, 10), torch.argsort(x, -1, descending=True),
                                                   torch.bucketize(x, torch.linspace(-2, 2, 9)),
                                                   torch.searchsorted(torch.linspace(-2, 2, 9), x),
                                                   torch.diff(x, dim=-1), x.masked_fill(x > 0.5, -1.0),
                                                   torch.repeat_interleave(x, 2, dim=0),
                                                   torch.kron(x[:2, :2], x[:2, :2]))),
                                  (r(6, 10), torch.randint(0, 10, (7,)))),
        "transformer_decoder_layer": lambda: (nn.TransformerDecoderLayer(16, 2, 32, batch_first=True,
                                                                         dropout=0.0).eval(),
                                              (r(2, 5, 16), r(2, 7, 16))),
        "lstm_cell_unrolled": lambda: (LstmUnrolled(), (r(8, 3, 6),)),
        "instancenorm_prelu": lambda: (nn.Sequential(nn.Conv2d(2, 4, 3), nn.InstanceNorm2d(4, affine=True),
                                                     nn.PReLU(4), nn.Dropout(0.5)).eval(), (r(2, 2, 9, 9),)),
        "complex": lambda: (Fn(lambda x, y: (torch.view_as_real(torch.complex(x, y) * torch.complex(y, x)),
                                             torch.abs(torch.complex(x, y)))), (r(10), r(10))),
        "reductions": lambda: (Fn(lambda x: (x.std(0), x.var(1, unbiased=False), x.prod(1), x.amax((0, 1)),
                                             x.cumsum(0).flip(0), torch.norm(x, p=1), (x > 0).all(1),
                                             (x > 0).any(0))), (r(7, 9),)),
    }
    return more | {
        "mlp": lambda: (nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)), (r(8, 64),)),
        "cnn": lambda: (nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Flatten(), nn.Linear(8 * 8 * 8, 10)), (r(4, 3, 16, 16),)),
        "batchnorm_eval": lambda: (nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.GELU()).eval(),
                                   (r(2, 3, 12, 12),)),
        "transformer_layer": lambda: (nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0).eval(),
                                      (r(2, 10, 32),)),
        "embedding_layernorm": lambda: (nn.Sequential(nn.Embedding(100, 32), nn.LayerNorm(32)),
                                        (torch.randint(0, 100, (4, 12)),)),
        "sdpa_causal": lambda: (Attn(), (r(2, 4, 16, 8), r(2, 4, 16, 8), r(2, 4, 16, 8))),
        "cross_entropy": lambda: (Xent(), (r(32, 10), torch.randint(0, 10, (32,)))),
        "sort_topk_cumsum": lambda: (SortTopK(), (r(16, 50),)),
        "conv_transpose": lambda: (nn.ConvTranspose2d(4, 2, 3, stride=2), (r(1, 4, 8, 8),)),
        "pools_interpolate": lambda: (Pools(), (r(2, 3, 8, 8),)),
        "elementwise_ops": lambda: (Ops(), (r(6, 7), r(6, 7))),
        "rnn_cell_unrolled": lambda: (RnnUnrolled(), (r(12, 3, 8),)),
        "multihead_attention": lambda: (nn.MultiheadAttention(32, 4, batch_first=True).eval(),
                                        (r(2, 10, 32), r(2, 10, 32), r(2, 10, 32))),
        "groupnorm_conv1d": lambda: (nn.Sequential(nn.Conv1d(8, 16, 5, padding=2), nn.GroupNorm(4, 16),
                                                   nn.Softplus(), nn.Conv1d(16, 4, 3)), (r(3, 8, 40),)),
        "upsample_pixel_shuffle": lambda: (Up(), (r(2, 4, 8, 8),)),
        "cdist_normalize": lambda: (Dist(), (r(30, 8), r(20, 8))),
        "resblock_eval": lambda: (Resid().eval(), (r(2, 8, 16, 16),)),
        "cumulative_flip_roll": lambda: (Scans(), (torch.rand(64, 16) + 0.5,)),
        "gather_scatter_add": lambda: (GatherScatter(), (r(16, 10), torch.randint(0, 10, (16, 3)))),
    }


def _grad_modules():
    import torch
    import torch.nn as nn
    return {
        "mlp_grad": lambda: (nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 10)),
                             (torch.randn(16, 32),), torch.randint(0, 10, (16,))),
        "cnn_grad": lambda: (nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                                           nn.Flatten(), nn.Linear(8 * 4 * 4, 5)),
                             (torch.randn(4, 3, 8, 8),), torch.randint(0, 5, (4,))),
    }


NAMES = ("mlp", "cnn", "batchnorm_eval", "transformer_layer", "embedding_layernorm", "sdpa_causal",
         "cross_entropy", "sort_topk_cumsum", "conv_transpose", "pools_interpolate",
         "elementwise_ops", "rnn_cell_unrolled", "multihead_attention", "groupnorm_conv1d",
         "upsample_pixel_shuffle", "cdist_normalize", "resblock_eval", "cumulative_flip_roll",
         "gather_scatter_add", "fft", "linalg", "svd", "integer_ops", "activations",
         "special_functions", "losses", "maxpool_indices", "unfold_fold", "grid_sample",
         "indexing_misc", "transformer_decoder_layer", "lstm_cell_unrolled", "instancenorm_prelu",
         "complex", "reductions", "mlp_grad", "cnn_grad")


def build(name, seed=0):
    """(jax function, arguments) of program `name` (torch's generator seeded with `seed`)."""
    import torch
    torch.manual_seed(seed)
    grads = _grad_modules()
    if name in grads:
        model, args, target = grads[name]()
        return _torchax_function(model, args, target)
    model, args = _modules()[name]()
    return _torchax_function(model, args)
