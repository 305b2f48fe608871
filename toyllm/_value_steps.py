"""
exact.answer_probs 的零件：一步算术的全部结果（往前走）和全部来源（倒着走），按 (题号, 值) 合并。

【思路】answer_probs 带着"中间值的概率分布"从题目的两头往中间走（见它的说明）。这里的函数只管一步：
    step_outcomes：值 x 做一步，得到的每个结果和它的概率（correct、bug、careless 的每一位和方向）；
    preimages：倒过来，哪些 x 做一步能写出 y，概率的系数是多少；
    merge_states：相同的 (题号, 值) 合并、概率相加；value_bounds：每一步之前 |值| 的上界；
    advance：把一部分题的状态往前（或倒着）走一步。
    它们不检查参数（只由 answer_probs 调用，参数已经检查过）。和采样器的规则一一对应：tests/test_exact.py 拿
    逐条枚举所有路径的写法核对 answer_probs。
"""

import numpy as np

from .arithmetic import apply_op_np, context_ids_np, exact_np
from .sampler import VALUE_LIMIT

_POW10 = 10 ** np.arange(19, dtype=np.int64)      # 10^0 … 10^18
_FAR = 2 ** 40                                    # 倒着走的步里值的上界（远小于 VALUE_LIMIT，所以这些步不会截断）
_BITS = (np.arange(16)[:, None] >> np.arange(4)) & 1   # 减法 bug 逐位解回去：低 4 位各取 + / −（0 / 1），16 种


def _digits(m):
    """|m| 的十进制位数（0 算 1 位），m 是 int64 数组。"""
    return np.searchsorted(_POW10[1:], np.abs(m), side="right") + 1


def step_outcomes(op, x, b, probs):
    """
    一步的全部可能结果和概率（和采样器的规则完全相同）：返回 (来源行, 结果值, 概率)，每个来源行 2 + 2·D 项（c = 0 时 3 项）。

    correct 和 bug 各一项（bug 用 apply_op_np，负数输入时等于正确结果）；careless 在结果 c 的 D 位里均匀挑一位 i，
    各以 1/2 的概率 |c| ± 10^i（c = 0 时只能 +1），符号跟着 c —— 和 apply_op_np 抽随机数的方式一一对应。
    结果按采样器的 VALUE_LIMIT 截断。
    """
    exact = exact_np(op, x, b)
    bug = apply_op_np(op, x, b, np.ones_like(op), None, exact=exact)
    m = np.abs(exact)
    digits = _digits(m)
    rows = np.arange(len(x))
    slip = np.repeat(rows, digits)                                        # careless：每一位一行
    place = _POW10[np.arange(len(slip)) - np.repeat(np.cumsum(digits) - digits, digits)]
    share = (probs[:, 2] / digits)[slip]                                  # 挑中某一位的概率
    ms, sign, down = m[slip], np.where(exact < 0, -1, 1)[slip], m[slip] != 0
    src = np.concatenate([rows, rows, slip, slip[down]])
    val = np.concatenate([exact, bug, sign * (ms + place), (sign * (ms - place))[down]])
    w = np.concatenate([probs[:, 0], probs[:, 1], share * np.where(down, 0.5, 1.0), share[down] * 0.5])
    return src, np.clip(val, -VALUE_LIMIT, VALUE_LIMIT), w


def preimages(op, b, y, bound_in, bound_out):
    """
    一步倒着走：所有 |x| ≤ bound_in、这一步能从 x 写出 y 的 (来源行, x, 系数)，从 x 写出 y 的概率 = π(· | c(x)) · 系数。

    correct 和 careless 先找"正确结果" c：c = y（correct），或 c = y ∓ 10^i 且 c 有第 i 位（careless；c = 0 时只有
    y = 1），再解 c = x + b、x − b 或 x · b；bug（只对 x ≥ 0，负数时 bug 就是 correct）逐位解回去：加法不进位
    每一位只有一个解，减法大减小每一位有 b_d ± y_d 两个，乘法 x = y / (b 的各位数字之和)。bound_out 是 |c| 的上界。
    """
    n = len(y)
    # careless 的 c 离 y 是 ±10^i：|c| = |y| + 10^i 的 i 只受 |c| 的上界限制，|c| = |y| − 10^i 要 |c| ≥ 10^i，所以 i < y 的位数
    # （y = 0 时两边都是 |c| = 10^i，正负各一）
    grow = _digits(np.minimum(bound_out, 4e18).astype(np.int64))
    shrink = np.where(y == 0, grow, _digits(y))
    counts = 1 + grow + shrink
    rows = np.repeat(np.arange(n), counts)
    j = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    wr = grow[rows]
    i = np.where(j <= wr, j - 1, j - 1 - wr)
    place = _POW10[np.maximum(i, 0)]
    sg = np.where(y[rows] < 0, -1, 1)
    off = np.where(j == 0, 0, np.where(j <= wr, -sg * place, sg * place))
    yr, opr, br = y[rows], op[rows], b[rows]
    c = yr - off
    slip = (j != 0) & np.where(c == 0, (yr == 1) & (off == 1), np.abs(c) >= place)
    x = c + np.where(opr == 0, -br, br)                    # 加法 x = c − b，减法 x = c + b
    mul = np.nonzero(opr == 2)[0]                          # 乘法 x = c / b（要整除；乘 0 的步不倒着走）
    bm = np.maximum(br[mul], 1)
    x[mul] = c[mul] // bm
    ok = ((j == 0) | slip) & (np.abs(x) <= bound_in[rows])
    ok[mul] &= c[mul] % bm == 0
    rows, x, c, j, slip = rows[ok], x[ok], c[ok], j[ok], slip[ok]
    coef = np.zeros((len(x), 3))
    coef[:, 0] = j == 0
    coef[:, 1] = (j == 0) & (x < 0)
    coef[:, 2] = np.where(slip, np.where(c == 0, 1.0, 0.5) / _digits(c), 0.0)
    # bug：只对 y ≥ 0
    pos = y >= 0
    yd = (y[:, None] // _POW10[:4]) % 10
    bd = (b[:, None] // _POW10[:4]) % 10
    high = y - y % _POW10[4]
    ra = np.nonzero(pos & (op == 0))[0]
    xa = high[ra] + ((yd[ra] - bd[ra]) % 10 * _POW10[:4]).sum(axis=1)
    rm = np.nonzero(pos & (op == 2))[0]
    ds = np.maximum(bd[rm].sum(axis=1), 1)
    keep = y[rm] % ds == 0
    rm, xm = rm[keep], (y[rm] // ds)[keep]
    rs = np.nonzero(pos & (op == 1))[0]
    digit = np.stack([bd[rs] + yd[rs], bd[rs] - yd[rs]], axis=-1)          # 每一位 x_d = b_d ± y_d：(k, 4, 2)
    valid = (digit >= 0) & (digit <= 9)
    valid[..., 1] &= yd[rs] > 0                                            # y_d = 0 时两个解相同，只算一次
    sub_ok, xs = np.ones((len(rs), 16), bool), np.repeat(high[rs][:, None], 16, axis=1)
    for d in range(4):                                                      # 16 种组合：第 k 种在第 d 位取 _BITS[k, d]
        sub_ok &= valid[:, d, _BITS[:, d]]
        xs += digit[:, d, _BITS[:, d]] * _POW10[d]
    rs16 = np.repeat(rs, 16)[sub_ok.ravel()]
    xs = xs[sub_ok]
    brow = np.concatenate([ra, rm, rs16])
    bx = np.concatenate([xa, xm, xs])
    okb = (bx >= 0) & (bx <= bound_in[brow])
    brow, bx = brow[okb], bx[okb]
    bcoef = np.zeros((len(bx), 3))
    bcoef[:, 1] = 1.0
    return np.concatenate([rows, brow]), np.concatenate([x, bx]), np.concatenate([coef, bcoef])


def state_key(pid, x):
    """(题号, 值) 合成一个 int64 键（题号 < 2^21；|值| ≥ _FAR 的都算成 ±_FAR），按键排序 = 先按题号、再按值排序。"""
    return pid * (4 * _FAR) + np.clip(x, -_FAR, _FAR) + 2 * _FAR


def merge_states(pid, x, w):
    """把相同的 (题号, 值) 合并（概率相加），去掉概率为 0 的行；结果按 (题号, 值) 排好。"""
    keep = np.nonzero(w > 0)[0]
    near = len(keep) and np.abs(x[keep]).max() < _FAR
    order = keep[np.argsort(state_key(pid[keep], x[keep]), kind="stable") if near else np.lexsort((x[keep], pid[keep]))]
    pid, x, w = pid[order], x[order], w[order]
    first = np.ones(len(x), dtype=bool)
    first[1:] = (x[1:] != x[:-1]) | (pid[1:] != pid[:-1])
    starts = np.nonzero(first)[0]
    return pid[starts], x[starts], (np.add.reduceat(w, starts) if len(starts) else w)


def value_bounds(batch):
    """
    每道题倒着最多走到第几步 (P,)，和第 t 步之前 |值| 的上界 (P, L + 1)（浮点数）。

    上界：正确结果 |c| ≤ |x| + b（加减）或 |x| · b（乘）；bug 不超过它（逐位不进位 ≤ 逐位相加，各位数字之和 ≤ b）；
    careless 最多给 |c| 加上它最高位的 10^(D−1)（D 是 |c| 的位数），所以 |结果| ≤ c + 10^(c 的位数 − 1)。倒着走的步里不能有"乘 0"
    （所有的数都变成 0，倒不回去），值的上界要小于 _FAR：这些步（和它们之前的步）只能往前走。
    """
    P, L = batch.ops.shape
    bound = np.empty((P, L + 1))
    bound[:, 0] = batch.start
    for t in range(L):
        b = batch.operands[:, t]
        c = np.maximum(np.where(batch.ops[:, t] == 2, bound[:, t] * b, bound[:, t] + b), 1)
        bound[:, t + 1] = c + 10.0 ** np.floor(np.log10(c) + 1e-9)
    bad = batch.mask & (((batch.ops == 2) & (batch.operands == 0)) | (bound[:, 1:] >= _FAR))
    return np.where(bad, np.arange(1, L + 1), 0).max(axis=1), bound


def advance(state, move, step, forward, batch, tables, bound):
    """把 move[题号] 为真的题的状态往前（或倒着）走一步，第 step[题号] 步；其余的题原样保留（放在前面）。"""
    pid, x, w = state
    go = move[pid]
    if not go.any():
        return state
    stay = (pid[~go], x[~go], w[~go])
    pid, x, w = pid[go], x[go], w[go]
    t = step[pid]
    op, b = batch.ops[pid, t], batch.operands[pid, t]
    if forward:
        src, x, pw = step_outcomes(op, x, b, tables[t, context_ids_np(op, x, b)])
    else:
        src, x, coef = preimages(op, b, x, bound[pid, t], bound[pid, t + 1])
        pw = (tables[t[src], context_ids_np(op[src], x, b[src])] * coef).sum(axis=1)
    new = merge_states(pid[src], x, w[src] * pw)
    return tuple(np.concatenate(pair) for pair in zip(stay, new))
