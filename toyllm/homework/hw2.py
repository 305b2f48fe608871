"""
作业二 · SFT 与评估 的检查：check_pass_at_k、check_rejection_sampling_round（框架见 framework.py）。
"""

import math
import random

import numpy as np

from .._checks import as_generator
from ..arithmetic import make_problem_set
from ..estimators import pass_at_k
from ..trainable import TrainableLLM
from .framework import Crash, all_close, as_array, call, close, crashed, failed, fmt, passed, run

PASS_AT_K_CASES = tuple((n, c, k) for n in (1, 2, 3, 5, 8, 10) for c in range(n + 1) for k in range(1, n + 1)) + (
    (100, 3, 10), (100, 1, 50), (200, 7, 100), (1000, 2, 500), (50, 45, 10), (64, 0, 32))
"""check_pass_at_k 试的 (n, c, k)：小 n 的全部组合，加上几组大的（直接算阶乘会很慢或溢出）。"""


def fresh_pass_at_k_cases(rng, n=8):
    """评分时新抽的 (n, c, k)：n = 1 … 300。"""
    out = []
    for _ in range(n):
        total = int(rng.integers(1, 301))
        out.append((total, int(rng.integers(0, total + 1)), int(rng.integers(1, total + 1))))
    return tuple(out)


def check_pass_at_k(fn, rng=None):
    """
    检查 fn(n, c, k) 是否是 pass@k 的无偏估计 1 − C(n − c, k) / C(n, k)（Chen et al. 2021）。

    【参数】fn：你的函数，n 次采样里 c 次做对，返回"随机挑 k 个至少一个对"的概率；
        rng：numpy Generator，给了时再加几组随机抽的 (n, c, k)（自动评分用，每次评分都不同）
    【返回】CheckResult
    【边界】会试 n − c < k 的情况（答案是 1）、c = 0（答案是 0）和 n = 1000 这样的大数。
    【例子】check_pass_at_k(my_pass_at_k)
    """
    table = PASS_AT_K_CASES + (() if rng is None else fresh_pass_at_k_cases(as_generator("rng", rng)))
    return run(fn, "pass_at_k", lambda name, fn: _check_pass_at_k(name, fn, table), [pass_at_k])


def _check_pass_at_k(name, fn, table):
    got, errors = [], []
    for n, c, k in table:
        try:
            got.append(as_array(call(fn, n, c, k)))
        except Crash as e:
            got.append(None)
            errors.append(((n, c, k), str(e)))
    want = [pass_at_k(n, c, k) for n, c, k in table]
    if not errors and all_close(got, want, rtol=1e-9, atol=1e-12):
        return passed(name, f"通过（{len(table)} 组 (n, c, k)，包括 n − c < k 和 n = 1000）")
    if errors:
        (n, c, k), err = errors[0]
        hints = []
        if any(n - c < k for (n, c, k), _ in errors):
            hints.append("n − c < k 时（错的不到 k 个），随便挑 k 个必定有一个对的，pass@k = 1；这种情况要单独处理。")
        if any(n >= 100 for (n, c, k), _ in errors):
            hints.append("n 很大时出错了：不要算阶乘再相除（会溢出），用 math.comb，或者用乘积形式 ∏ (1 − k / i)。")
        return crashed(name, f"{err}（n = {n}, c = {c}, k = {k}）", "".join(hints))
    for (n, c, k), g in zip(table, got):
        if g is None or g.shape != ():
            return failed(name, f"应该返回一个数（float），你返回的是 {'None' if g is None else f'形状 {g.shape} 的数组'}"
                                f"（n = {n}, c = {c}, k = {k}）。")
    small = [i for i, (n, c, k) in enumerate(table) if n <= 10]
    wrong = {
        "这是有放回抽样的估计 1 − (1 − c/n)^k。它是「有偏」的（偏低）：从 n 个样本里挑 k 个是不放回的，"
        "应该用组合数 1 − C(n − c, k) / C(n, k)。":
            lambda n, c, k: 1 - (1 - c / n) ** k,
        "结果和 k 无关：c / n 只是 pass@1。pass@k 问的是挑 k 个里至少一个对。":
            lambda n, c, k: c / n,
        "C(n − c, k) / C(n, k) 是挑出的 k 个「全错」的概率；pass@k 要用 1 减去它。":
            lambda n, c, k: math.comb(n - c, k) / math.comb(n, k),
        "1 − C(c, k) / C(n, k) 不对：要数的是全错的挑法 C(n − c, k)（从 n − c 个错的里挑 k 个）。":
            lambda n, c, k: 1 - math.comb(c, k) / math.comb(n, k),
        "差了一个：条件是 n − c < k，不是 n − c <= k。n − c = k 时（错的正好 k 个），挑出的 k 个可能全是错的"
        "（概率 1 / C(n, k)；例如 n = 5、c = 2、k = 3 时是 1 / 10），pass@k 是 1 − 1 / C(n, k)，还不是 1。":
            lambda n, c, k: 1.0 if n - c <= k else 1 - math.comb(n - c, k) / math.comb(n, k),
    }
    for hint, f in wrong.items():
        if all(close(got[i], f(*table[i]), rtol=1e-9, atol=1e-12) for i in small):
            return failed(name, hint, _pass_example(table, got, want))
    edge = [i for i, (n, c, k) in enumerate(table) if n - c < k]
    rest = [i for i in range(len(table)) if i not in edge]
    if all(close(got[i], want[i], rtol=1e-9, atol=1e-12) for i in rest):
        return failed(name, "n − c < k 时（错的不到 k 个），pass@k 应该正好是 1。", _pass_example(table, got, want))
    if all(close(got[i], want[i], rtol=1e-9, atol=1e-12) for i in small):
        return failed(name, "小的 n 都对了，大的 n 不对：是不是精度丢了？试试 math.comb 或乘积形式 ∏ (1 − k / i)。",
                      _pass_example(table, got, want))
    if any(not (-1e-12 <= float(g) <= 1 + 1e-12) for g in got):
        return failed(name, "概率应该在 0 和 1 之间，你的结果有超出范围的。", _pass_example(table, got, want))
    return failed(name, "对比一下下面这个例子；乘积形式是 1 − ∏_{i = n − c + 1}^{n} (1 − k / i)。", _pass_example(table, got, want))


def _pass_example(table, got, want):
    for (n, c, k), g, w in zip(table, got, want):
        if not close(g, w, rtol=1e-9, atol=1e-12):
            return [f"例子：n = {n}, c = {c}, k = {k}：你的 {fmt(g)}，应该 {w:.6g}"]
    return []


def _round_setup(seed=3):
    """check_rejection_sampling_round 用的模型和题：Δ 随机的 1B 模型，20 道 3 … 6 步的题。"""
    model = TrainableLLM(1e9, name="检查用的模型")
    model.params[:] = np.random.default_rng(seed).normal(0.0, 0.5, size=model.params.shape)
    return model, make_problem_set(random.Random(seed), 20, 3, 6)


ROUND_ARGS = dict(k=4, epochs=5, lr=1.5)
"""check_rejection_sampling_round 调用你的函数时用的参数（故意不是默认值，看你是不是用了传进来的参数）。"""


def check_rejection_sampling_round(fn, seed=5, rng=None):
    """
    检查 fn(model, problems, k, rng, epochs, lr) 是否做了一轮拒绝采样微调（STaR 不带合理化的一轮）：
    用 rng 调一次 sample_rollouts 每题采 k 份 → 只留做对的 → 在模型的**副本**上 SFT → 返回 (新模型, 留下的数据)。

    【思路】用同一个种子，自己按正确的做法做一遍（结果和包里的 imitation.rejection_sampling_ft 相同），
        比较新模型的参数；不一样时，再试几种常见错误：没有过滤、留下的是做错的、去了重、
        没用传进来的 epochs / lr、直接改了原模型。
    【参数】fn：你的函数；seed：生成 rng 的种子；rng：numpy Generator，给了时模型、题目和种子都从它新抽
        （自动评分用，每次评分都不同）
    【返回】CheckResult
    【例子】check_rejection_sampling_round(rejection_sampling_round)
    """
    from ..imitation import rejection_sampling_ft, star

    setup = 3
    if rng is not None:
        setup, seed = (int(x) for x in as_generator("rng", rng).integers(0, 2 ** 31, 2))
    return run(fn, "rejection_sampling_round", lambda name, fn: _check_round(name, fn, seed, setup),
               [rejection_sampling_ft, star])


def _check_round(name, fn, seed, setup=3):
    from ..imitation import distinct_mask, sft_rollouts
    from ..sampler import sample_rollouts

    model, problems = _round_setup(setup)
    before = model.params.copy()
    out = call(fn, model, list(problems), ROUND_ARGS["k"], np.random.default_rng(seed),
               epochs=ROUND_ARGS["epochs"], lr=ROUND_ARGS["lr"])
    if isinstance(out, TrainableLLM):
        return failed(name, "请返回两样东西：(新模型, 留下的数据)，例如 return new_model, data。")
    if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], TrainableLLM)):
        return failed(name, f"应该返回 (新模型, 留下的数据)，新模型是 TrainableLLM；你返回的是 {type(out).__name__}。")
    new, data = out
    if new is model or not np.array_equal(model.params, before):
        return failed(name, "原来的模型被改掉了：要先 model.copy() 得到一个副本，在副本上做 SFT，原模型不要动"
                            "（下一轮还要用它做对照）。")
    roll = sample_rollouts(model, problems, ROUND_ARGS["k"], np.random.default_rng(seed))

    def tuned(keep, epochs=ROUND_ARGS["epochs"], lr=ROUND_ARGS["lr"]):
        m = model.copy()
        sft_rollouts(m, roll, keep=keep, epochs=epochs, lr=lr)
        return m.params

    want = tuned(roll.correct)
    n_right = int(roll.correct.sum())
    if close(new.params, want, rtol=1e-7, atol=1e-9):
        try:
            n_data = len(data)
        except TypeError:
            return failed(name, "新模型对了，但第二个返回值应该是留下的数据（一个列表），你返回的是 "
                                f"{type(data).__name__}。")
        if n_data != n_right:
            return failed(name, f"新模型对了，但留下的数据有 {n_data} 份，应该是做对的 {n_right} 份。")
        return passed(name, f"通过（{len(problems)} 道题 × {ROUND_ARGS['k']} 份，留下 {n_right} 份做对的，"
                            f"微调后的参数和包里的 rejection_sampling_ft 一致）")
    wrong = {
        "没有过滤：所有解答都拿去做 SFT 了。拒绝采样只留「做对的」（sample.correct 为 True 的）。":
            np.ones(len(roll), bool),
        "留下的是做错的解答：条件写反了，应该留 correct 为 True 的。": ~roll.correct,
        "这一题不去重：做对的解答全部留下（去重是 rejection_sampling_ft 的 dedup=True 选项）。":
            distinct_mask(roll, roll.correct),
    }
    for hint, keep in wrong.items():
        if close(new.params, tuned(keep), rtol=1e-7, atol=1e-9):
            return failed(name, hint)
    if close(new.params, tuned(roll.correct, 30, 2.0), rtol=1e-7, atol=1e-9):
        return failed(name, "SFT 没有用传进来的 epochs 和 lr（用了默认值）：sft(new_model, data, epochs=epochs, lr=lr)。")
    if np.array_equal(new.params, before):
        return failed(name, "新模型的参数和原模型一模一样：是不是忘了对副本做 SFT？")
    return failed(name, "新模型的参数和「只留做对的解答做 SFT」的结果不同。请用传进来的 rng 只调用一次 "
                        "sample_rollouts(model, problems, k, rng)（别的随机数用法会得到不同的样本），"
                        "再用 rollouts_to_data(problems, roll, keep=roll.correct) 取出做对的解答。")

