"""
小 transformer 这个模型：参数、带 KV 缓存的生成（采样和贪心解码）。

【思路】全部参数在一个字典 params 里（名字 → numpy 数组）；前向在 layers.forward。生成时一个位置一个位置地往前走，
    每个位置的 K、V 只算一次（KV 缓存）。权重的保存和读取（safetensors）在 pretraining.py：save_weights / load_weights。
"""

import math

import numpy as np

from .._checks import as_generator, as_int, as_real
from ..blas import one_blas_thread
from ..logits import log_softmax, softmax
from .layers import forward, layer_norm, mlp
from .text import END, END_ID, VOCAB, decode, encode


class TinyLM:
    """
    一个很小的 pre-LayerNorm 因果 transformer，逐字符读写算式。

    【思路】全部参数在一个字典 params 里（名字 → numpy 数组），初始化只用 numpy.random.default_rng(seed)。
        默认 2 层、d = 64、4 个头、MLP 宽 4d：约 10 万个参数。
        参数个数 = (2V + C)·d + L·(12d² + 9d) + 2d（V 个字、上下文 C、L 层）：两张 V × d 的表（嵌入、输出头）、
        C × d 的位置表；每层注意力 3d² + d²、MLP 4d² + 4d² 和两个偏置 4d + d、两个 LayerNorm 各 2d；最后的 LayerNorm 2d。
    【参数】d：宽度（能被 heads 整除）；heads：头数；layers：层数；context：上下文长度（最多几个位置）；
        seed：初始化的随机种子；dtype：np.float32（默认）或 np.float64（梯度检查用）
    【返回】TinyLM；.params、.n_params、.config
    【边界】d 不能被 heads 整除等，报中文的 ValueError。
    【例子】model = TinyLM(seed=0); model.n_params → 102,656（= 48·64 + 2·(12·64² + 9·64) + 2·64）；greedy(model, ["12+35="])
    【Python 小知识】字典保持插入顺序：保存、Adam、梯度检查都按同一个顺序遍历参数。
    """

    def __init__(self, d=64, heads=4, layers=2, context=16, seed=0, dtype=np.float32):
        self.d = as_int("d", d, low=1)
        self.heads = as_int("heads", heads, low=1)
        if self.d % self.heads:
            raise ValueError(f"d 必须能被 heads 整除（每个头的宽度 d / heads 要是整数），收到 d = {d}、heads = {heads}")
        self.layers = as_int("layers", layers, low=1)
        self.context = as_int("context", context, low=2)
        self.seed = as_int("seed", seed, low=0)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype 必须是 np.float32 或 np.float64，收到 {dtype!r}")
        rng = np.random.default_rng(self.seed)
        V, d, f = len(VOCAB), self.d, 4 * self.d
        out_std = 0.02 / math.sqrt(2 * self.layers)            # 残差分支的输出小一些（GPT-2 的做法）
        shapes = {"tok": ((V, d), 0.02), "pos": ((self.context, d), 0.02)}
        for i in range(self.layers):
            p = f"l{i}."
            shapes.update({p + "ln1.g": ((d,), None), p + "ln1.b": ((d,), 0), p + "attn.wqkv": ((d, 3 * d), 0.02),
                           p + "attn.wo": ((d, d), out_std), p + "ln2.g": ((d,), None), p + "ln2.b": ((d,), 0),
                           p + "mlp.w1": ((d, f), 0.02), p + "mlp.b1": ((f,), 0), p + "mlp.w2": ((f, d), out_std),
                           p + "mlp.b2": ((d,), 0)})
        shapes.update({"lnf.g": ((d,), None), "lnf.b": ((d,), 0), "head": ((d, V), 0.02)})
        self.params = {name: (np.ones(shape) if std is None else rng.normal(0.0, std, shape) if std else np.zeros(shape))
                       .astype(dtype) for name, (shape, std) in shapes.items()}

    @property
    def config(self):
        """构造参数 {d, heads, layers, context, seed}（保存用）。"""
        return {"d": self.d, "heads": self.heads, "layers": self.layers, "context": self.context, "seed": self.seed}

    @property
    def n_params(self):
        """参数个数。"""
        return sum(v.size for v in self.params.values())

    def copy(self):
        """一个参数相同、互不影响的副本。"""
        other = TinyLM(**self.config, dtype=self.params["tok"].dtype.type)
        other.params = {k: v.copy() for k, v in self.params.items()}
        return other

    def logits(self, idx):
        """(B, L) 字表下标 → (B, L, V) logits（不留反向用的缓存）。"""
        return forward(self.params, idx, self.layers, self.heads)[0]

    def __repr__(self):
        return (f"TinyLM(d={self.d}, heads={self.heads}, layers={self.layers}, context={self.context}, "
                f"参数 {self.n_params:,} 个)")


def check_model(model):
    """model 必须是 TinyLM。"""
    if not isinstance(model, TinyLM):
        raise TypeError(f"model 必须是 TinyLM，收到 {type(model).__name__}")


# =============================================================================
# 采样：KV 缓存，一次一个位置
# =============================================================================
def _step(params, model, tok, t, kcache, vcache):
    """位置 t 上的一步：只算新位置的 Q、K、V，K、V 存进缓存，注意力看缓存里的 0 … t。返回 logits (B, V)。"""
    B = tok.shape[0]
    H, dh = model.heads, model.d // model.heads
    x = params["tok"][tok] + params["pos"][t]
    for i in range(model.layers):
        p = f"l{i}."
        h = layer_norm(x, params[p + "ln1.g"], params[p + "ln1.b"])[0]
        q, k, v = (h @ params[p + "attn.wqkv"]).reshape(B, 3, H, dh).transpose(1, 0, 2, 3)
        kcache[i][:, :, t], vcache[i][:, :, t] = k, v
        a = softmax(np.einsum("bhd,bhtd->bht", q, kcache[i][:, :, :t + 1]) / np.asarray(math.sqrt(dh), x.dtype))
        x = x + np.einsum("bht,bhtd->bhd", a, vcache[i][:, :, :t + 1]).reshape(B, -1) @ params[p + "attn.wo"]
        h = layer_norm(x, params[p + "ln2.g"], params[p + "ln2.b"])[0]
        x = x + mlp(h, params[p + "mlp.w1"], params[p + "mlp.b1"], params[p + "mlp.w2"], params[p + "mlp.b2"])[0]
    return layer_norm(x, params["lnf.g"], params["lnf.b"])[0] @ params["head"]


@one_blas_thread
def generate(model, prompts, temperature=1.0, rng=None):
    """
    给每个 prompt 写一份解答（直到结束符或上下文用完），一批一起写。

    【思路】KV 缓存：每个位置只算一次 K、V。prompt 长短不一也没关系 —— 一个位置一个位置地往前走，
        还在 prompt 里的行照抄 prompt 的字，已经写完的行填结束符。temperature = 0 是贪心解码（每步取 argmax）。
    【参数】model：TinyLM；prompts：字符串列表；temperature：≥ 0；rng：numpy.random.Generator（temperature > 0 时必须给）
    【返回】list of str：每个 prompt 的解答（含结束符；上下文用完还没写完的没有结束符）
    【例子】generate(model, ["12+35="] * 4, 1.0, np.random.default_rng(0))
    """
    check_model(model)
    temperature = as_real("temperature（0 表示贪心解码）", temperature, low=0.0)
    if temperature > 0:
        as_generator("temperature > 0 时 rng", rng)
    if isinstance(prompts, (str, bytes)) or not isinstance(prompts, (list, tuple)) or not prompts:
        raise ValueError(f"prompts 必须是非空的字符串列表，例如 ['12+35=']，收到 {prompts!r}"[:300])
    ids = [encode(p, "prompts 里的 prompt") for p in prompts]
    plen = np.array([len(i) for i in ids])
    if plen.min() < 1 or plen.max() >= model.context:
        raise ValueError(f"prompts 里的 prompt 长度必须在 1 … {model.context - 1}（context − 1）之间，收到 {plen.max()}")
    B, C = len(ids), model.context
    dtype = model.params["tok"].dtype
    tokens = np.full((B, C), END_ID, dtype=np.int64)
    for row, i in zip(tokens, ids):
        row[:len(i)] = i
    H, dh = model.heads, model.d // model.heads
    kcache = [np.zeros((B, H, C, dh), dtype) for _ in range(model.layers)]
    vcache = [np.zeros((B, H, C, dh), dtype) for _ in range(model.layers)]
    done = np.zeros(B, bool)
    for t in range(C - 1):
        z = _step(model.params, model, tokens[:, t], t, kcache, vcache)
        writing = (t + 1 >= plen) & ~done
        if temperature == 0:
            nxt = z.argmax(-1)
        else:
            p = np.exp(log_softmax(z.astype(np.float64) / temperature))
            nxt = np.minimum((p.cumsum(-1) < rng.random((B, 1))).sum(-1), len(VOCAB) - 1)
        tokens[writing, t + 1] = nxt[writing]
        done |= writing & (nxt == END_ID)
        if done.all():
            break
    out = []
    for row, n in zip(tokens, plen):
        text = decode(row[n:])
        out.append(text[:text.index(END) + 1] if END in text else text)
    return out


def greedy(model, prompts):
    """贪心解码（temperature = 0）。【例子】greedy(model, ["12+35="]) → ["47$"]（训练好以后）"""
    return generate(model, prompts, 0.0)

