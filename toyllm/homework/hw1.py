"""
作业一 · 梯度 的检查：check_grad_log_softmax、check_solution_grad、check_estimate_vs_exact。

【思路】每个检查用准备好的输入调用同学的函数，和包里的正确实现比较；不对时先看是不是常见错误之一
    （符号反了、少了一项、大 logits 溢出、覆盖而不是累加……），见 framework.py 的说明。
"""

import random

import numpy as np

from .._checks import as_generator
from ..arithmetic import CONTEXT_INDEX, CONTEXTS, PROCEDURES, make_problem_set
from ..policy import softmax_rows
from ..toy_llm import softmax
from ..trainable import TrainableLLM, add_grad, context_key, score, score_vectors, step_records
from .framework import all_close, as_array, call, close, failed, fmt, guard, onehot, passed, run

GRAD_LOG_SOFTMAX_CASES = (
    ([2.0, 0.5, -1.0], 0), ([2.0, 0.5, -1.0], 1), ([0.0, 0.0, 0.0], 2), ([1.9, 0.0, -0.5], 2),
    ([-0.3, 1.2, 0.4], 0), ([3.0, -2.0, 0.5, 1.0, 0.0], 3), ([0.7, 0.7], 1), ([800.0, 799.0, 0.0], 1),
)
"""check_grad_log_softmax 用的 (logits, action)：有 3 个做法的，也有 2 个、5 个的；最后一组 logits 很大。"""


def fresh_logit_cases(rng, n=4):
    """评分时新抽的 (logits, action)：2 … 6 个做法，logits ~ N(0, 3)。"""
    out = []
    for _ in range(n):
        z = rng.normal(0.0, 3.0, int(rng.integers(2, 7))).round(3)
        out.append((z.tolist(), int(rng.integers(0, len(z)))))
    return tuple(out)


def check_grad_log_softmax(fn, rng=None):
    """
    检查 fn(logits, action) 是否返回 ∂ log softmax(z)_a / ∂ z_j = 1[j = a] − π_j（对每个 j，一个向量）。

    【参数】fn：你的函数，输入 logits（一串数）和 action（下标），返回和 logits 一样长的梯度向量；
        rng：numpy Generator，给了时再加几组随机抽的 logits（自动评分用，每次评分都不同）
    【返回】CheckResult（可以当 bool 用）
    【边界】会试 2 个、5 个做法的 logits（不要把 3 写死），以及很大的 logits（[800, 799, 0]：
        直接 exp(800) 会溢出，要先减去最大值）。
    【例子】check_grad_log_softmax(grad_log_softmax)
    """
    table = GRAD_LOG_SOFTMAX_CASES + (() if rng is None else fresh_logit_cases(as_generator("rng", rng)))
    return run(fn, "grad_log_softmax", lambda name, fn: _check_grad_log_softmax(name, fn, table), _references())


def _check_grad_log_softmax(name, fn, table):
    cases = [(np.array(z), a) for z, a in table]
    want = [onehot(len(z), a) - softmax_rows(z) for z, a in cases]
    got = [as_array(call(fn, z.copy(), a)) for z, a in cases]
    if all_close(got, want):
        return passed(name, f"通过（{len(cases)} 组 logits，和 1[j = a] − π_j 一致，大 logits 也没有溢出）")
    if any(g is None for g in got):
        return failed(name, "你的函数没有返回数组（是不是忘了 return？）")
    for (z, a), g, w in zip(cases, got, want):
        if g.shape != w.shape:
            return failed(name, f"形状不对：logits 有 {len(z)} 个数时应该返回形状 {w.shape} 的向量"
                                f"（对每个 z_j 各有一个导数），你返回的形状是 {g.shape}。",
                          [f"logits = {fmt(z)}，action = {a}"])
    normal = [i for i, (z, _) in enumerate(cases) if np.abs(z).max() < 100]
    wrong = {
        "符号反了：你算的是 π_j − 1[j = a]，应该是 1[j = a] − π_j（提高 z_a 会让 log π_a 变大，所以那一项是正的）。":
            lambda z, a: softmax_rows(z) - onehot(len(z), a),
        "少了 1[j = a] 这一项：你只算了 −π_j。":
            lambda z, a: -softmax_rows(z),
        "少了 −π_j 这一项：你只算了 1[j = a]。别忘了所有 logit 都出现在 softmax 的分母里。":
            lambda z, a: onehot(len(z), a),
        "减的应该是概率 π = softmax(z)，不是 logits z 本身。":
            lambda z, a: onehot(len(z), a) - z,
        "这是 π_a 本身的导数 π_a (1[j = a] − π_j)；log π_a 的导数还要除以 π_a，就是 1[j = a] − π_j。":
            lambda z, a: softmax_rows(z)[a] * (onehot(len(z), a) - softmax_rows(z)),
        "1[j = a] 只在 j = a 时是 1，其他位置是 0；你好像在每个位置都用了 1。":
            lambda z, a: 1.0 - softmax_rows(z),
    }
    for hint, f in wrong.items():
        if all(close(got[i], f(*cases[i])) for i in normal):
            return failed(name, hint, _example(cases, got, want, normal))
    if all(close(got[i], want[i]) for i in normal):
        big = [i for i in range(len(cases)) if i not in normal]
        i = big[0]
        return failed(name, "普通的 logits 都对了，但很大的 logits（例如 800）算出了 NaN 或错误的数："
                            "exp(800) 会溢出。先把每个 logit 减去最大的那个，softmax 不变，也不会溢出。",
                      [f"logits = {fmt(cases[i][0])}，action = {cases[i][1]}",
                       f"你的：{fmt(got[i])}", f"应该：{fmt(want[i])}"])
    bad = [i for i in normal if not close(got[i], want[i])]
    if bad and all(abs(float(got[i].sum())) > 1e-6 for i in bad):
        hint = "各分量之和应该是 0（Σ_j (1[j = a] − π_j) = 1 − 1 = 0），你的不是：检查 softmax 算得对不对。"
    else:
        hint = "和 1[j = a] − π_j 对比一下下面这个例子。"
    return failed(name, hint, _example(cases, got, want, bad or normal))


def _example(cases, got, want, indices):
    for i in indices:
        if not close(got[i], want[i]):
            z, a = cases[i]
            return [f"例子：logits = {fmt(z)}，action = {a}", f"你的：{fmt(got[i])}", f"应该：{fmt(want[i])}"]
    return []


def _references():
    """作业一的两个任务不许调用的包内实现：它们直接算出 e_a − π 或整份解答的梯度。"""
    return score, add_grad, score_vectors, reference_solution_grad


def _solution_cases(seed=6):
    """check_solution_grad 用的 (model, problem, sample)：Δ 随机的 1B 模型，既有做对的也有中途写错的解答。"""
    model = TrainableLLM(1e9, name="检查用的模型")
    model.params[:] = np.random.default_rng(seed).normal(0.0, 0.7, size=model.params.shape)
    problems = make_problem_set(random.Random(seed), 8, 3, 8)
    rng = random.Random(seed + 10)
    cases = []
    for p in problems:
        samples = [model.generate(p, rng) for _ in range(6)]
        right = [s for s in samples if s.correct]
        wrong = [s for s in samples if not s.correct]
        cases.extend((p, s) for s in (right[:1] + wrong[:1]) or samples[:1])
    return model, cases


def _correct_path_records(problem, sample):
    """常见错误：按**正确**的中间值算情境（应该用模型自己写下的值）。"""
    x, recs = problem.start, []
    for step, proc in zip(problem.steps, sample.procs):
        recs.append((context_key(step.op, x, step.operand), PROCEDURES.index(proc)))
        x = {"add": x + step.operand, "sub": x - step.operand, "mul": x * step.operand}[step.op]
    return recs


def reference_solution_grad(model, problem, sample, records=None, last_only=False):
    """
    一份解答的 log 概率对 Δ 的梯度（参考答案，给检查和测试用）：Σ_t (1[j = a_t] − π(j | c_t)) 加到第 c_t 行。

    【思路】直接用包里的 add_grad（第 6 讲工具模块的写法），概率是 softmax(model.context_logits(情境))。
    【参数】records：(情境, 做法) 的列表，默认 step_records(problem, sample)；换成别的列表、或 last_only=True
        （同一情境只留最后一步），就是检查认得的几种常见错误
    【返回】(12, 3) 数组，第 i 行对应 CONTEXTS[i]
    """
    grads = {}
    for key, action in step_records(problem, sample) if records is None else records:
        if last_only:
            grads.pop(key, None)
        add_grad(grads, key, action, softmax(model.context_logits(key)), 1.0)
    out = np.zeros((len(CONTEXTS), 3))
    for key, g in grads.items():
        out[CONTEXT_INDEX[key]] = g
    return out


def _chosen_only_grad(model, problem, sample):
    """常见错误：每一步只在选中的做法 a_t 上加 1 − π(a_t | c_t)，漏了其他做法的 −π(j | c_t)。"""
    out = np.zeros((len(CONTEXTS), 3))
    for key, action in step_records(problem, sample):
        out[CONTEXT_INDEX[key], action] += 1.0 - softmax(model.context_logits(key))[action]
    return out


def check_solution_grad(fn, rng=None):
    """
    检查 fn(model, problem, sample) 是否返回一整份解答的 ∂ log P(解答) / ∂Δ，形状 (12, 3)。

    【思路】log P(解答) = Σ_t log π(a_t | c_t)，所以梯度是各步梯度之和：第 t 步的
        1[j = a_t] − π(j | c_t) 加到情境 c_t 那一行。情境 c_t 要用**模型自己上一步写下的值**算
        （解答中途写错以后，后面的情境就和正确路径不同了）；同一个情境出现几次，就加几次。
    【参数】fn：你的函数；返回 (12, 3) 数组（第 i 行是 CONTEXTS[i]），或者 {情境: [3 个数]} 的字典；
        rng：numpy Generator，给了时模型、题目和解答都从它新抽（自动评分用，每次评分都不同）
    【返回】CheckResult
    【例子】check_solution_grad(solution_grad)
    """
    seed = 6 if rng is None else int(as_generator("rng", rng).integers(0, 2 ** 31))
    return run(fn, "solution_grad", lambda name, fn: _check_solution_grad(name, fn, seed), _references())


def _to_grid(value):
    """(12, 3) 数组或 {情境: [3 个数]} 字典 → (12, 3) 数组；形状不对时返回 (None, 说明)。"""
    if isinstance(value, dict):
        out = np.zeros((len(CONTEXTS), 3))
        for key, row in value.items():
            if key not in CONTEXT_INDEX:
                return None, f"字典里有不认识的情境 {key!r}（情境是 toyllm.CONTEXTS 里的 (运算, 难度)）"
            row = as_array(row)
            if row is None or row.shape != (3,):
                return None, f"情境 {key!r} 的梯度应该是 3 个数"
            out[CONTEXT_INDEX[key]] = row
        return out, ""
    arr = as_array(value)
    if arr is None:
        return None, "你的函数没有返回数组（是不是忘了 return？）"
    if arr.shape != (len(CONTEXTS), 3):
        return None, (f"形状不对：应该返回形状 (12, 3) 的数组（12 个情境 × 3 种做法，第 i 行是 CONTEXTS[i]），"
                      f"你返回的形状是 {arr.shape}。")
    return arr, ""


def _check_solution_grad(name, fn, seed=6):
    model, cases = _solution_cases(seed)
    before = model.params.copy()
    got = []
    for p, s in cases:
        g, why = _to_grid(call(fn, model, p, s))
        if g is None:
            return failed(name, why)
        got.append(g)
    if not np.array_equal(model.params, before):
        return failed(name, "你的函数修改了模型的参数 model.params（算梯度时不应该改模型）。")
    want = [reference_solution_grad(model, p, s) for p, s in cases]
    if all_close(got, want):
        return passed(name, f"通过（{len(cases)} 份解答，有做对的也有中途写错的；和逐步累加的梯度一致）")
    wrong = {
        "符号反了：每一步应该是 1[j = a_t] − π(j | c_t)。":
            lambda p, s: -reference_solution_grad(model, p, s),
        "同一个情境在一份解答里出现好几次时，要把每一步的梯度「加起来」（+=），不是覆盖（=）。":
            lambda p, s: reference_solution_grad(model, p, s, last_only=True),
        "情境要用模型「自己上一步写下的值」算（sample.values），不是正确的中间值："
        "解答写错以后，后面的每一步都是从错的数出发的。用 step_records(problem, sample) 就对了。":
            lambda p, s: reference_solution_grad(model, p, s, _correct_path_records(p, s)),
        "整份解答的 log 概率是各步之和，梯度也是各步之和；不要除以步数。":
            lambda p, s: reference_solution_grad(model, p, s) / len(p.steps),
        "少了第一步：第 0 步也要算进去。":
            lambda p, s: reference_solution_grad(model, p, s, step_records(p, s)[1:]),
        "少了最后一步：检查一下循环的范围。":
            lambda p, s: reference_solution_grad(model, p, s, step_records(p, s)[:-1]),
        "每一步只在选中的做法 a_t 上加了 1 − π(a_t | c_t)，忘了其他做法 j ≠ a_t 上的 −π(j | c_t)："
        "一步的梯度是整个向量 1[j = a_t] − π(j | c_t)，三个数都要加到情境 c_t 那一行（就是任务 1 的 grad_log_softmax）。":
            lambda p, s: _chosen_only_grad(model, p, s),
    }
    for hint, f in wrong.items():
        if all(close(g, f(p, s)) for g, (p, s) in zip(got, cases)):
            return failed(name, hint, _grid_example(cases, got, want))
    return failed(name, "和逐步累加的梯度对比一下下面这个例子（只列出不为 0 的行）。", _grid_example(cases, got, want))


def _grid_example(cases, got, want):
    for (p, s), g, w in zip(cases, got, want):
        if not close(g, w):
            lines = [f"例子：题目 {p}，模型写下的值 {list(s.values)}，做法 {list(s.procs)}"]
            for i in np.nonzero(np.any(np.abs(g) > 1e-12, axis=1) | np.any(np.abs(w) > 1e-12, axis=1))[0]:
                lines.append(f"情境 {CONTEXTS[i]}：你的 {fmt(g[i])}，应该 {fmt(w[i])}")
            return lines
    return []


def check_estimate_vs_exact(estimate, stderr, exact, name="REINFORCE 估计", z=4.0, n_samples=None):
    """
    检查一个带随机误差的梯度估计和精确梯度是否一致：每个数都在 z 个标准误以内。

    【思路】REINFORCE 用采样估计梯度，和精确梯度永远不会完全相等；但如果估计是无偏的，
        (估计 − 精确) / 标准误 大致服从标准正态分布，36 个数里超过 4 的几乎不会出现。
        给了 n_samples（一共用了几份解答）时，每个数的标准误至少按 3 / n_samples 算（"三的法则"；
        为什么要这个下限，是作业一的问答 1）。
    【参数】estimate、stderr、exact：形状相同的数组（通常 (12, 3)）；stderr 是每个数的标准误；
        name：打印用的名字；z：允许几个标准误（默认 4）；n_samples：估计一共用了几份解答（可选，见上）
    【返回】CheckResult
    【边界】标准误为 0、又没有给 n_samples 的数（题目没经过的情境）要求和精确值几乎相等（差 < 1e-9）。
    """
    def body():
        est, se, ex = (as_array(x) for x in (estimate, stderr, exact))
        if est is None or se is None or ex is None or not (est.shape == se.shape == ex.shape):
            shapes = [None if x is None else x.shape for x in (est, se, ex)]
            return failed(name, f"estimate、stderr、exact 的形状要相同，收到 {shapes}")
        if not np.all(np.isfinite(est)):
            return failed(name, "估计里有 NaN 或无穷大。")
        if n_samples is not None:
            se = np.sqrt(se ** 2 + (3.0 / float(n_samples)) ** 2)
        dev = np.abs(est - ex)
        zs = np.where(se > 0, dev / np.where(se > 0, se, 1.0), np.where(dev < 1e-9, 0.0, np.inf))
        worst = float(zs.max())
        if worst <= z:
            return passed(name, f"和精确梯度一致：最大偏差 {worst:.2f} 个标准误（≤ {z:g}）")
        hint = "估计和精确梯度差得太多，不像是随机误差。"
        scale = float((est * ex).sum() / max((ex * ex).sum(), 1e-300))
        if scale < 0 and np.all(np.abs(est + ex) <= z * se + 1e-9):
            hint = "估计和精确梯度的符号相反。"
        elif scale > 0 and abs(scale - 1) > 0.2 and np.all(np.abs(est - scale * ex) <= z * se + 1e-9):
            hint = f"估计大约是精确梯度的 {scale:.2f} 倍：是不是多除或少除了题目数、采样数？"
        return failed(name, hint, [f"最大偏差 {worst:.1f} 个标准误，出现在情境 {CONTEXTS[int(np.argmax(zs)) // 3]}"
                                   if est.shape == (len(CONTEXTS), 3) else f"最大偏差 {worst:.1f} 个标准误"])
    return guard(name, body)

