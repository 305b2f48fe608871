"""
一个很小的 numpy transformer：从玩具到真网络（第 6 讲 §10.3「从玩具到真网络」，notebook 08）。

【思路】玩具模型只有 12 × 3 个参数，每个量都能精确算出。这里换成一个真正的语言模型：
        2 层、d = 64、4 个头、ReLU MLP 的 pre-LayerNorm 因果 transformer（约 10 万个参数），
        逐字符读写算式，例如 "12+35=" → "47$"（$ 是结束符）。
    前向、手写的反向（每个导数就写在它的前向旁边）、Adam、带温度的采样（KV 缓存）、贪心解码都在这里，
    只用 numpy，float32。训练先 SFT（teacher forcing），再 RL：优势、裁剪的替代损失、聚合、KL、熵
    全部调用 toyllm.rl.losses 里的函数 —— 和玩具用的是同一批函数。它们给出"损失对每个 token 的 log 概率的导数"
    s_{i,t} = ∂loss/∂log π(o_t | o_<t)，网络的反向从这里开始：∂loss/∂z = s · (onehot(o_t) − π) / T。
    记号（第 6 讲）：x 是残差流，LN 是层归一化，Q、K、V 是查询、键、值，P 是注意力概率，z 是输出 logits。
【边界】字表之外的字符、d 不能被头数整除、空数据、放不进上下文的题，都在入口报中文的 ValueError。
"""

import functools
import math
import re
import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ._checks import as_int, as_real
from .arithmetic import CONTEXT_NAMES, CONTEXTS, Problem, apply_op, bug_bites, step_hardness
from .checkpoint import CheckpointError, read_checkpoint, save_history
from .display import Table
from .estimators import pass_at_k
from .history import History
from .problems import check_problems
from .rl import losses
from .rl.config import PRESETS, resolve_config
from .toy_llm import ToyLLM, softmax

END = "$"
"""结束符：模型写出它就表示答完了（也用来填充）。"""
VOCAB = "0123456789+-*=;" + END
"""字表：数字、三种运算、等号、分隔中间结果的分号，和结束符。"""
_ID = {ch: i for i, ch in enumerate(VOCAB)}
END_ID = _ID[END]
OP_CHARS = {"add": "+", "sub": "-", "mul": "*"}
"""玩具题目的运算在文字里的写法（只用 ASCII，字表小一些）。"""
FORMAT, FORMAT_VERSION = "toyllm-tinylm", 1
TINY_DEFAULTS = {"lr": 3e-4, "batch_problems": 16, "optimizer": "adam", "iterations": 200}
"""小 transformer 上 RL 的默认值（其余选项沿用预设）：玩具的 lr = 2、SGD 对神经网络太大了。"""


# =============================================================================
# 题目写成文字
# =============================================================================
@dataclass(frozen=True)
class Example:
    """
    一道题的文字：prompt（题面，以 "=" 结尾）、target（标准解答，以结束符结尾）、answer（正确的最终答案，int）、
    reversed_digits（文字里的数是不是"补零、个位在前"的写法，见 write_number）。

    【例子】Example("12+35=", "47$", 47)；
        多步题（problem_example）："7300*2100+8540=" → "4440;2090$"，answer = 902，reversed_digits = True
    """
    prompt: str
    target: str
    answer: int
    reversed_digits: bool = False

    def is_correct(self, completion):
        """模型写出的解答 completion 的最终答案是不是 answer（没写完、不是数都算错）。"""
        return answer_of(completion, self.reversed_digits) == self.answer


def addition_examples(n, seed=0, digits=2, exclude=()):
    """
    n 道不重复的 digits 位数加法题（例如 12+35=47），数按平常的写法。

    【参数】n：题数（1 … 所有可能的题数）；seed：numpy 随机种子；digits：1 … 3；exclude：不要出的题（Example 的列表）
    【返回】list of Example
    【例子】train = addition_examples(2000, seed=0); test = addition_examples(500, seed=1, exclude=train)
    """
    digits = as_int("digits", digits, 1, 3)
    lo, hi = 10 ** (digits - 1), 10 ** digits
    pool = [(a, b) for a in range(lo, hi) for b in range(lo, hi)]
    taken = {e.prompt for e in exclude}
    pool = [(a, b) for a, b in pool if f"{a}+{b}=" not in taken]
    n = as_int("n", n, 1, len(pool))
    order = np.random.default_rng(as_int("seed", seed, low=0)).permutation(len(pool))[:n]
    return [Example(f"{a}+{b}=", f"{a + b}{END}", a + b) for a, b in (pool[i] for i in order)]


WIDTH = 4
"""多步题里每个数写成几位（玩具的数都在 0 … 9999 之间，见 arithmetic.MAX_VALUE）。"""


def write_number(n, reversed_digits=True):
    """
    一个数写成文字。reversed_digits=True（多步题用的写法）：补零到 WIDTH 位，再倒过来，个位在前。

    【思路】网络从左往右一个字一个字地写。平常的写法先写最高位，可最高位要等所有低位的进位算完才知道；
        个位在前时，写每一位的时候，它需要的进位刚刚写过。补零到同样的位数，第 i 位总在同一个位置上，
        网络不必先数一个数有几位，才能对齐。两样合起来，网络学得快得多（tools/bench_tinylm.py --cot 量了两种写法）。
    【参数】n：0 … 10^WIDTH − 1 的整数；reversed_digits：False 时就是 str(n)
    【例子】write_number(37) → "7300"；write_number(902) → "2090"；write_number(902, False) → "902"
    """
    n = as_int("n", n, 0, 10 ** WIDTH - 1)
    return str(n).zfill(WIDTH)[::-1] if reversed_digits else str(n)


def read_number(text, reversed_digits=True):
    """write_number 的反面：文字 → int；不是一串数字（空的、有别的字符）时返回 None。【例子】read_number("2090") → 902"""
    if not isinstance(text, str):
        raise TypeError(f"text 必须是字符串，收到 {type(text).__name__}")
    if not re.fullmatch(r"\d+", text):
        return None
    return int(text[::-1] if reversed_digits else text)


def problem_example(problem, reversed_digits=True):
    """
    玩具的多步题写成文字，解答是一条思维链：每一步之后的值，用分号隔开。

    【参数】problem：toyllm.arithmetic.Problem；reversed_digits：True（默认，网络用的写法）时每个数补零到 4 位、
        个位在前（见 write_number）；False 时是人读的写法
    【例子】Problem(37, (Step("mul", 12), Step("add", 458)), 902)
            → Example("7300*2100+8540=", "4440;2090$", 902, True)
            reversed_digits=False → Example("37*12+458=", "444;902$", 902)
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem 必须是 toyllm.arithmetic.Problem，收到 {type(problem).__name__}")
    if not isinstance(reversed_digits, bool):
        raise TypeError(f"reversed_digits 必须是 True 或 False，收到 {reversed_digits!r}")

    def w(n):
        return write_number(n, reversed_digits)

    prompt = w(problem.start) + "".join(f"{OP_CHARS[s.op]}{w(s.operand)}" for s in problem.steps) + "="
    return Example(prompt, ";".join(map(w, problem.correct_values())) + END, problem.answer, reversed_digits)


def step_values(completion, reversed_digits=False):
    """
    解答文字里每一步的值：结束符之前按分号切开，每一段读成 int（不是数的段是 None）。

    【例子】step_values("4440;2090$", True) → [444, 902]；step_values("444;9x", False) → [444, None]
    """
    if not isinstance(completion, str):
        raise TypeError(f"completion 必须是字符串，收到 {type(completion).__name__}")
    body = completion[:completion.index(END)] if END in completion else completion
    return [read_number(part, reversed_digits) for part in body.split(";")]


def answer_of(completion, reversed_digits=False):
    """
    解答文字里的最终答案：最后一个分号之后、结束符之前的整数。

    【参数】completion：模型写出的解答（str）；reversed_digits：数是不是个位在前的写法（Example.reversed_digits）
    【返回】int；没有结束符、或那一段不是整数时返回 None（奖励记为做错）
    【例子】answer_of("444;902$") → 902；answer_of("4440;2090$", True) → 902；answer_of("47") → None（没写完）
    """
    if not isinstance(completion, str):
        raise TypeError(f"completion 必须是字符串，收到 {type(completion).__name__}")
    if END not in completion:
        return None
    return step_values(completion, reversed_digits)[-1]


def encode(text, name="text"):
    """
    文字 → 字表下标。

    【参数】text：字符串；name：报错时用的参数名
    【返回】int64 数组
    【边界】字表之外的字符（例如空格、"×"）报 ValueError，指出是哪个字符、在第几位，并列出字表。
    【例子】encode("12+") → [1, 2, 10]
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} 必须是字符串，收到 {type(text).__name__}")
    bad = [(i, ch) for i, ch in enumerate(text) if ch not in _ID]
    if bad:
        i, ch = bad[0]
        raise ValueError(f"{name} = {text!r} 的第 {i} 个字符 {ch!r} 不在字表里；字表是 {VOCAB!r}")
    return np.array([_ID[ch] for ch in text], dtype=np.int64)


def decode(ids):
    """字表下标 → 文字。"""
    return "".join(VOCAB[int(i)] for i in ids)


def one_blas_thread(fn):
    """
    让 fn 运行时 BLAS 只用一个线程（threadpoolctl）。

    【思路】这里的矩阵很小（64 × 256）：多线程的开销比计算还大，几个进程抢 2 个核时一步会慢 6 倍；
        单线程时矩阵乘法的求和顺序也固定，同一个种子每次得到逐位相同的结果。
    【Python 小知识】functools.wraps 让包过的函数保留原来的名字和文档。
    """
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with threadpool_limits(1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapped


def _check_examples(name, examples, context):
    if isinstance(examples, Example):
        examples = [examples]
    if isinstance(examples, (str, bytes)) or not hasattr(examples, "__iter__"):
        raise TypeError(f"{name} 必须是 Example 的列表（例如 addition_examples(2000)），收到 {examples!r}"[:300])
    examples = list(examples)
    if not examples:
        raise ValueError(f"{name} 不能是空的：至少要一道题（Example 的列表），收到 []")
    for e in examples:
        if not isinstance(e, Example):
            raise TypeError(f"{name} 里的每一项都必须是 Example，收到 {type(e).__name__}")
        encode(e.prompt, f"{name} 的 prompt")
        encode(e.target, f"{name} 的 target")
        if len(e.prompt) + len(e.target) > context + 1:
            raise ValueError(f"{name} 里的题 {e.prompt + e.target!r} 有 {len(e.prompt) + len(e.target)} 个字符，"
                             f"放不进上下文 context = {context}（最多 {context + 1} 个字符）；请用更大的 context 或更短的题")
    return examples


# =============================================================================
# 各层：前向和反向写在一起
# =============================================================================
def layer_norm(x, g, b, eps=1e-5):
    """LN(x) = g ⊙ x̂ + b，x̂ = (x − μ) / √(σ² + eps)（μ、σ² 是最后一维的均值、方差）。返回 (y, cache)。"""
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
    xhat = xc * rstd
    return xhat * g + b, (xhat, rstd, g)


def layer_norm_backward(dy, cache):
    """∂x = (∂x̂ − mean(∂x̂) − x̂ · mean(∂x̂ ⊙ x̂)) / √(σ² + eps)，∂x̂ = g ⊙ ∂y（μ、σ² 也依赖 x，所以减去两项）。"""
    xhat, rstd, g = cache
    dxhat = dy * g
    dx = (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)) * rstd
    return dx, (dy * xhat).reshape(-1, xhat.shape[-1]).sum(0), dy.reshape(-1, dy.shape[-1]).sum(0)


def attention(x, wqkv, wo, heads):
    """因果自注意力：[Q K V] = x W_qkv，P = softmax(Q Kᵀ / √d_h + 因果掩码)，y = (P V) W_o。返回 (y, cache)。"""
    B, L, d = x.shape
    dh = d // heads
    qkv = (x @ wqkv).reshape(B, L, 3, heads, dh).transpose(2, 0, 3, 1, 4)       # (3, B, H, L, d_h)
    q, k, v = qkv[0], qkv[1], qkv[2]
    s = q @ k.transpose(0, 1, 3, 2) / np.asarray(math.sqrt(dh), x.dtype)
    s = np.where(np.tril(np.ones((L, L), bool)), s, np.asarray(-1e9, x.dtype))   # 只看自己和前面
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(B, L, d)
    return o @ wo, (x, q, k, v, p, o, wqkv, wo)


def attention_backward(dy, cache):
    """∂W_o = Oᵀ∂y；∂P = ∂O Vᵀ，∂V = Pᵀ∂O；∂S = P ⊙ (∂P − Σ_j P ∂P)（softmax 的雅可比）；∂Q = ∂S K/√d_h，∂K = ∂Sᵀ Q/√d_h。"""
    x, q, k, v, p, o, wqkv, wo = cache
    B, L, d = x.shape
    heads, dh = q.shape[1], q.shape[3]
    dwo = o.reshape(-1, d).T @ dy.reshape(-1, d)
    do = (dy @ wo.T).reshape(B, L, heads, dh).transpose(0, 2, 1, 3)
    dp = do @ v.transpose(0, 1, 3, 2)
    dv = p.transpose(0, 1, 3, 2) @ do
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.asarray(math.sqrt(dh), x.dtype)  # 掩掉的位置 P = 0，导数自然是 0
    dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
    dqkv = np.stack([dq, dk, dv]).transpose(1, 3, 0, 2, 4).reshape(B, L, 3 * d)
    return dqkv @ wqkv.T, x.reshape(-1, d).T @ dqkv.reshape(-1, 3 * d), dwo


def mlp(x, w1, b1, w2, b2):
    """MLP(x) = ReLU(x W_1 + b_1) W_2 + b_2。返回 (y, cache)。"""
    h = x @ w1 + b1
    r = np.maximum(h, 0)
    return r @ w2 + b2, (x, h, r, w1, w2)


def mlp_backward(dy, cache):
    """∂W_2 = rᵀ∂y；∂r = ∂y W_2ᵀ；∂h = ∂r ⊙ [h > 0]（ReLU 的导数）；∂W_1 = xᵀ∂h；∂x = ∂h W_1ᵀ。"""
    x, h, r, w1, w2 = cache
    d, f = w1.shape
    dr = dy @ w2.T
    dh = dr * (h > 0)
    return (dh @ w1.T, x.reshape(-1, d).T @ dh.reshape(-1, f), dh.reshape(-1, f).sum(0),
            r.reshape(-1, f).T @ dy.reshape(-1, d), dy.reshape(-1, d).sum(0))


def log_softmax(z):
    """log softmax 最后一维（减去最大值再取指数，不会溢出）。"""
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def forward(params, idx, layers, heads):
    """
    整个网络：x_0 = E[o_t] + P[t]；每层 x ← x + Attn(LN(x))，x ← x + MLP(LN(x))；z = LN(x) W_out。

    【参数】params：参数字典；idx：(B, L) 字表下标；layers、heads：层数、头数
    【返回】(logits (B, L, V), cache)，cache 交给 backward
    """
    L = idx.shape[1]
    x = params["tok"][idx] + params["pos"][:L]
    caches = []
    for i in range(layers):
        p = f"l{i}."
        h, c1 = layer_norm(x, params[p + "ln1.g"], params[p + "ln1.b"])
        a, c2 = attention(h, params[p + "attn.wqkv"], params[p + "attn.wo"], heads)
        x = x + a
        h, c3 = layer_norm(x, params[p + "ln2.g"], params[p + "ln2.b"])
        m, c4 = mlp(h, params[p + "mlp.w1"], params[p + "mlp.b1"], params[p + "mlp.w2"], params[p + "mlp.b2"])
        x = x + m
        caches.append((c1, c2, c3, c4))
    h, cf = layer_norm(x, params["lnf.g"], params["lnf.b"])
    return h @ params["head"], (idx, caches, cf, h)


def backward(params, dlogits, cache):
    """
    从 ∂loss/∂z 反向算出每个参数的梯度（字典，和 params 同名同形状）。

    【思路】残差 x ← x + f(x) 的导数是 ∂x ← ∂x + f'(x)ᵀ∂y：梯度沿残差直通，再加上分支的贡献。
        嵌入的导数是把每个位置的 ∂x_0 加回它所用的那一行（np.add.at：同一个字出现几次就加几次）。
    """
    idx, caches, cf, h = cache
    V, d = params["tok"].shape
    g = {"head": h.reshape(-1, d).T @ dlogits.reshape(-1, V)}
    dx, g["lnf.g"], g["lnf.b"] = layer_norm_backward(dlogits @ params["head"].T, cf)
    for i in reversed(range(len(caches))):
        p = f"l{i}."
        c1, c2, c3, c4 = caches[i]
        dh, g[p + "mlp.w1"], g[p + "mlp.b1"], g[p + "mlp.w2"], g[p + "mlp.b2"] = mlp_backward(dx, c4)
        dh, g[p + "ln2.g"], g[p + "ln2.b"] = layer_norm_backward(dh, c3)
        dx = dx + dh
        dh, g[p + "attn.wqkv"], g[p + "attn.wo"] = attention_backward(dx, c2)
        dh, g[p + "ln1.g"], g[p + "ln1.b"] = layer_norm_backward(dh, c1)
        dx = dx + dh
    g["pos"] = np.zeros_like(params["pos"])
    g["pos"][:idx.shape[1]] = dx.sum(0)
    g["tok"] = np.zeros_like(params["tok"])
    np.add.at(g["tok"], idx, dx)
    return {k: g[k] for k in params}


# =============================================================================
# 模型
# =============================================================================
class TinyLM:
    """
    一个很小的 pre-LayerNorm 因果 transformer，逐字符读写算式。

    【思路】全部参数在一个字典 params 里（名字 → numpy 数组），初始化只用 numpy.random.default_rng(seed)。
        默认 2 层、d = 64、4 个头、MLP 宽 4d：约 10 万个参数。
    【参数】d：宽度（能被 heads 整除）；heads：头数；layers：层数；context：上下文长度（最多几个位置）；
        seed：初始化的随机种子；dtype：np.float32（默认）或 np.float64（梯度检查用）
    【返回】TinyLM；.params、.n_params、.config
    【边界】d 不能被 heads 整除等，报中文的 ValueError。
    【例子】model = TinyLM(seed=0); model.n_params → 101,440；greedy(model, ["12+35="])
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


def _check_model(model):
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
        s = np.einsum("bhd,bhtd->bht", q, kcache[i][:, :, :t + 1]) / np.asarray(math.sqrt(dh), x.dtype)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
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
    _check_model(model)
    temperature = as_real("temperature（0 表示贪心解码）", temperature, low=0.0)
    if temperature > 0 and not isinstance(rng, np.random.Generator):
        raise TypeError(f"temperature > 0 时 rng 必须是 numpy.random.Generator（例如 np.random.default_rng(0)），收到 {rng!r}")
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


@one_blas_thread
def accuracy(model, examples, temperature=0.0, rng=None):
    """
    完全做对（最终答案正确）的比例。

    【参数】model：TinyLM；examples：Example 的列表；temperature：0 是贪心解码（exact match），> 0 是采样；
        rng：numpy.random.Generator（采样时必须给）
    【返回】float，在 [0, 1] 里
    【例子】accuracy(model, test)；accuracy(model, test, 1.0, np.random.default_rng(0))
    """
    _check_model(model)
    examples = _check_examples("examples", examples, model.context)
    outs = generate(model, [e.prompt for e in examples], temperature, rng)
    return float(np.mean([e.is_correct(o) for o, e in zip(outs, examples)]))


@one_blas_thread
def pass_at_k_curve(model, examples, n, ks, seed=0, temperature=1.0):
    """
    每道题采样 n 份，用无偏估计（toyllm.estimators.pass_at_k）算 pass@k，再对题目平均。

    【返回】{k: pass@k}
    【例子】pass_at_k_curve(model, test[:100], 16, [1, 4, 16])
    """
    _check_model(model)
    examples = _check_examples("examples", examples, model.context)
    n = as_int("n", n, low=1)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, (list, tuple, range)):
        raise TypeError(f"ks 必须是 k 的列表，例如 [1, 4, 16]，收到 {ks!r}")
    ks = [as_int("ks 里的 k", k, 1, n) for k in ks]
    if not ks:
        raise ValueError("ks 不能是空的，例如 [1, 4, 16]")
    outs = generate(model, [e.prompt for e in examples for _ in range(n)], temperature, np.random.default_rng(seed))
    c = np.array([e.is_correct(o) for o, e in zip(outs, (e for e in examples for _ in range(n)))])
    c = c.reshape(len(examples), n).sum(1)
    return {k: float(np.mean([pass_at_k(n, int(ci), k) for ci in c])) for k in ks}



# =============================================================================
# 网络在玩具的题上错在哪里：按玩具的 12 种情境，逐步对照三种做法
# =============================================================================
def _looks_careless(value, correct):
    """和正确结果只差某一位上的 ±1（玩具的 careless：|差| = 10^i，i 小于正确结果的位数）。"""
    d = abs(value - correct)
    return d > 0 and 10 ** round(math.log10(d)) == d and d < 10 ** len(str(abs(correct))) and value >= 0


def step_errors(model, problems):
    """
    网络在玩具的多步题上一步一步的表现，按玩具的情境 (运算, 难度) 分开数。

    【思路】每道题贪心解码一次，沿着思维链往下看：前面的步都对时，这一步落在哪个情境（arithmetic.step_hardness），
        写出的值是 对 / 像 bug（等于错误观念的结果，而且它和正确结果不同）/ 像粗心（和正确结果只差某一位上的 ±1）/
        别的（包括没写出数、少写了步）。一步错了，后面的步就不再数：它们的输入已经不是题目里的值了。
    【参数】model：TinyLM；problems：toyllm.arithmetic.Problem 的列表（用 problem_example 写成文字）
    【返回】{情境: {"steps", "correct", "bug", "careless", "other"}}，只含出现过的情境，按 arithmetic.CONTEXTS 的顺序
    【例子】counts = step_errors(model, heldout_problems); step_error_table(counts, toy=ToyLLM(1e9))
    """
    _check_model(model)
    problems = check_problems("problems", [problems] if isinstance(problems, Problem) else problems)
    examples = _check_examples("problems", [problem_example(p) for p in problems], model.context)
    outs = greedy(model, [e.prompt for e in examples])
    counts = {}
    for problem, out in zip(problems, outs):
        values = step_values(out, True)
        x = problem.start
        for k, step in enumerate(problem.steps):
            key = (step.op, step_hardness(step.op, x, step.operand))
            c = counts.setdefault(key, {"steps": 0, "correct": 0, "bug": 0, "careless": 0, "other": 0})
            c["steps"] += 1
            right = apply_op(step.op, x, step.operand, "correct")
            value = values[k] if k < len(values) else None
            if value == right:
                c["correct"] += 1
                x = right
                continue
            if value is not None and bug_bites(step.op, x, step.operand) \
                    and value == apply_op(step.op, x, step.operand, "bug"):
                c["bug"] += 1
            elif value is not None and _looks_careless(value, right):
                c["careless"] += 1
            else:
                c["other"] += 1
            break
    return {key: counts[key] for key in CONTEXTS if key in counts}


def step_error_table(counts, toy=None):
    """
    step_errors 的结果画成一张表（toyllm.display.Table）：每个情境一行。

    【参数】counts：step_errors 的返回值；toy：玩具模型（toyllm.ToyLLM 或 TrainableLLM，可选）：
        给了就加三列，它在这个情境第一步的 π(correct)、π(bug)、π(careless)
    【返回】Table：情境、步数、做对的比例，做错的步里像 bug / 像粗心 / 别的各占多少（没有做错的步时写 —）
    """
    if not isinstance(counts, dict) or not counts:
        raise ValueError(f"counts 必须是 step_errors 返回的非空字典，收到 {counts!r}"[:200])
    headers = ["情境", "步数", "网络做对", "错里像 bug", "错里像粗心", "错里别的"]
    if toy is not None:
        if not isinstance(toy, ToyLLM):
            raise TypeError(f"toy 必须是玩具模型（toyllm.ToyLLM 或 TrainableLLM），收到 {type(toy).__name__}")
        headers += [f"玩具 {toy.name} π(correct)", "π(bug)", "π(careless)"]
    rows = []
    for key, c in counts.items():
        wrong = c["steps"] - c["correct"]
        shares = [c[k] / wrong if wrong else "—" for k in ("bug", "careless", "other")]
        row = [CONTEXT_NAMES[key], c["steps"], c["correct"] / c["steps"], *shares]
        if toy is not None:
            row += softmax(toy.context_logits(key))
        rows.append(row)
    return Table(headers, rows, digits=3)

# =============================================================================
# 一批 token：teacher forcing 的输入、目标和 mask
# =============================================================================
def batch_tokens(model, prompts, completions):
    """
    把 prompt + 解答排成 (B, L) 的输入、目标和 mask（mask 只覆盖解答的字：prompt 不算损失）。

    【返回】(inputs, targets, mask)：inputs[:, t] 预测 targets[:, t] = 第 t + 1 个字；填充的位置 mask 是 False
    """
    seqs = [np.concatenate([encode(p, "prompt"), encode(c, "completion")]) for p, c in zip(prompts, completions)]
    L = max(len(s) for s in seqs)
    if L > model.context + 1:
        raise ValueError(f"题面加解答有 {L} 个字符，放不进上下文 context = {model.context}（最多 {model.context + 1} 个字符）")
    tokens = np.full((len(seqs), L), END_ID, dtype=np.int64)
    mask = np.zeros((len(seqs), L - 1), bool)
    for i, (s, p) in enumerate(zip(seqs, prompts)):
        tokens[i, :len(s)] = s
        mask[i, len(p) - 1:len(s) - 1] = True
    return tokens[:, :-1], tokens[:, 1:], mask


def token_logprobs(model, inputs, targets, temperature=1.0, params=None):
    """
    每个位置上目标字的 log 概率 log π(o_t | o_<t)（温度 T），和反向用的东西。

    【返回】(logp (B, L), logprobs (B, L, V), cache)
    """
    params = model.params if params is None else params
    z, cache = forward(params, inputs, model.layers, model.heads)
    lp = log_softmax(z / np.asarray(temperature, z.dtype))
    return np.take_along_axis(lp, targets[..., None], -1)[..., 0], lp, cache


def dlogits_from_dlogp(s, logprobs, targets, temperature=1.0):
    """∂loss/∂z = s · (onehot(o_t) − π) / T：log softmax 的梯度（第 4.1 节），s = ∂loss/∂log π(o_t)。"""
    d = -np.exp(logprobs) * s[..., None]
    np.put_along_axis(d, targets[..., None], np.take_along_axis(d, targets[..., None], -1) + s[..., None], -1)
    return d / np.asarray(temperature, d.dtype)


# =============================================================================
# Adam
# =============================================================================
class Adam:
    """
    Adam（β1 = 0.9、β2 = 0.999、ε = 1e-8）：m ← β1 m + (1 − β1) g，v ← β2 v + (1 − β2) g²，
    θ ← θ − lr · m̂ / (√v̂ + ε)，m̂、v̂ 是除以 (1 − βᵗ) 的偏差修正。参数原地更新。
    """

    def __init__(self, params, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.lr = as_real("lr（学习率）", lr, low=0.0)
        self.b1, self.b2, self.eps, self.t = b1, b2, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params, grads):
        """用 grads 更新 params（原地）。"""
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for k, p in params.items():
            g = grads[k].astype(p.dtype, copy=False)
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * g
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * g * g
            p -= (self.lr / c1) * self.m[k] / (np.sqrt(self.v[k] / c2) + self.eps)


def _progress(total, desc, show):
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, disable=not show, leave=False)


# =============================================================================
# SFT
# =============================================================================
@one_blas_thread
def sft(model, examples, steps=300, batch_size=64, lr=3e-3, seed=0, heldout=None, eval_every=50, progress=False):
    """
    监督微调（teacher forcing）：最小化解答里每个字的交叉熵 −log π(o_t | o_<t) 的平均。

    【思路】∂loss/∂log π(o_t) = −1/N（N 是这一批解答的字数），交给 dlogits_from_dlogp，再 backward、Adam。
    【参数】model：TinyLM（原地训练）；examples：Example 的列表；steps：更新次数；batch_size：每批几道题；
        lr：Adam 的学习率；seed：选题的随机种子；heldout：留出题（给了就每 eval_every 步记一次贪心准确率）；
        progress：是否显示 tqdm 进度条
    【返回】History（列 iteration、loss、greedy；没有评估的行 greedy 是 NaN）
    【例子】hist = sft(model, train, steps=300, heldout=test[:200])
    """
    _check_model(model)
    examples = _check_examples("examples", examples, model.context)
    if heldout is not None:
        heldout = _check_examples("heldout", heldout, model.context)
    steps = as_int("steps", steps, low=0)
    batch_size = as_int("batch_size", batch_size, low=1)
    eval_every = as_int("eval_every", eval_every, low=1)
    rng = np.random.default_rng(as_int("seed", seed, low=0))
    opt = Adam(model.params, lr)
    hist = History(["iteration", "loss", "greedy"], meta={"algorithm": "SFT", "seed": seed, "lr": lr},
                   headers={"greedy": "贪心准确率"})
    with _progress(steps, "SFT", progress) as bar:
        for it in range(1, steps + 1):
            batch = [examples[i] for i in rng.integers(0, len(examples), batch_size)]
            x, y, m = batch_tokens(model, [e.prompt for e in batch], [e.target for e in batch])
            logp, lp, cache = token_logprobs(model, x, y)
            n = m.sum()
            loss = float(-(logp * m).sum() / n)
            s = np.where(m, np.asarray(-1.0 / n, logp.dtype), np.asarray(0, logp.dtype))
            opt.step(model.params, backward(model.params, dlogits_from_dlogp(s, lp, y), cache))
            acc = accuracy(model, heldout) if heldout is not None and (it % eval_every == 0 or it == steps) else math.nan
            hist.append({"iteration": it, "loss": loss, "greedy": acc})
            bar.update()
    return hist


# =============================================================================
# RL：损失的每一块都来自 toyllm.rl.losses
# =============================================================================
def tiny_config(name="grpo", **overrides):
    """
    小 transformer 用的 RL 配置：预设 name，加上 TINY_DEFAULTS（Adam、lr = 3e-4、每次 16 道题），再加 overrides。

    【例子】tiny_config("dapo", dynamic_sampling=False)；tiny_config("grpo", lr=1e-3)
    """
    if not isinstance(name, str):
        raise TypeError(f"name 必须是预设的名字（{'、'.join(PRESETS)}），收到 {name!r}")
    return resolve_config(name, "name").replace(**{**TINY_DEFAULTS, **overrides})


RL_COLUMNS = ["iteration", "reward", "pass1_sampled", "entropy", "kl_est", "clip_low", "clip_high", "zero_std",
              "loss", "greedy"]


def rl_loss_grad(model, inputs, targets, mask, adv, old_logp, ref_logp, cfg, max_len=None, computed=None):
    """
    一次更新的损失和梯度：每一块都调用 toyllm.rl.losses，网络的反向从 s = ∂loss/∂log π(o_t) 开始。

    【思路】ρ = exp(log π_θ − log π_old)（填充的位置 ρ = 1）；
            s = w · ∂l/∂ρ · ρ + β · w · ∂k/∂log π         （losses.clipped_surrogate、kl_estimator、aggregation_weights）
            ∂loss/∂z = s (onehot − π) / T − c_H · w · ∂H/∂z  （losses.entropy）
        losses 的函数返回 float64，这里先转成 float32 再和网络的数组相乘（否则整步都变成 float64，慢 3 倍）。
        computed：这组参数上已经算好的 token_logprobs(...) 的结果（μ 次更新的第一次就是采样后算 π_old 的那次前向）
    【返回】(grads, info)；info = {loss, clip_low, clip_high}
    """
    dt = model.params["tok"].dtype
    T = cfg.temperature
    logp, lp, cache = token_logprobs(model, inputs, targets, T) if computed is None else computed
    w = losses.aggregation_weights(mask, cfg.loss_agg, max_len).astype(dt)
    ratio = np.where(mask, np.exp(np.where(mask, logp - old_logp, 0)), np.asarray(1, dt))
    eps_low, eps_high = (cfg.eps_low, cfg.eps_high) if cfg.clip else (math.inf, math.inf)
    surr = losses.clipped_surrogate(ratio, np.broadcast_to(adv[:, None], mask.shape), eps_low, eps_high,
                                     validate=False)    # 学习率极大时 ρ 可能下溢成 0，照样算（同 rl.kernel）
    loss = float((w * surr.loss.astype(dt)).sum())
    s = w * surr.dloss_dratio.astype(dt) * ratio
    if cfg.beta > 0:
        clamp = losses.KL_CLAMP if cfg.kl_estimator == "k3" else None
        kl = losses.kl_estimator(np.where(mask, logp, ref_logp), ref_logp, cfg.kl_estimator, clamp)
        loss += cfg.beta * float((w * kl.value.astype(dt)).sum())
        s = s + np.asarray(cfg.beta, dt) * w * kl.dvalue_dlogp.astype(dt)
    d = dlogits_from_dlogp(s, lp, targets, T)
    if cfg.entropy_coef != 0:
        ent = losses.entropy(np.exp(lp), lp, T)
        loss -= cfg.entropy_coef * float((w * ent.value.astype(dt)).sum())
        d = d - np.asarray(cfg.entropy_coef, dt) * w[..., None] * ent.dlogits.astype(dt)
    n = max(int(mask.sum()), 1)
    info = {"loss": loss, "clip_low": float(np.count_nonzero(surr.clipped_low & mask) / n),
            "clip_high": float(np.count_nonzero(surr.clipped_high & mask) / n)}
    return backward(model.params, d, cache), info


@one_blas_thread
def rl_train(model, examples, config="grpo", heldout=None, eval_every=20, progress=False, ref=None):
    """
    在小 transformer 上做 RL（GRPO / Dr. GRPO / DAPO / PPO 式），选项和玩具的 rl.train 同名（RLConfig）。

    【思路】每次迭代：选 batch_problems 道题，每题采样 G 份（温度 T）；奖励 = 最终答案对不对（0 / 1）；
        优势 losses.group_advantages；DAPO 的动态采样（dynamic_sampling=True）在这里只丢掉奖励全相同的组，
        不再补采；然后用这批数据更新 μ 次（rl_loss_grad）。参考策略 π_ref 是 RL 开始时的模型（β > 0 时用）。
    【参数】model：TinyLM（原地训练）；examples：训练题；config：RLConfig（或预设名，会经过 tiny_config）；
        heldout：留出题，每 eval_every 次迭代记一次贪心准确率；progress：tqdm 进度条；ref：参考模型（默认 RL 开始时的副本）
    【返回】History（列见 RL_COLUMNS；没有评估的行 greedy 是 NaN）
    【边界】只支持 reward="outcome"、optimizer="adam"（神经网络用 SGD 配玩具的 lr = 2 会发散）。
    【例子】hist = rl_train(model, train, tiny_config("grpo", iterations=100), heldout=test[:200])
    """
    _check_model(model)
    cfg = resolve_config(config, "config")
    if isinstance(config, str):                     # 预设名：换上 TINY_DEFAULTS（Adam、lr = 3e-4……）
        cfg = cfg.replace(**TINY_DEFAULTS)
    if cfg.reward != "outcome":
        raise ValueError(f"config.reward 在小 transformer 上只能是 'outcome'（只有最终答案能判对错），收到 {cfg.reward!r}")
    if cfg.optimizer != "adam":
        raise ValueError(f"config.optimizer 在小 transformer 上必须是 'adam'，收到 {cfg.optimizer!r}；"
                         "用 tiny_config(预设名, ...) 得到合适的默认值")
    examples = _check_examples("examples", examples, model.context)
    if heldout is not None:
        heldout = _check_examples("heldout", heldout, model.context)
    eval_every = as_int("eval_every", eval_every, low=1)
    ref = model.copy() if ref is None else ref
    _check_model(ref)
    rng = np.random.default_rng(cfg.seed)
    opt = Adam(model.params, cfg.lr)
    G, dt = cfg.group_size, model.params["tok"].dtype
    max_len = max(len(e.target) for e in examples)
    hist = History(RL_COLUMNS, meta={"algorithm": "RL", "config": cfg.to_dict(), "seed": cfg.seed},
                   headers={"greedy": "贪心准确率"})
    with _progress(cfg.iterations, "RL", progress) as bar:
        for it in range(1, cfg.iterations + 1):
            batch = [examples[i] for i in rng.choice(len(examples), min(cfg.batch_problems, len(examples)), False)]
            prompts = [e.prompt for e in batch for _ in range(G)]
            outs = generate(model, prompts, cfg.temperature, rng)
            rewards = np.array([e.is_correct(o) for o, e in zip(outs, (e for e in batch for _ in range(G)))],
                               float)
            const = losses.constant_groups(rewards, G)
            adv = losses.group_advantages(rewards, G, cfg.advantage, cfg.scale_rewards, cfg.std_eps).astype(dt)
            keep = np.repeat(~const, G) if cfg.dynamic_sampling else np.ones(len(outs), bool)
            info = {"loss": 0.0, "clip_low": 0.0, "clip_high": 0.0}
            x, y, m = batch_tokens(model, prompts, outs)
            first = token_logprobs(model, x, y, cfg.temperature)
            old_logp, lp = first[0], first[1]
            ref_logp = token_logprobs(ref, x, y, cfg.temperature)[0]
            ent = float(losses.entropy(np.exp(lp[m]), lp[m]).value.mean())
            kl = float(losses.kl_estimator(old_logp[m], ref_logp[m], cfg.kl_estimator).value.mean())
            if keep.any():
                reuse = first if keep.all() else None       # 没丢掉任何组时，第一次更新的前向就是上面那一次
                x, y, m, a, ol, rl_ = x[keep], y[keep], m[keep], adv[keep], old_logp[keep], ref_logp[keep]
                totals = {k: 0.0 for k in info}
                for epoch in range(cfg.mu):
                    grads, info = rl_loss_grad(model, x, y, m, a, ol, rl_, cfg, max_len, reuse if epoch == 0 else None)
                    opt.step(model.params, grads)
                    totals = {k: totals[k] + info[k] / cfg.mu for k in totals}
                info = totals
            acc = accuracy(model, heldout) if heldout is not None and (it % eval_every == 0 or it == cfg.iterations) \
                else math.nan
            hist.append({"iteration": it, "reward": float(rewards.mean()), "pass1_sampled": float(rewards.mean()),
                         "entropy": ent, "kl_est": kl, **info, "zero_std": float(const.mean()), "greedy": acc})
            bar.update()
    return hist


# =============================================================================
# 保存和读取：toyllm.checkpoint 的训练记录文件，参数放在 metadata 里
# =============================================================================
def save(model, path, history=None):
    """
    把模型（可选：连同训练记录）原子地存成 JSON：用 toyllm.checkpoint.save_history 写文件，
    metadata 里是 {"format": "toyllm-tinylm", "version": 1, "config": {...}, "vocab": 字表, "params": {名字: 嵌套 list}}。
    float32 的数按 repr 写出，读回来逐位相同。

    【返回】写入的路径
    【例子】save(model, "tiny.json", history=hist); load("tiny.json")
    """
    _check_model(model)
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "config": model.config, "vocab": VOCAB,
            "dtype": model.params["tok"].dtype.name, "params": {k: v.tolist() for k, v in model.params.items()}}
    return save_history({} if history is None else history, path, metadata=meta)


def load(path):
    """读回 save 存的模型；不是小 transformer 的文件、版本不对、形状不对，都报带文件名的 CheckpointError。"""
    ckpt = read_checkpoint(path)
    meta = ckpt.metadata

    def fail(problem):
        raise CheckpointError(f"文件 {ckpt.path} 读取失败：{problem}")

    if meta.get("format") != FORMAT:
        fail(f"这不是小 transformer 的文件（metadata 里的 'format' 应该是 {FORMAT!r}，收到 {meta.get('format')!r}）")
    if meta.get("version") != FORMAT_VERSION:
        fail(f"小 transformer 的文件版本是 {meta.get('version')!r}，这个 toyllm 只认识版本 {FORMAT_VERSION}")
    if meta.get("vocab") != VOCAB:
        fail(f"字表 {meta.get('vocab')!r} 和这个 toyllm 的字表 {VOCAB!r} 不同")
    try:
        model = TinyLM(**meta["config"], dtype=np.dtype(meta.get("dtype", "float32")).type)
    except (TypeError, ValueError, KeyError) as e:
        fail(f"'config' 不对（{e}）")
    params = meta.get("params")
    if not isinstance(params, dict) or set(params) != set(model.params):
        fail(f"'params' 必须恰好有这些参数：{'、'.join(model.params)}")
    for k, v in model.params.items():
        try:
            arr = np.asarray(params[k], dtype=v.dtype)
        except (TypeError, ValueError):
            fail(f"参数 {k!r} 必须是数的嵌套列表")
        if arr.shape != v.shape:
            fail(f"参数 {k!r} 的形状必须是 {v.shape}，收到 {arr.shape}")
        model.params[k] = arr
    return model


def timed(fn, *args, **kwargs):
    """(fn(*args, **kwargs), 用了几秒)：基准和 notebook 报用时。"""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


__all__ = ["Adam", "END", "Example", "FORMAT", "FORMAT_VERSION", "OP_CHARS", "RL_COLUMNS", "TINY_DEFAULTS", "TinyLM",
           "VOCAB", "accuracy", "addition_examples", "answer_of", "attention", "attention_backward", "backward",
           "batch_tokens", "decode", "dlogits_from_dlogp", "encode", "forward", "generate", "greedy", "layer_norm",
           "layer_norm_backward", "load", "log_softmax", "mlp", "mlp_backward", "one_blas_thread", "pass_at_k_curve", "problem_example",
           "read_number", "rl_loss_grad", "rl_train", "save", "sft", "step_error_table", "step_errors", "step_values",
           "tiny_config", "timed", "token_logprobs", "WIDTH", "write_number"]
