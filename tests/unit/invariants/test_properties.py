"""
性质测试（hypothesis）：对随机生成的大量输入检查"永远成立"的规律。

【思路】单元测试检查几个挑好的例子；性质测试让 hypothesis 随机造几百个输入（包括负数、很大的数、
    边界上的值），检查一条规律是不是对每一个都成立；找到反例时它还会把反例缩到最小再报告。
"""

import itertools
import math
import os
import random
import tempfile
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from toyllm import CONTEXTS, OPS, PROCEDURES, ToyLLM, TrainableLLM, apply_op, bug_bites, pass_at_k, step_hardness
from toyllm import rl
from toyllm.arithmetic import CONTEXT_INDEX, OP_INDEX, apply_op_np, context_ids_np
from tools.checkpoint import load_history, load_model, save_model
from toyllm.policy import prob_table, softmax_rows

FAST = settings(max_examples=60, deadline=None)
FILES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ops = st.sampled_from(OPS)
small_ints = st.integers(-10**6, 10**6)
big_ints = st.integers(-10**9, 10**9)                 # |a × b| ≤ 10^18：还在 int64 里
any_ints = st.one_of(st.integers(0, 120), small_ints, big_ints)


def exact(op, a, b):
    return a + b if op == "add" else a - b if op == "sub" else a * b


def careless_support(op, a, b):
    """careless 可能给出的全部结果：结果的某一位 ±1（为 0 时只能 +1），符号不变。独立于实现计算。"""
    c = exact(op, a, b)
    m = abs(c)
    out = set()
    for i in range(len(str(m))):
        for new in ((m + 10 ** i, m - 10 ** i) if m else (m + 1,)):
            out.add(-new if c < 0 else new)
    return out


# =============================================================================
# 三种做法
# =============================================================================
@FAST
@given(ops, any_ints, any_ints, st.integers(0, 2**32))
def test_apply_op_procedures(op, a, b, seed):
    c = apply_op(op, a, b, "correct")
    assert c == exact(op, a, b)
    bug = apply_op(op, a, b, "bug")
    assert (bug == c) == (not bug_bites(op, a, b))      # bug 和 correct 一致，恰好当错误观念不"咬人"
    slip = apply_op(op, a, b, "careless", random.Random(seed))
    assert slip != c                                    # 粗心一定是错的
    assert slip in careless_support(op, a, b)


@FAST
@given(ops, st.integers(0, 10**6), st.integers(0, 10**6))
def test_bug_on_nonnegative_numbers_is_the_named_misconception(op, a, b):
    """非负数上 bug 按"竖式里的错误观念"逐位算（独立地再实现一遍）。"""
    da, db = str(a)[::-1], str(b)[::-1]
    n = max(len(da), len(db))
    da, db = da.ljust(n, "0"), db.ljust(n, "0")
    if op == "add":
        expected = sum(((int(x) + int(y)) % 10) * 10 ** i for i, (x, y) in enumerate(zip(da, db)))
    elif op == "sub":
        expected = sum(abs(int(x) - int(y)) * 10 ** i for i, (x, y) in enumerate(zip(da, db)))
    else:
        expected = a * sum(int(d) for d in str(b))
    assert apply_op(op, a, b, "bug") == expected


@FAST
@given(ops, any_ints, any_ints)
def test_every_step_lands_in_a_listed_context(op, a, b):
    h = step_hardness(op, a, b)
    assert (op, h) in CONTEXT_INDEX and round(h, 1) == h


# =============================================================================
# 向量化版本 = 逐个版本
# =============================================================================
arrays = st.lists(st.tuples(ops, any_ints, any_ints), min_size=1, max_size=40)


@FAST
@given(arrays)
def test_context_ids_np_matches_scalar(rows):
    op_ids = np.array([OP_INDEX[o] for o, _, _ in rows], dtype=np.int64)
    a = np.array([x for _, x, _ in rows], dtype=np.int64)
    b = np.array([y for _, _, y in rows], dtype=np.int64)
    got = context_ids_np(op_ids, a, b)
    want = [CONTEXT_INDEX[(o, step_hardness(o, x, y))] for o, x, y in rows]
    assert got.tolist() == want


@FAST
@given(st.sampled_from(("add", "sub")), st.integers(1, 15), st.integers(0, 10_000), st.integers(0, 3), st.booleans())
def test_context_ids_np_long_carry_and_borrow_chains(op, nines, small, pad, swap):
    """进位 / 借位连着跨过小数以上的很多位（999…9 + 小数、1000…0 − 小数）：context_ids_np 只看到"小数的位数 + 3"，
    档位仍和逐个版本相同。"""
    big = (10 ** nines - 1) * 10 ** pad if op == "add" else 10 ** (nines + pad)
    a, b = (small, big) if swap else (big, small)
    got = context_ids_np(np.array([OP_INDEX[op]]), np.array([a], dtype=np.int64), np.array([b], dtype=np.int64))
    assert got.tolist() == [CONTEXT_INDEX[(op, step_hardness(op, a, b))]]


@FAST
@given(arrays, st.lists(st.sampled_from((0, 1, 2)), min_size=40, max_size=40), st.integers(0, 2**32))
def test_apply_op_np_matches_scalar(rows, procs, seed):
    procs = procs[:len(rows)]
    op_ids = np.array([OP_INDEX[o] for o, _, _ in rows], dtype=np.int64)
    a = np.array([x for _, x, _ in rows], dtype=np.int64)
    b = np.array([y for _, _, y in rows], dtype=np.int64)
    got = apply_op_np(op_ids, a, b, np.array(procs, dtype=np.int64), np.random.default_rng(seed)).tolist()
    for (o, x, y), p, g in zip(rows, procs, got):
        if p == 2:                                       # 随机数来源不同：比较"可能的结果"的集合
            assert g in careless_support(o, x, y)
        else:
            assert g == apply_op(o, x, y, PROCEDURES[p])


# =============================================================================
# 概率
# =============================================================================
deltas = st.lists(st.floats(-50, 50, allow_nan=False), min_size=36, max_size=36)
temperatures = st.one_of(st.just(0.0), st.floats(1e-3, 100.0), st.sampled_from([1e-3, 1.0, 100.0]))
sizes = st.one_of(st.floats(1e3, 1e15), st.sampled_from([1e3, 1e9, 1e15]))


@FAST
@given(sizes, deltas, temperatures, ops, small_ints, small_ints, st.integers(0, 19))
def test_step_probs_sum_to_one(size, delta, temperature, op, a, b, step):
    m = TrainableLLM(size)
    m.params[:] = np.reshape(delta, (12, 3))
    for model in (m, ToyLLM(size, cot=False)):
        p = model.step_probs(op, a, b, step, temperature)
        assert len(p) == 3 and all(0.0 <= x <= 1.0 for x in p)
        assert math.fsum(p) == pytest.approx(1.0, abs=1e-12)
        if temperature == 0:
            assert sorted(p) == [0.0, 0.0, 1.0]


@FAST
@given(sizes, deltas, temperatures, st.integers(0, 19))
def test_prob_table_rows_sum_to_one(size, delta, temperature, step):
    m = TrainableLLM(size)
    m.params[:] = np.reshape(delta, (12, 3))
    for model in (m, ToyLLM(size, cot=False)):
        t = prob_table(model, temperature, step)
        assert t.shape == (12, 3) and np.all(np.isfinite(t)) and np.all((t >= 0) & (t <= 1))
        assert np.allclose(t.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # 数组版本和逐步版本一致
    key = CONTEXTS[step % 12]
    row = prob_table(m, temperature)[CONTEXT_INDEX[key]]
    assert np.allclose(row, softmax_rows(np.array(m.context_logits(key)), temperature), atol=1e-12)


# =============================================================================
# pass@k
# =============================================================================
@st.composite
def nck(draw, max_n=60):
    n = draw(st.integers(1, max_n))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@FAST
@given(nck())
def test_pass_at_k_range_and_monotone(args):
    n, c, k = args
    p = pass_at_k(n, c, k)
    assert 0.0 <= p <= 1.0
    exact_value = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert p == pytest.approx(float(exact_value), abs=1e-12)
    if k < n:
        assert pass_at_k(n, c, k + 1) >= p - 1e-12      # k 越大越容易
    if c < n:
        assert pass_at_k(n, c + 1, k) >= p - 1e-12      # 做对的越多越容易
    assert (p == 0.0) == (c == 0)
    if n - c < k:
        assert p == 1.0


@settings(max_examples=100, deadline=None)
@given(nck(max_n=9))
def test_pass_at_k_equals_brute_force(args):
    n, c, k = args
    subsets = list(itertools.combinations(range(n), k))
    hits = sum(any(i < c for i in s) for s in subsets)     # 前 c 个样本是做对的
    assert pass_at_k(n, c, k) == pytest.approx(hits / len(subsets), abs=1e-12)


# =============================================================================
# 保存 / 读取
# =============================================================================
finite = st.floats(allow_nan=False, allow_infinity=False)
names = st.text(max_size=30)


@FILES
@given(st.floats(1.0, 1e300), st.lists(finite, min_size=36, max_size=36), names)
def test_save_load_round_trips_any_trainable_model(size, delta, name):
    m = TrainableLLM(size, name=name)
    m.params[:] = np.reshape(delta, (12, 3))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.json")
        save_model(m, path)
        m2 = load_model(path)
        assert os.listdir(d) == ["m.json"]
    assert type(m2) is TrainableLLM and m2.size == m.size and m2.name == m.name and m2.cot
    assert m2.params.tobytes() == m.params.tobytes()            # 逐位相同（包括 −0.0）
    with np.errstate(all="ignore"):
        assert prob_table(m2).tobytes() == prob_table(m).tobytes()


@FILES
@given(st.floats(1.0, 1e300), names, st.lists(st.floats(-1e300, 1e300), min_size=36, max_size=36))
def test_save_load_round_trips_any_trainable_model(size, name, delta):
    m = TrainableLLM(size, name=name)
    m.params[:] = np.reshape(delta, (12, 3))
    with tempfile.TemporaryDirectory() as d:
        save_model(m, os.path.join(d, "t.safetensors"))
        m2 = load_model(os.path.join(d, "t.safetensors"))
    assert type(m2) is TrainableLLM and (m2.size, m2.cot, m2.name) == (m.size, m.cot, m.name)
    assert m2.params.tobytes() == m.params.tobytes()


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), finite, st.text(max_size=10))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
histories = st.dictionaries(st.text(max_size=12), st.lists(st.one_of(json_scalars, st.lists(finite, max_size=3)),
                                                           max_size=8), max_size=5)


@FILES
@given(histories, st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_save_load_round_trips_any_history_and_metadata(history, metadata):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.safetensors")
        save_model(TrainableLLM(1e9), path, history=history, metadata=metadata)
        assert load_history(path) == {"metadata": metadata, "history": history}


# =============================================================================
# RL：优势和裁剪
# =============================================================================
@st.composite
def group_rewards(draw):
    g = draw(st.integers(2, 8))
    groups = draw(st.integers(1, 6))
    kind = draw(st.sampled_from(["binary", "real"]))
    elem = st.sampled_from([0.0, 1.0]) if kind == "binary" else st.floats(-10, 10)
    return g, np.array(draw(st.lists(elem, min_size=g * groups, max_size=g * groups)))


@FAST
@given(group_rewards(), st.sampled_from(["mean", "rloo", "grpo"]), st.sampled_from(["group", "batch", "none"]),
       st.sampled_from([1e-4, 1e-6, 1.0]))
def test_group_advantages_sum_to_zero_per_group(args, method, scale, eps):
    g, r = args
    a = rl.group_advantages(r, g, method, scale, eps)
    assert a.shape == r.shape and np.all(np.isfinite(a))
    per_group = a.reshape(-1, g)
    bound = 1e-9 * (1 + np.abs(per_group).max())
    assert np.all(np.abs(per_group.sum(axis=1)) <= bound)
    const = np.ptp(r.reshape(-1, g), axis=1) == 0
    assert np.all(per_group[const] == 0.0)              # 奖励全相同的组：优势精确为 0
    if method == "rloo":
        mean_version = rl.group_advantages(r, g, "mean")
        assert np.allclose(a, g / (g - 1) * mean_version, atol=1e-12)


@FAST
@given(st.integers(2, 8), st.integers(1, 5), st.floats(-5, 5), st.sampled_from(["none", "mean", "rloo", "grpo"]))
def test_constant_group_gives_zero_advantage(g, groups, value, method):
    r = np.full(g * groups, value)
    a = rl.group_advantages(r, g, method)
    if method == "none":
        assert np.array_equal(a, r)                     # REINFORCE 没有基线：A = r
    else:
        assert np.all(a == 0.0)


@st.composite
def step_rewards_batch(draw):
    g = draw(st.integers(2, 6))
    groups = draw(st.integers(1, 4))
    L = draw(st.integers(1, 8))
    B = g * groups
    lengths = draw(st.lists(st.integers(1, L), min_size=B, max_size=B))
    mask = np.arange(L)[None, :] < np.array(lengths)[:, None]
    r = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=B * L, max_size=B * L))).reshape(B, L)
    return g, np.where(mask, r, 0.0), mask


@FAST
@given(step_rewards_batch(), st.sampled_from(["mean", "grpo"]))
def test_process_advantages_normalised_per_group(args, method):
    """每步奖励：按组标准化后再从后往前累加，所以每组第一步的优势（= 全部标准化奖励之和）加起来是 0。"""
    g, r, mask = args
    a = rl.group_advantages(r, g, method, mask=mask)
    assert a.shape == r.shape and np.all(a[~mask] == 0.0)
    first = a[:, 0].reshape(-1, g)
    assert np.all(np.abs(first.sum(axis=1)) <= 1e-9 * (1 + np.abs(a).max() * r.shape[1]))
    rg, mg = r.reshape(-1, g, r.shape[1]), mask.reshape(-1, g, r.shape[1])
    for grp in range(rg.shape[0]):
        vals = rg[grp][mg[grp]]
        if vals.min() == vals.max():
            assert np.all(a.reshape(-1, g, r.shape[1])[grp] == 0.0)


clip_eps = st.floats(0.0, 0.9)


@FAST
@given(st.floats(-5, 5), clip_eps, clip_eps, st.floats(0.0, 1.0))
def test_clipped_surrogate_equals_unclipped_inside_the_range(adv, eps_low, eps_high, t):
    rho = (1 - eps_low) + t * (eps_low + eps_high)         # 区间 [1 − ε_low, 1 + ε_high] 里的一点
    assume(0 < rho and 1 - eps_low <= rho <= 1 + eps_high)     # 舍入可能让端点稍稍出界
    s = rl.clipped_surrogate(np.array([rho]), np.array([adv]), eps_low, eps_high)
    assert s.loss[0] == -rho * adv
    assert not s.clipped_low[0] and not s.clipped_high[0]


@FAST
@given(st.lists(st.tuples(st.floats(1e-3, 10.0), st.floats(-5, 5)), min_size=1, max_size=30), clip_eps, clip_eps)
def test_clipped_surrogate_is_pessimistic_and_flags_clipping(pairs, eps_low, eps_high):
    rho = np.array([p for p, _ in pairs])
    adv = np.array([a for _, a in pairs])
    s = rl.clipped_surrogate(rho, adv, eps_low, eps_high)
    assert np.all(s.loss >= -rho * adv)                   # min(...) 只会让目标更小：损失 ≥ 不裁剪的损失
    low = (rho < 1 - eps_low) & (adv < 0)
    high = (rho > 1 + eps_high) & (adv > 0)
    assert np.array_equal(s.clipped_low, low) and np.array_equal(s.clipped_high, high)
    clipped = low | high
    assert np.allclose(s.loss[clipped], -np.clip(rho, 1 - eps_low, 1 + eps_high)[clipped] * adv[clipped], atol=1e-12)
    assert np.array_equal(s.loss[~clipped], -np.minimum(rho * adv, np.clip(rho, 1 - eps_low, 1 + eps_high) * adv)[~clipped])


def test_mu_one_never_clips():
    """μ = 1 时 ρ ≡ 1：在任何 ε 下都不裁剪，损失等于 −A。"""
    adv = np.linspace(-3, 3, 13)
    for el, eh in ((0.0, 0.0), (0.2, 0.2), (0.2, 0.28)):
        s = rl.clipped_surrogate(np.ones(13), adv, el, eh)
        assert np.array_equal(s.loss, -adv) and not s.clipped_low.any() and not s.clipped_high.any()
