"""
精确答案引擎：exact.answer_probs 的零件（速度在这里，不要求学生读）。一步算术的全部结果（往前走）和全部来源（倒着走），
按 (题号, 值) 合并，两头相遇时查表。

【思路】answer_probs 带着"中间值的概率分布"从题目的两头往中间走（见它的说明）。这里的函数只管一步：
    step_outcomes：值 x 做一步，得到的每个结果和它的概率（correct、bug、careless 的每一位和方向）；
    preimages：倒过来，哪些 x 做一步能写出 y、用哪种做法（概率和它的系数由 _source_probs 算）；
    merge_states：相同的 (题号, 值) 合并、概率相加；value_bounds：每一步之前 |值| 的上界；
    advance：把一部分题的状态往前（或倒着）走一步；meet：只差一步的题走这一步，结果直接到另一头查表。
    状态一直按 (题号, 值) 排好，所以走完一步不用重新排整个池子；相遇时用散列表查另一头（_find）。
    它们不检查参数（只由 answer_probs 调用，参数已经检查过）。和采样器的规则一一对应：tests/unit/sampling/test_exact.py 拿
    逐条枚举所有路径的写法核对 answer_probs。
"""

import numpy as np

from .arithmetic_np import bug_np, context_ids_np, exact_np
from .sampler import VALUE_LIMIT

_POW10 = 10 ** np.arange(19, dtype=np.int64)      # 10^0 … 10^18
_FAR = 2 ** 40                                    # 倒着走的步里值的上界（远小于 VALUE_LIMIT，所以这些步不会截断）


def _digits(m):
    """
    |m| 的十进制位数（0 算 1 位），m 是 int64 数组；返回 int64 数组。

    长数组逐个 10 的幂比一次、用 int8 数（每次比较都是一遍很快的向量运算；二分查找每个数都要猜几次分支）；
    短数组（< 512 个）在 10 的幂里二分查找（numpy 调用少）。两种写法结果相同。
    """
    a = np.abs(m)
    if a.size < 512:
        return np.searchsorted(_POW10[1:], a, side="right") + 1
    d = np.ones(a.shape, dtype=np.int8)
    for p in _POW10[1:len(str(int(a.max())))]:
        d += a >= p
    return d.astype(np.int64)


def step_outcomes(op, x, b, probs, ids, weight):
    """
    一步的全部可能结果和概率（和采样器的规则完全相同）：返回 (来源的 ids, 结果值, weight · 概率)，
    每个来源 2 + 2·D 项（c = 0 时 3 项）。ids、weight 是每个来源的标签（题号）和它自己的概率（走到 x 的概率）。

    correct 和 bug 各一项（bug 用 arithmetic.bug_np，负数输入时等于正确结果）；careless 在结果 c 的 D 位里均匀挑一位 i，
    各以 1/2 的概率 |c| ± 10^i（c = 0 时只能 +1），符号跟着 c —— 和 apply_op_np 抽随机数的方式一一对应。
    结果按采样器的 VALUE_LIMIT 截断。weight 先乘在每个来源上（每个结果仍是 weight 和这一步的概率相乘一次），
    不用再按结果把 weight 取出来乘一遍。
    """
    exact = exact_np(op, x, b)
    bug = bug_np(op, x, b, exact)
    m = np.abs(exact)
    digits = _digits(m)
    src, val, w = [ids, ids], [exact, bug], [weight * probs[:, 0], weight * probs[:, 1]]
    # careless：逐位生成。行按位数从多到少排好，第 i 位只看前面还有第 i 位的那些行（一段前缀，不用挑）
    order = np.argsort(-digits.astype(np.int8), kind="stable")            # int8 的稳定排序是基数排序
    top = -digits[order]
    mo, so, io, wo = m[order], np.where(exact < 0, -1, 1)[order], ids[order], weight[order]
    half = (probs[:, 2] / digits)[order] * 0.5                           # 挑中第 i 位、再挑一个方向的概率
    whalf = wo * half
    for i in range(int(-top[0]) if len(x) else 0):
        k = np.searchsorted(top, -i)                                     # 前 k 行还有第 i 位
        r, mk, sk, hk = io[:k], mo[:k], so[:k], whalf[:k]
        if i == 0 and mk.min() == 0:                                     # c = 0 只能 +1（概率不减半），没有 −1
            zero = mk == 0
            src += [r, r[~zero]]
            val += [sk * (mk + 1), (sk * (mk - 1))[~zero]]
            w += [np.where(zero, wo[:k] * (2 * half[:k]), hk), hk[~zero]]
            continue
        src += [r, r]
        val += [sk * (mk + _POW10[i]), sk * (mk - _POW10[i])]
        w += [hk, hk]
    src, val, w = np.concatenate(src), np.concatenate(val), np.concatenate(w)
    return src, np.clip(val, -VALUE_LIMIT, VALUE_LIMIT, out=val), w


def _solve(c, move, lim, by_mul):
    """正确结果 c 的来源 x（加减 x = c + move，乘 x = c / move 且要整除），只留 |x| ≤ lim 的：返回 (位置, x)。"""
    if by_mul:
        x = c // move
        k = np.nonzero((x * move == c) & (np.abs(x) <= lim))[0]
    else:
        x = c + move
        k = np.nonzero(np.abs(x) <= lim)[0]
    return k, x[k]


def preimages(op, b, y, bound_in):
    """
    一步倒着走：所有 |x| ≤ bound_in、这一步能从 x 写出 y 的 (来源行, x, 做法)，
    从 x 用这种做法写出 y 的概率 = π(做法 | c(x)) · 系数（同一个 x 可能出现几次，每种做法一次；系数见 _source_probs）。

    correct 和 careless 先找"正确结果" c：c = y（correct），或 c = y ± 10^i 且 c 有第 i 位（careless；c = 0 时只有
    y = 1），再解 c = x + b、x − b 或 x · b；bug（只对 x ≥ 0，负数时 bug 就是 correct）逐位解回去：加法不进位
    每一位只有一个解，减法大减小每一位有 b_d ± y_d 两个，乘法 x = y / (b 的各位数字之和)。
    careless 的候选逐位生成：每一位 i 只看还有候选的那些行（行按候选个数从多到少排好，所以是一段前缀，不用挑）。
    """
    n = len(y)
    ay, sg = np.abs(y), np.where(y < 0, -1, 1)
    mul = op == 2
    bb = np.abs(b).astype(np.float64)
    # |x| ≤ bound_in 要求 |c| ≤ cmax（加减 bound_in + |b|，乘 bound_in · |b|）
    room = np.floor(np.where(mul, bound_in * bb, bound_in + bb) - ay)
    # |c| = |y| + 10^i（careless 往下写错）：10^i ≤ room；|c| = |y| − 10^i（往上写错）：c 要有第 i 位，即 2 · 10^i ≤ |y|，
    # c = 0 只在 y = 1（0 往上写错只有 +1）；y = 0 时两边都是 |c| = 10^i，正负各一
    grow = np.where(room >= 1, _digits(np.minimum(room, 4e18).astype(np.int64)), 0)
    # 整数 |x| ≤ bound_in ⇔ |x| ≤ ⌊bound_in⌋：用整数比较，不用把 x 转成浮点数。候选的 |x| 都 < 4·10^18（10^i 最多到 10^18），
    # 所以上界截到 4·10^18 不会多去掉候选
    limit = np.floor(np.minimum(bound_in, 4e18)).astype(np.int64)
    shrink = np.where(y == 0, grow, np.where(y == 1, 1, np.where(ay >= 2, _digits(ay // 2), 0)))
    parts = []                                                             # (来源行, x, 做法)
    for group in (np.nonzero(~mul)[0], np.nonzero(mul)[0]):               # 加减一组、乘一组
        if not len(group):
            continue
        by_mul = bool(mul[group[0]])
        sgg = sg[group]
        # 加法 x = c − b，减法 x = c + b；乘法 x = c / b（要整除；乘 0 的步不倒着走）
        move = np.maximum(b[group], 1) if by_mul else np.where(op[group] == 0, -b[group], b[group])
        lim, yg = limit[group], y[group]
        k, x = _solve(yg, move, lim, by_mul)                               # correct
        parts.append((group[k], x, 0))
        neg = x < 0                                                        # 负数上 bug 就是 correct
        parts.append((group[k[neg]], x[neg], 1))
        for count, side in ((grow[group], 1), (shrink[group], -1)):        # careless
            order = np.argsort(-count.astype(np.int8), kind="stable")    # 位数很小：int8 的稳定排序是基数排序
            top = -count[order]
            rows, yo, so, mo, lo = group[order], yg[order], side * sgg[order], move[order], lim[order]
            for i in range(int(-top[0])):
                m = np.searchsorted(top, -i)                               # 前 m 行还有第 i 位的候选
                c = yo[:m] + so[:m] * _POW10[i]
                k, x = _solve(c, mo[:m], lo[:m], by_mul)
                parts.append((rows[k], x, 2))
    # bug：只对 y ≥ 0；只有 b 的 D 位会被 bug 改，更高的位原样照抄（x 的高位 = y 的高位）
    pos = y >= 0
    D = len(str(int(b.max()))) if n else 1
    high = y - y % _POW10[D]
    ra = np.nonzero(pos & (op == 0))[0]                                    # 加法不进位：x_d = (y_d − b_d) mod 10
    xa = high[ra]
    for d in range(D):
        xa = xa + ((y[ra] // _POW10[d] - b[ra] // _POW10[d]) % 10) * _POW10[d]
    rm = np.nonzero(pos & (op == 2))[0]                                    # 乘法：x = y / (b 的各位数字之和)
    ds = np.maximum(sum((b[rm] // _POW10[d]) % 10 for d in range(D)), 1)
    keep = y[rm] % ds == 0
    rm, xm = rm[keep], (y[rm] // ds)[keep]
    rs = np.nonzero(pos & (op == 1))[0]                                    # 减法大减小：每一位 x_d = b_d ± y_d
    xs = high[rs]
    for d in range(D):
        yd, bd = (y[rs] // _POW10[d]) % 10, (b[rs] // _POW10[d]) % 10
        up = np.nonzero(bd + yd <= 9)[0]
        down = np.nonzero((yd > 0) & (bd >= yd))[0]                        # y_d = 0 时两个解相同，只算一次
        rs = np.concatenate([rs[up], rs[down]])
        xs = np.concatenate([xs[up] + (bd + yd)[up] * _POW10[d], xs[down] + (bd - yd)[down] * _POW10[d]])
    brow = np.concatenate([ra, rm, rs])
    bx = np.concatenate([xa, xm, xs])
    okb = np.nonzero((bx >= 0) & (bx <= limit[brow]))[0]
    parts.append((brow[okb], bx[okb], 1))
    sizes = [len(r) for r, _, _ in parts]
    proc = np.repeat(np.array([k for _, _, k in parts], dtype=np.int8), sizes)
    return np.concatenate([r for r, _, _ in parts]), np.concatenate([x for _, x, _ in parts]), proc


def state_key(pid, x):
    """(题号, 值) 合成一个 int64 键（题号 < 2^21；|值| ≥ _FAR 的都算成 ±_FAR），按键排序 = 先按题号、再按值排序。"""
    key = pid * (4 * _FAR)
    if len(x) and (x.min() <= -_FAR or x.max() >= _FAR):
        x = np.clip(x, -_FAR, _FAR)
    key += x
    return key


def merge_states(pid, x, w):
    """把相同的 (题号, 值) 合并（概率相加），去掉概率为 0 的行；结果按 (题号, 值) 排好。"""
    if len(w) and w.min() <= 0:
        keep = np.nonzero(w > 0)[0]
        pid, x, w = pid[keep], x[keep], w[keep]
    if not len(w):
        return pid, x, w
    first = np.ones(len(x), dtype=bool)
    if -_FAR < x.min() and x.max() < _FAR:                   # 常见情况：一个 int64 键排一次
        key = pid * (4 * _FAR)
        key += x
        order = np.argsort(key, kind="stable")
        key = key[order]
        first[1:] = key[1:] != key[:-1]
    else:
        order = np.lexsort((x, pid))
        first[1:] = (x[order[1:]] != x[order[:-1]]) | (pid[order[1:]] != pid[order[:-1]])
    starts = np.nonzero(first)[0]
    head = order[starts]
    return pid[head], x[head], np.add.reduceat(w[order], starts)


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


def _outcomes(state, rows, step, batch, tables):
    """
    rows 这些状态往前走一步的全部结果：(题号, 新值, 走到新值的概率)（step_outcomes，来源的概率已经乘进去）。
    tables：(L, 12, 3) 每一步的概率表；只有一张 (1, 12, 3) 时所有步共用它（有思维链的模型）。
    """
    pid, x, w = state
    pid, x = pid[rows], x[rows]
    t = step[pid]
    op, b = batch.ops[pid, t], batch.operands[pid, t]
    ctx = context_ids_np(op, x, b)
    return step_outcomes(op, x, b, tables[0][ctx] if len(tables) == 1 else tables[t, ctx], pid, w[rows])


def _sources(state, rows, step, batch, bound):
    """倒着走一步的候选（还没算概率）：preimages 的 (来源行, x, 做法)，加上 rows 这些状态的 (运算, 运算数, 步号)。"""
    pid, y, _ = state
    pid, y = pid[rows], y[rows]
    t = step[pid]
    op, b = batch.ops[pid, t], batch.operands[pid, t]
    return preimages(op, b, y, bound[pid, t]) + (op, b, t)


def _source_probs(op, x, b, t, proc, tables):
    """
    从 x 用做法 proc 在第 t 步写出 y 的概率 π(做法 | c(x)) · 系数（每个候选一个）。

    系数：correct、bug 是 1；careless 是 1 / (2 · c 的位数)（挑中这一位、再挑中这个方向），c = 0 时是 1（0 只能写成 1）。
    c 是 x 这一步的正确结果（preimages 就是从 c 解出的 x），所以只给用得上的候选算（meet 只算查到的）。
    """
    at = context_ids_np(op, x, b)
    at *= 3
    at += proc
    if len(tables) > 1:
        at += t * (3 * tables.shape[1])
    p = tables.reshape(-1)[at]
    slip = np.nonzero(proc == 2)[0]
    c = exact_np(op[slip], x[slip], b[slip])
    keep = np.nonzero(c)[0]                                                # c = 0 的系数是 1
    slip = slip[keep]
    p[slip] *= 0.5 / _digits(c[keep])
    return p


def advance(state, move, step, forward, batch, tables, bound):
    """
    把 move[题号] 为真的题的状态往前（或倒着）走一步，第 step[题号] 步；其余的题原样保留。
    状态按 (题号, 值) 排好（merge_states 的顺序），走完以后仍然排好。
    """
    pid, x, w = state
    go = move[pid]
    rows = np.nonzero(go)[0]
    if not len(rows):
        return state
    if forward:
        new = merge_states(*_outcomes(state, rows, step, batch, tables))
    else:
        src, y, proc, op, b, t = _sources(state, rows, step, batch, bound)
        new = merge_states(pid[rows][src], y, w[rows][src] * _source_probs(op[src], y, b[src], t[src], proc, tables))
    stay = np.nonzero(~go)[0]
    if not len(stay):
        return new
    # 两段都按题号排好、题号不重叠：按每道题的状态数算出每一段在结果里的位置，不用重新排序
    P = len(move)
    n_new = np.bincount(new[0], minlength=P)
    start = np.cumsum(np.bincount(pid[stay], minlength=P) + n_new) - np.bincount(pid[stay], minlength=P) - n_new
    at = start[new[0]] + np.arange(len(new[0])) - (np.cumsum(n_new) - n_new)[new[0]]
    into = np.ones(len(stay) + len(at), dtype=bool)
    into[at] = False
    out = []
    for old, fresh in zip(state, new):
        arr = np.empty(len(into), dtype=old.dtype)
        arr[at], arr[into] = fresh, old[stay]
        out.append(arr)
    return tuple(out)


_HASH = np.uint64(0x9E3779B97F4A7C15)              # 乘法散列的乘数（2^64 / 黄金比例，奇数）
_NO_KEY = np.iinfo(np.int64).min                  # 哨兵：state_key 的键都大于它


def _find(table, key):
    """
    在排好的 table 里找 key 的每一项：返回 (找到的 key 的位置, 它在 table 里的位置)，和逐个二分查找的结果相同。

    【思路】二分查找每个数要跳十几次、每次都可能缺缓存，而大多数 key 根本不在表里。所以用散列表：
        table 的每一项按乘法散列放进 4 倍大的槽里（槽里记它在 table 里的位置，空槽记 n），key 只看自己的槽：
        槽里那一项就是它，就找到了，槽空着或者是别的数就不在表里。几项撞进同一个槽时那个槽作废，落进作废的槽的 key
        再二分查找一次（很少）。
    """
    n = len(table)
    bits = max(int(4 * n).bit_length(), 10)
    shift = np.uint64(64 - bits)
    slot_of = table.view(np.uint64) * _HASH
    slot_of >>= shift
    slots = np.full(1 << bits, n, dtype=np.int32)         # 空槽记 n（指向一个和任何键都不相等的哨兵）
    idx = np.arange(n, dtype=np.int32)
    slots[slot_of] = idx
    slots[slot_of[slots[slot_of] != idx]] = n + 1         # 撞过的槽记 n + 1：落到这里的 key 要二分查找
    hk = key.view(np.uint64) * _HASH
    hk >>= shift
    j = slots[hk]
    good = np.append(table, (_NO_KEY, _NO_KEY))[j] == key  # j = n + 1 的下面重新查
    redo = np.nonzero(j == n + 1)[0]
    if len(redo):
        i = np.searchsorted(table, key[redo])
        np.minimum(i, n - 1, out=i)
        j[redo] = i
        good[redo] = table[i] == key[redo]
    hit = np.nonzero(good)[0]
    return hit, j[hit]


def meet(fwd, bwd, move, forward, step, batch, tables, bound):
    """
    move[题号] 为真的题只差一步（第 step[题号] 步）就两头相遇：不再合并，这一步的每个结果直接到另一头查表。
    forward 为真：往前走一步，结果 y 查 V(y)；否则倒着走一步，来源 x 查 P(走到 x)。
    【返回】(P,) 这些题答对的概率（其余的题是 0）；另一头的状态要按 (题号, 值) 排好。
    """
    mine, other = (fwd, bwd) if forward else (bwd, fwd)
    pid, _, w = mine
    rows = np.nonzero(move[pid])[0]
    P = len(move)
    if not len(rows) or not len(other[0]):
        return np.zeros(P)
    there = np.nonzero(move[other[0]])[0]                  # 另一头只留这些题的状态（仍然排好）
    if not len(there):
        return np.zeros(P)
    table = state_key(other[0][there], other[1][there])
    if forward:                                            # 往前：结果的概率里已经乘了来源的概率
        q, y, pw = _outcomes(mine, rows, step, batch, tables)
        hit, i = _find(table, state_key(q, y))
        q, pw = q[hit], pw[hit]
    else:                                                  # 倒着：先查表，只给查到的候选算情境和概率
        src, y, proc, op, b, t = _sources(mine, rows, step, batch, bound)
        q = pid[rows][src]
        hit, i = _find(table, state_key(q, y))
        src, q = src[hit], q[hit]
        pw = w[rows][src] * _source_probs(op[src], y[hit], b[src], t[src], proc[hit], tables)
    return np.bincount(q, weights=pw * other[2][there[i]], minlength=P)
