"""
小 transformer 的各层：每一层的前向旁边就是它的反向（层归一化、因果自注意力、MLP），再拼成整个网络。

【思路】pre-LayerNorm 的因果 transformer：x_0 = E[o_t] + P[t]；每层 x ← x + Attn(LN(x))，x ← x + MLP(LN(x))；
    z = LN(x) W_out。每个前向返回 (输出, cache)，反向拿 cache 和 ∂loss/∂输出，返回 ∂loss/∂输入 和参数的梯度。
    记号（第 6 讲）：x 是残差流，LN 是层归一化，Q、K、V 是查询、键、值，P 是注意力概率，z 是输出 logits。
    注意力里的 softmax 和输出层的 log-softmax 在 toyllm.logits（玩具的概率表也用这两个函数）。
"""

import math

import numpy as np

from ..logits import softmax


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
    p = softmax(s)
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

