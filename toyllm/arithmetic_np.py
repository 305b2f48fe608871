"""
整批算术（numpy）：情境编号、三种做法的向量化版本。采样器和精确答案引擎一次处理成千上万步时用。

【思路】和 toyllm.arithmetic 里逐个的版本（step_hardness、apply_op……）是同一个定义，结果逐个相同（tests/unit/model/test_arithmetic.py、
    tests/unit/invariants/test_properties.py 对照）；这里只是把一整批数放进数组一起算。情境编号是 CONTEXTS 里的下标：运算下标 × 4 + 难度档位
    （OPS = ("add", "sub", "mul")，难度表见 arithmetic.ADD_HARDNESS 等）。
    context_ids_np、bug_np 各有两种算法：数组长、数不大时逐位用 int32 算（快几倍），否则用任意大小都对的通用算法。
"""

import numpy as np


def context_ids_np(op_ids, a, b):
    """
    向量化：每一步的情境编号（CONTEXTS 里的下标）。

    【参数】op_ids：int 数组（OPS 的下标）；a、b：int64 数组，形状相同
    【返回】int 数组：CONTEXTS 的下标 = 运算下标 × 4 + 难度档位
    【思路】进位（借位）只看低 K 位，K = 最大的 |b| 的位数 + 2（见 _context_ids_general 的说明：档位最多数到 3，
        数到"小的那个数的位数 + 2"位就够，多数几位结果不变）。都放得进 int32 时按下面注释里的"⌊X/10^k⌋ 之差"数进位；
        放不进 int32、|b| 太大（K > 9）或者数组很短（< _FAST_SIZE 个，逐位循环的每一次 numpy 调用都有固定开销，
        通用算法调用次数少）时用通用算法。
        两种算法逐个相同（tests/unit/model/test_arithmetic.py 对照）；这个快几倍（采样器和 exact.answer_probs 每一步都要算）。
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return np.zeros(a.shape, dtype=np.int64)
    op = op_ids
    a_max, b_max = max(int(a.max()), -int(a.min())), max(int(b.max()), -int(b.min()))     # 最大的 |a|、|b|
    K = len(str(b_max)) + 2
    if K > 9 or a.size < _FAST_SIZE or a_max + b_max >= 2 ** 31:
        return _context_ids_general(op, np.abs(a), np.abs(b))
    # 常见情况：都放得进 int32。第 k 位（k = 1…K）进位 ⇔ ⌊(u+v)/10^k⌋ − ⌊u/10^k⌋ − ⌊v/10^k⌋ = 1（否则是 0），
    # 所以进位数 = Σ_k ⌊X/10^k⌋ − ⌊U/10^k⌋ − ⌊V/10^k⌋，X = U + V：加法 U = a、V = b；
    # 减法的借位就是"小 + 差 = 大"的进位：U = 小、V = 差、X = 大（乘法不用，按加法算了扔掉）。
    # 临时数组都是 int32、原地算（少占内存：大数组用完还给系统，下次要重新缺页）
    ar, br = a.astype(np.int32), b.astype(np.int32)
    np.abs(ar, out=ar)
    np.abs(br, out=br)
    sub = op == 1
    u = np.where(sub, np.minimum(ar, br), ar)
    v = np.subtract(ar, br)
    np.abs(v, out=v)
    np.copyto(v, br, where=~sub)
    xs = np.add(u, v)
    count, tmp = np.zeros(len(a), dtype=np.int32), np.empty(len(a), dtype=np.int32)
    for k in range(1, K + 1):
        p = np.int32(10 ** k)
        count += np.floor_divide(xs, p, out=tmp)
        count -= np.floor_divide(u, p, out=tmp)
        count -= np.floor_divide(v, p, out=tmp)
    np.minimum(count, 3, out=count)
    mul = np.nonzero(op == 2)[0]
    count[mul] = (br[mul] >= 10) * np.int32(2) + (ar[mul] >= 100)
    out = np.multiply(op, 4, dtype=np.result_type(op, count))           # = op * 4 + count（原地加，少一个大数组）
    out += count
    return out


def _context_ids_general(op_ids, a, b):
    """context_ids_np 的通用算法（a、b 已经取了绝对值、不为空）：任意大小的数都对。"""
    # 低 k 位向高位进位 ⇔ (a mod 10^k) + (b mod 10^k) ≥ 10^k；借位 ⇔ (大 mod 10^k) < (小 mod 10^k)。
    # 每个 k 一行（形状 (D, N)），一次算完所有数位，不用逐位循环。档位最多数到 3，所以 k 只要到"小的那个数的位数 d + 2"：
    # k > d 时第 k 位有进位（借位）⇒ 第 k − 1 位也有（那一位必须是 9（0）），所以 d 以上的进位（借位）从 d 开始一位接一位，
    # 数到 d + 2 时要么已经有 3 个，要么已经断了。
    p = _powers_of_ten(max(int(a.max()), int(b.max())))[1:, None]
    p = p[:len(str(int(np.minimum(a, b).max()))) + 2]
    am, bm = a % p, b % p
    carries = (am + bm >= p).sum(axis=0)
    borrows = np.where(a >= b, am < bm, bm < am).sum(axis=0)
    level = np.where(op_ids == 0, np.minimum(carries, 3),
                     np.where(op_ids == 1, np.minimum(borrows, 3), 2 * (b >= 10) + (a >= 100)))
    return op_ids * 4 + level


def exact_np(op_ids, a, b):
    """向量化的正确做法：op_ids 为 0 / 1 / 2 的位置分别算 a + b、a − b、a × b。"""
    return np.where(op_ids == 0, a + b, np.where(op_ids == 1, a - b, a * b))


def apply_op_np(op_ids, a, b, proc_ids, rng, exact=None, bug=None):
    """
    向量化：按做法算一步，和 apply_op 的定义相同（careless 的随机数来自 numpy 的 rng，所以具体的错值分布相同、序列不同）。

    【参数】op_ids、proc_ids：int 数组（OPS、PROCEDURES 的下标）；a、b：int64 数组；rng：numpy.random.Generator；
        exact、bug：可选，已经算好的正确结果、bug 的结果（采样器查表得到，传进来省掉计算；bug 只用到选了 bug 的位置）
    【返回】int64 数组
    """
    if exact is None:
        exact = exact_np(op_ids, a, b)
    out = exact.copy() if bug is None else np.where(proc_ids == 1, bug, exact)
    rows = np.nonzero(proc_ids == 1)[0] if bug is None else ()
    if len(rows):
        out[rows] = bug_np(op_ids[rows], a[rows], b[rows], exact[rows])
    slip = np.nonzero(proc_ids == 2)[0]
    if len(slip):
        e = exact[slip]
        m = np.abs(e)
        n_digits = np.searchsorted(_TENS, m, side="right") + 1         # 位数 = 1 + 不超过 m 的 10, 100, … 的个数
        i = (rng.random(m.shape) * n_digits).astype(np.int64)          # 非负数截断取整 = 向下取整：哪一位
        up = (rng.random(m.shape) < 0.5) | (m == 0)
        step = _POWERS_OF_TEN[i]
        m = np.where(up, m + step, m - step)
        out[slip] = np.where(e < 0, -m, m)
    return out


_POWERS_OF_TEN = 10 ** np.arange(19, dtype=np.int64)      # 10^0 … 10^18（int64 放得下的最大 10 的幂）
_TENS = _POWERS_OF_TEN[1:]                                 # 10 … 10^18：数位数用


def _powers_of_ten(largest):
    """[1, 10, 100, …, 10^D]，D = largest 的位数（largest = 0 时 D = 1）；D 最多 18。"""
    return _POWERS_OF_TEN[:len(str(largest)) + 1]


_FAST_SIZE = 256
"""context_ids_np、bug_np：数组至少这么长时用逐位的快速算法（短数组用通用算法：numpy 调用次数少）。"""


def bug_np(op, x, b, exact):
    """
    向量化：bug 做法的结果（非负数逐位不进位地加 / 减，乘法乘以 b 的各位数字之和；有负数时就是正确结果 exact）。

    【思路】常见情况操作数 b 只有几位（0 ≤ b < 10^4）：只逐位算 b 的那几位，更高的位 bug 不改（加 0、减 0），
        数都放得进 int32 时逐位用 int32 算；否则（或者数组很短）用 _bug_general。两种算法逐个相同（tests/unit/model/test_arithmetic.py 对照）。
    【参数】op：int 数组（OPS 的下标）；x、b、exact：int64 数组（exact 是正确结果，exact_np 算的）
    【返回】int64 数组
    """
    xs = np.maximum(x, 0)
    if len(x) < _FAST_SIZE or b.min() < 0 or b.max() >= 10 ** 4 or int(xs.max()) >= 2 ** 31:
        return _bug_general(op, x, b, exact)
    D = len(str(int(b.max())))
    # 常见情况：都放得进 int32，逐位算 b 的那几位（int32 的除法快得多）；原地算，少开临时数组
    x32, b32 = xs.astype(np.int32), b.astype(np.int32)
    low, digit_sum = np.zeros(len(x), dtype=np.int32), np.zeros(len(x), dtype=np.int32)
    add = op == 0
    for d in range(D):
        p = np.int32(10 ** d)
        xd, bd = x32 // p, b32 // p
        xd %= 10
        bd %= 10
        digit_sum += bd
        s = xd + bd                                               # 加法这一位：(x_d + b_d) mod 10
        s %= 10
        np.subtract(xd, bd, out=xd)                               # 减法这一位：|x_d − b_d|
        np.abs(xd, out=xd)
        np.copyto(xd, s, where=add)
        xd *= p
        low += xd
    out = xs - xs % _POWERS_OF_TEN[D]                             # b 没有的高位原样照抄
    out += low
    mul = np.nonzero(op == 2)[0]
    out[mul] = xs[mul] * digit_sum[mul]
    return np.where(x >= 0, out, exact)


def _bug_general(op_ids, a, b, exact):
    """bug_np 的通用算法：任意大小的数都对。"""
    if a.min() >= 0 and b.min() >= 0:                 # 常见情况：都是非负数，不用逐个挑出负数
        ok, x, y = True, a, b
    else:
        ok = (a >= 0) & (b >= 0)
        x, y = np.where(ok, a, 0), np.where(ok, b, 0)
    p = _powers_of_ten(max(int(x.max()), int(y.max())))[:-1, None]     # 每个数位一行
    dx, dy = (x // p) % 10, (y // p) % 10
    col = np.where(op_ids == 0, (dx + dy) % 10, np.abs(dx - dy))
    bug = np.where(op_ids == 2, a * dy.sum(axis=0), (col * p).sum(axis=0))
    return np.where(ok, bug, exact)
