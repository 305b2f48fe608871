"""
作业的自动检查：把同学写的函数和正确答案比较，用中文打印 ✓ 或 ✗，并提示错在哪里。

【思路】每个 check_xxx(fn) 用几组准备好的输入调用你的函数，和包里的正确实现比较：
    · 全对：打印 ✓；
    · 不对：先看是不是"常见错误"之一 —— 形状不对、符号反了、忘了减基线、差一个 G/(G−1) 倍、
      用了总体标准差而不是样本标准差、忘了截断下边…… —— 是的话直接说出来；不是的话给出一组输入、
      你的结果和应有的结果，方便你自己找；
    · 你的函数还在 raise NotImplementedError()：打印"还没有实现"。
    检查函数**从不抛出异常**（你的函数出错时，它把错误类型和信息打印出来），所以没写完的作业
    也能从头运行到尾。

【返回】每个检查返回一个 CheckResult：可以当 bool 用（通过为 True），属性 status 是
    "pass" / "fail" / "todo"（还没有实现）/ "error"（你的函数出错）之一，hint 是提示。
    在 notebook 里作为单元格最后一行时它不会再显示一遍（信息已经打印过了）。

【Python 小知识】try: … except NotImplementedError: … 可以"接住"函数里抛出的这种异常，
    程序不会停下来；except Exception 接住几乎所有错误（但不包括 Ctrl+C 产生的 KeyboardInterrupt）。
"""

import math
import random
import warnings

import numpy as np

from ..arithmetic import CONTEXT_INDEX, CONTEXTS, PROCEDURES, make_problem_set
from ..estimators import pass_at_k
from ..policy import softmax_rows
from ..toy_llm import softmax
from ..trainable import TrainableLLM, add_grad, context_key, probs_for, step_records

STATUSES = ("pass", "fail", "todo", "error")


class CheckResult:
    """
    一次检查的结果。bool(结果) 为 True 表示通过。

    【属性】name：检查的是哪个函数；status："pass" / "fail" / "todo" / "error"；ok：是否通过；
        hint：提示（通过时是空字符串）；message：打印出来的全文
    【Python 小知识】定义了 __bool__ 的对象可以直接写进 if 和 assert；定义 _ipython_display_ 并且
        什么都不做，Jupyter 就不会把它当作单元格的结果再显示一遍。
    """

    def __init__(self, name, status, hint="", message=""):
        if status not in STATUSES:
            raise ValueError(f"status 必须是 {'、'.join(STATUSES)} 之一，收到 {status!r}")
        self.name, self.status, self.hint, self.message = name, status, hint, message

    @property
    def ok(self):
        """是否通过。"""
        return self.status == "pass"

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return f"CheckResult(name={self.name!r}, status={self.status!r}, hint={self.hint!r})"

    def _ipython_display_(self):
        """已经打印过了，Jupyter 里不再显示。"""


# =============================================================================
# 共用的小工具
# =============================================================================
class _Todo(Exception):
    """同学的函数还在 raise NotImplementedError()。"""


class _Crash(Exception):
    """同学的函数出错了（异常之外的任何错误）。"""


def _call(fn, *args, **kwargs):
    """调用同学的函数：NotImplementedError → _Todo；其他异常 → _Crash；不让 numpy 的警告刷屏。"""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    except NotImplementedError:
        raise _Todo() from None
    except Exception as e:                                  # noqa: BLE001  同学的代码可能抛任何错误
        raise _Crash(f"{type(e).__name__}: {e}") from None


def _finish(name, status, lines, hint=""):
    mark = {"pass": "✓", "fail": "✗", "todo": "…", "error": "✗"}[status]
    body = [f"{mark} {name}：" + lines[0]] + (["  提示：" + hint] if hint else []) + ["  " + x for x in lines[1:]]
    message = "\n".join(body)
    print(message)
    return CheckResult(name, status, hint, message)


def _passed(name, detail):
    return _finish(name, "pass", [detail])


def _failed(name, hint, details=()):
    return _finish(name, "fail", ["结果不对。", *details], hint)


def _todo(name):
    return _finish(name, "todo", ["还没有实现。把 raise NotImplementedError() 换成你的代码，再运行上面定义函数的单元格和这个单元格。"])


def _crashed(name, err, hint=""):
    return _finish(name, "error", [f"你的函数出错了：{err}"],
                   hint or "看一下错误信息说的是哪一行、哪个变量；可以先用一个小例子单独调用你的函数试试。")


def _guard(name, body):
    """运行一个检查的主体；无论出什么事都不抛出异常。"""
    try:
        return body()
    except _Todo:
        return _todo(name)
    except _Crash as e:
        return _crashed(name, str(e))
    except Exception as e:                                  # noqa: BLE001  检查本身出错也不能让 notebook 停下
        return _finish(name, "error", [f"检查时出了意外的错误：{type(e).__name__}: {e}"],
                       "请确认传进来的是函数本身（不要加括号），参数的个数和顺序和题目说的一样。")


def _run(name, fn, body):
    """检查 fn 是函数，然后在 _guard 里运行 body(name, fn)。"""
    if not callable(fn):
        return _finish(name, "error", [f"需要一个函数，收到的是 {type(fn).__name__}。"],
                       f"把函数本身传进来：check_xxx({name})，不要写成 check_xxx({name}(...))。")
    return _guard(name, lambda: body(name, fn))


def _as_array(value):
    """把同学返回的东西变成 float 数组；不是数组的返回 None。"""
    if value is None:
        return None
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError):
        return None


def _fmt(x, digits=4):
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return f"{float(x):.6g}"
    return np.array2string(x, precision=digits, suppress_small=True, max_line_width=110)


def _close(a, b, rtol=1e-7, atol=1e-9):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _all_close(got, want, **tol):
    return all(g is not None and _close(g, w, **tol) for g, w in zip(got, want))


# =============================================================================
# 作业一 · 梯度
# =============================================================================
def _onehot(n, a):
    e = np.zeros(n)
    e[a] = 1.0
    return e


GRAD_LOG_SOFTMAX_CASES = (
    ([2.0, 0.5, -1.0], 0), ([2.0, 0.5, -1.0], 1), ([0.0, 0.0, 0.0], 2), ([1.9, 0.0, -0.5], 2),
    ([-0.3, 1.2, 0.4], 0), ([3.0, -2.0, 0.5, 1.0, 0.0], 3), ([0.7, 0.7], 1), ([800.0, 799.0, 0.0], 1),
)
"""check_grad_log_softmax 用的 (logits, action)：有 3 个做法的，也有 2 个、5 个的；最后一组 logits 很大。"""


def check_grad_log_softmax(fn):
    """
    检查 fn(logits, action) 是否返回 ∂ log softmax(z)_a / ∂ z_j = 1[j = a] − π_j（对每个 j，一个向量）。

    【参数】fn：你的函数，输入 logits（一串数）和 action（下标），返回和 logits 一样长的梯度向量
    【返回】CheckResult（可以当 bool 用）
    【边界】会试 2 个、5 个做法的 logits（不要把 3 写死），以及很大的 logits（[800, 799, 0]：
        直接 exp(800) 会溢出，要先减去最大值）。
    【例子】check_grad_log_softmax(grad_log_softmax)
    """
    name = getattr(fn, "__name__", "grad_log_softmax")
    return _run(name, fn, _check_grad_log_softmax)


def _check_grad_log_softmax(name, fn):
    cases = [(np.array(z), a) for z, a in GRAD_LOG_SOFTMAX_CASES]
    want = [_onehot(len(z), a) - softmax_rows(z) for z, a in cases]
    got = [_as_array(_call(fn, z.copy(), a)) for z, a in cases]
    if _all_close(got, want):
        return _passed(name, f"通过（{len(cases)} 组 logits，和 1[j = a] − π_j 一致，大 logits 也没有溢出）")
    if any(g is None for g in got):
        return _failed(name, "你的函数没有返回数组（是不是忘了 return？）")
    for (z, a), g, w in zip(cases, got, want):
        if g.shape != w.shape:
            return _failed(name, f"形状不对：logits 有 {len(z)} 个数时应该返回形状 {w.shape} 的向量"
                                 f"（对每个 z_j 各有一个导数），你返回的形状是 {g.shape}。",
                           [f"logits = {_fmt(z)}，action = {a}"])
    normal = [i for i, (z, _) in enumerate(cases) if np.abs(z).max() < 100]
    wrong = {
        "符号反了：你算的是 π_j − 1[j = a]，应该是 1[j = a] − π_j（提高 z_a 会让 log π_a 变大，所以那一项是正的）。":
            lambda z, a: softmax_rows(z) - _onehot(len(z), a),
        "少了 1[j = a] 这一项：你只算了 −π_j。":
            lambda z, a: -softmax_rows(z),
        "少了 −π_j 这一项：你只算了 1[j = a]。别忘了所有 logit 都出现在 softmax 的分母里。":
            lambda z, a: _onehot(len(z), a),
        "减的应该是概率 π = softmax(z)，不是 logits z 本身。":
            lambda z, a: _onehot(len(z), a) - z,
        "这是 π_a 本身的导数 π_a (1[j = a] − π_j)；log π_a 的导数还要除以 π_a，就是 1[j = a] − π_j。":
            lambda z, a: softmax_rows(z)[a] * (_onehot(len(z), a) - softmax_rows(z)),
        "1[j = a] 只在 j = a 时是 1，其他位置是 0；你好像在每个位置都用了 1。":
            lambda z, a: 1.0 - softmax_rows(z),
    }
    for hint, f in wrong.items():
        if all(_close(got[i], f(*cases[i])) for i in normal):
            return _failed(name, hint, _example(cases, got, want, normal))
    if all(_close(got[i], want[i]) for i in normal):
        big = [i for i in range(len(cases)) if i not in normal]
        i = big[0]
        return _failed(name, "普通的 logits 都对了，但很大的 logits（例如 800）算出了 NaN 或错误的数："
                             "exp(800) 会溢出。先把每个 logit 减去最大的那个，softmax 不变，也不会溢出。",
                       [f"logits = {_fmt(cases[i][0])}，action = {cases[i][1]}",
                        f"你的：{_fmt(got[i])}", f"应该：{_fmt(want[i])}"])
    bad = [i for i in normal if not _close(got[i], want[i])]
    if bad and all(abs(float(got[i].sum())) > 1e-6 for i in bad):
        hint = "各分量之和应该是 0（Σ_j (1[j = a] − π_j) = 1 − 1 = 0），你的不是：检查 softmax 算得对不对。"
    else:
        hint = "和 1[j = a] − π_j 对比一下下面这个例子。"
    return _failed(name, hint, _example(cases, got, want, bad or normal))


def _example(cases, got, want, indices):
    for i in indices:
        if not _close(got[i], want[i]):
            z, a = cases[i]
            return [f"例子：logits = {_fmt(z)}，action = {a}", f"你的：{_fmt(got[i])}", f"应该：{_fmt(want[i])}"]
    return []


def _solution_cases():
    """check_solution_grad 用的 (model, problem, sample)：Δ 随机的 1B 模型，既有做对的也有中途写错的解答。"""
    model = TrainableLLM(1e9, name="检查用的模型")
    model.params[:] = np.random.default_rng(6).normal(0.0, 0.7, size=model.params.shape)
    problems = make_problem_set(random.Random(6), 8, 3, 8)
    rng = random.Random(16)
    cases = []
    for p in problems:
        samples = [model.generate(p, rng) for _ in range(6)]
        right = [s for s in samples if s.correct]
        wrong = [s for s in samples if not s.correct]
        cases.extend((p, s) for s in (right[:1] + wrong[:1]) or samples[:1])
    return model, cases


def _grad_from_records(model, problem, sample, records=None, combine="sum", weights=None):
    """参考答案和几种常见错误：records 是 (情境, 做法) 的列表；combine="last" 表示同一情境只保留最后一次。"""
    records = step_records(problem, sample) if records is None else records
    out = np.zeros((len(CONTEXTS), 3))
    for (key, action), w in zip(records, weights or [1.0] * len(records)):
        g = w * (_onehot(3, action) - np.array(softmax(model.context_logits(key))))
        if combine == "last":
            out[CONTEXT_INDEX[key]] = g
        else:
            out[CONTEXT_INDEX[key]] += g
    return out


def _correct_path_records(problem, sample):
    """常见错误：按**正确**的中间值算情境（应该用模型自己写下的值）。"""
    x, recs = problem.start, []
    for step, proc in zip(problem.steps, sample.procs):
        recs.append((context_key(step.op, x, step.operand), PROCEDURES.index(proc)))
        x = {"add": x + step.operand, "sub": x - step.operand, "mul": x * step.operand}[step.op]
    return recs


def reference_solution_grad(model, problem, sample):
    """
    一份解答的 log 概率对 Δ 的梯度（参考答案，给检查和测试用）：Σ_t (1[j = a_t] − π(j | c_t)) 加到第 c_t 行。

    【思路】直接用包里的 step_records、probs_for、add_grad（第 6 讲工具模块的写法）。
    【返回】(12, 3) 数组，第 i 行对应 CONTEXTS[i]
    """
    grads = {}
    for (key, action), probs in zip(step_records(problem, sample), probs_for(model, problem, sample)):
        add_grad(grads, key, action, probs, 1.0)
    out = np.zeros((len(CONTEXTS), 3))
    for key, g in grads.items():
        out[CONTEXT_INDEX[key]] = g
    return out


def check_solution_grad(fn):
    """
    检查 fn(model, problem, sample) 是否返回一整份解答的 ∂ log P(解答) / ∂Δ，形状 (12, 3)。

    【思路】log P(解答) = Σ_t log π(a_t | c_t)，所以梯度是各步梯度之和：第 t 步的
        1[j = a_t] − π(j | c_t) 加到情境 c_t 那一行。情境 c_t 要用**模型自己上一步写下的值**算
        （解答中途写错以后，后面的情境就和正确路径不同了）；同一个情境出现几次，就加几次。
    【参数】fn：你的函数；返回 (12, 3) 数组（第 i 行是 CONTEXTS[i]），或者 {情境: [3 个数]} 的字典
    【返回】CheckResult
    【例子】check_solution_grad(solution_grad)
    """
    name = getattr(fn, "__name__", "solution_grad")
    return _run(name, fn, _check_solution_grad)


def _to_grid(value):
    """(12, 3) 数组或 {情境: [3 个数]} 字典 → (12, 3) 数组；形状不对时返回 (None, 说明)。"""
    if isinstance(value, dict):
        out = np.zeros((len(CONTEXTS), 3))
        for key, row in value.items():
            if key not in CONTEXT_INDEX:
                return None, f"字典里有不认识的情境 {key!r}（情境是 toyllm.CONTEXTS 里的 (运算, 难度)）"
            row = _as_array(row)
            if row is None or row.shape != (3,):
                return None, f"情境 {key!r} 的梯度应该是 3 个数"
            out[CONTEXT_INDEX[key]] = row
        return out, ""
    arr = _as_array(value)
    if arr is None:
        return None, "你的函数没有返回数组（是不是忘了 return？）"
    if arr.shape != (len(CONTEXTS), 3):
        return None, (f"形状不对：应该返回形状 (12, 3) 的数组（12 个情境 × 3 种做法，第 i 行是 CONTEXTS[i]），"
                      f"你返回的形状是 {arr.shape}。")
    return arr, ""


def _check_solution_grad(name, fn):
    model, cases = _solution_cases()
    before = model.params.copy()
    got = []
    for p, s in cases:
        g, why = _to_grid(_call(fn, model, p, s))
        if g is None:
            return _failed(name, why)
        got.append(g)
    if not np.array_equal(model.params, before):
        return _failed(name, "你的函数修改了模型的参数 model.params（算梯度时不应该改模型）。")
    want = [reference_solution_grad(model, p, s) for p, s in cases]
    if _all_close(got, want):
        return _passed(name, f"通过（{len(cases)} 份解答，有做对的也有中途写错的；和逐步累加的梯度一致）")
    wrong = {
        "符号反了：每一步应该是 1[j = a_t] − π(j | c_t)。":
            lambda p, s: -_grad_from_records(model, p, s),
        "同一个情境在一份解答里出现好几次时，要把每一步的梯度「加起来」（+=），不是覆盖（=）。":
            lambda p, s: _grad_from_records(model, p, s, combine="last"),
        "情境要用模型「自己上一步写下的值」算（sample.values），不是正确的中间值："
        "解答写错以后，后面的每一步都是从错的数出发的。用 step_records(problem, sample) 就对了。":
            lambda p, s: _grad_from_records(model, p, s, _correct_path_records(p, s)),
        "整份解答的 log 概率是各步之和，梯度也是各步之和；不要除以步数。":
            lambda p, s: _grad_from_records(model, p, s) / len(p.steps),
        "少了第一步：第 0 步也要算进去。":
            lambda p, s: _grad_from_records(model, p, s, step_records(p, s)[1:]),
        "少了最后一步：检查一下循环的范围。":
            lambda p, s: _grad_from_records(model, p, s, step_records(p, s)[:-1]),
    }
    for hint, f in wrong.items():
        if all(_close(g, f(p, s)) for g, (p, s) in zip(got, cases)):
            return _failed(name, hint, _grid_example(cases, got, want))
    return _failed(name, "和逐步累加的梯度对比一下下面这个例子（只列出不为 0 的行）。", _grid_example(cases, got, want))


def _grid_example(cases, got, want):
    for (p, s), g, w in zip(cases, got, want):
        if not _close(g, w):
            lines = [f"例子：题目 {p}，模型写下的值 {list(s.values)}，做法 {list(s.procs)}"]
            for i in np.nonzero(np.any(np.abs(g) > 1e-12, axis=1) | np.any(np.abs(w) > 1e-12, axis=1))[0]:
                lines.append(f"情境 {CONTEXTS[i]}：你的 {_fmt(g[i])}，应该 {_fmt(w[i])}")
            return lines
    return []


def check_estimate_vs_exact(estimate, stderr, exact, name="REINFORCE 估计", z=4.0, n_samples=None):
    """
    检查一个带随机误差的梯度估计和精确梯度是否一致：每个数都在 z 个标准误以内。

    【思路】REINFORCE 用采样估计梯度，和精确梯度永远不会完全相等；但如果估计是无偏的，
        (估计 − 精确) / 标准误 大致服从标准正态分布，36 个数里超过 4 的几乎不会出现。
        只有一件事要小心：从样本算出的标准误会**低估**少见事件的影响。例如某个情境里 bug 只有 4% 的概率，
        一次也没采到时，样本里这个数的每一项都一样，标准误几乎是 0，可是估计离精确值差着"那几次没采到的 bug"。
        给了 n_samples（一共用了几份解答）时，每个数的标准误至少按 3 / n_samples 算：
        一份解答对一个数的贡献是 ±1 那么大，一次都没出现的事件，按"三的法则"最多相当于 3 份解答。
    【参数】estimate、stderr、exact：形状相同的数组（通常 (12, 3)）；stderr 是每个数的标准误；
        name：打印用的名字；z：允许几个标准误（默认 4）；n_samples：估计一共用了几份解答（可选，见上）
    【返回】CheckResult
    【边界】标准误为 0、又没有给 n_samples 的数（题目没经过的情境）要求和精确值几乎相等（差 < 1e-9）。
    """
    def body():
        est, se, ex = (_as_array(x) for x in (estimate, stderr, exact))
        if est is None or se is None or ex is None or not (est.shape == se.shape == ex.shape):
            shapes = [None if x is None else x.shape for x in (est, se, ex)]
            return _failed(name, f"estimate、stderr、exact 的形状要相同，收到 {shapes}")
        if not np.all(np.isfinite(est)):
            return _failed(name, "估计里有 NaN 或无穷大。")
        if n_samples is not None:
            se = np.sqrt(se ** 2 + (3.0 / float(n_samples)) ** 2)
        dev = np.abs(est - ex)
        zs = np.where(se > 0, dev / np.where(se > 0, se, 1.0), np.where(dev < 1e-9, 0.0, np.inf))
        worst = float(zs.max())
        if worst <= z:
            return _passed(name, f"和精确梯度一致：最大偏差 {worst:.2f} 个标准误（≤ {z:g}）")
        hint = "估计和精确梯度差得太多，不像是随机误差。"
        scale = float((est * ex).sum() / max((ex * ex).sum(), 1e-300))
        if scale < 0 and np.all(np.abs(est + ex) <= z * se + 1e-9):
            hint = "估计和精确梯度的符号相反。"
        elif scale > 0 and abs(scale - 1) > 0.2 and np.all(np.abs(est - scale * ex) <= z * se + 1e-9):
            hint = f"估计大约是精确梯度的 {scale:.2f} 倍：是不是多除或少除了题目数、采样数？"
        return _failed(name, hint, [f"最大偏差 {worst:.1f} 个标准误，出现在情境 {CONTEXTS[int(np.argmax(zs)) // 3]}"
                                    if est.shape == (len(CONTEXTS), 3) else f"最大偏差 {worst:.1f} 个标准误"])
    return _guard(name, body)


# =============================================================================
# 作业二 · SFT 与评估
# =============================================================================
PASS_AT_K_CASES = tuple((n, c, k) for n in (1, 2, 3, 5, 8, 10) for c in range(n + 1) for k in range(1, n + 1)) + (
    (100, 3, 10), (100, 1, 50), (200, 7, 100), (1000, 2, 500), (50, 45, 10), (64, 0, 32))
"""check_pass_at_k 试的 (n, c, k)：小 n 的全部组合，加上几组大的（直接算阶乘会很慢或溢出）。"""


def check_pass_at_k(fn):
    """
    检查 fn(n, c, k) 是否是 pass@k 的无偏估计 1 − C(n − c, k) / C(n, k)（Chen et al. 2021）。

    【参数】fn：你的函数，n 次采样里 c 次做对，返回"随机挑 k 个至少一个对"的概率
    【返回】CheckResult
    【边界】会试 n − c < k 的情况（答案是 1）、c = 0（答案是 0）和 n = 1000 这样的大数。
    【例子】check_pass_at_k(my_pass_at_k)
    """
    name = getattr(fn, "__name__", "pass_at_k")
    return _run(name, fn, _check_pass_at_k)


def _check_pass_at_k(name, fn):
    got, crashed = [], []
    for n, c, k in PASS_AT_K_CASES:
        try:
            got.append(_as_array(_call(fn, n, c, k)))
        except _Crash as e:
            got.append(None)
            crashed.append(((n, c, k), str(e)))
    want = [pass_at_k(n, c, k) for n, c, k in PASS_AT_K_CASES]
    if not crashed and _all_close(got, want, rtol=1e-9, atol=1e-12):
        return _passed(name, f"通过（{len(PASS_AT_K_CASES)} 组 (n, c, k)，包括 n − c < k 和 n = 1000）")
    if crashed:
        (n, c, k), err = crashed[0]
        hints = []
        if any(n - c < k for (n, c, k), _ in crashed):
            hints.append("n − c < k 时（错的不到 k 个），随便挑 k 个必定有一个对的，pass@k = 1；这种情况要单独处理。")
        if any(n >= 100 for (n, c, k), _ in crashed):
            hints.append("n 很大时出错了：不要算阶乘再相除（会溢出），用 math.comb，或者用乘积形式 ∏ (1 − k / i)。")
        return _crashed(name, f"{err}（n = {n}, c = {c}, k = {k}）", "".join(hints))
    for (n, c, k), g in zip(PASS_AT_K_CASES, got):
        if g is None or g.shape != ():
            return _failed(name, f"应该返回一个数（float），你返回的是 {'None' if g is None else f'形状 {g.shape} 的数组'}"
                                 f"（n = {n}, c = {c}, k = {k}）。")
    small = [i for i, (n, c, k) in enumerate(PASS_AT_K_CASES) if n <= 10]
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
    }
    for hint, f in wrong.items():
        if all(_close(got[i], f(*PASS_AT_K_CASES[i]), rtol=1e-9, atol=1e-12) for i in small):
            return _failed(name, hint, _pass_example(got, want))
    edge = [i for i, (n, c, k) in enumerate(PASS_AT_K_CASES) if n - c < k]
    rest = [i for i in range(len(PASS_AT_K_CASES)) if i not in edge]
    if all(_close(got[i], want[i], rtol=1e-9, atol=1e-12) for i in rest):
        return _failed(name, "n − c < k 时（错的不到 k 个），pass@k 应该正好是 1。", _pass_example(got, want))
    if all(_close(got[i], want[i], rtol=1e-9, atol=1e-12) for i in small):
        return _failed(name, "小的 n 都对了，大的 n 不对：是不是精度丢了？试试 math.comb 或乘积形式 ∏ (1 − k / i)。",
                       _pass_example(got, want))
    if any(not (-1e-12 <= float(g) <= 1 + 1e-12) for g in got):
        return _failed(name, "概率应该在 0 和 1 之间，你的结果有超出范围的。", _pass_example(got, want))
    return _failed(name, "对比一下下面这个例子；乘积形式是 1 − ∏_{i = n − c + 1}^{n} (1 − k / i)。", _pass_example(got, want))


def _pass_example(got, want):
    for (n, c, k), g, w in zip(PASS_AT_K_CASES, got, want):
        if not _close(g, w, rtol=1e-9, atol=1e-12):
            return [f"例子：n = {n}, c = {c}, k = {k}：你的 {_fmt(g)}，应该 {w:.6g}"]
    return []


def _round_setup():
    """check_rejection_sampling_round 用的模型和题：Δ 随机的 1B 模型，20 道 3 … 6 步的题。"""
    model = TrainableLLM(1e9, name="检查用的模型")
    model.params[:] = np.random.default_rng(3).normal(0.0, 0.5, size=model.params.shape)
    return model, make_problem_set(random.Random(3), 20, 3, 6)


ROUND_ARGS = dict(k=4, epochs=5, lr=1.5)
"""check_rejection_sampling_round 调用你的函数时用的参数（故意不是默认值，看你是不是用了传进来的参数）。"""


def check_rejection_sampling_round(fn, seed=5):
    """
    检查 fn(model, problems, k, rng, epochs, lr) 是否做了一轮拒绝采样微调（STaR 不带合理化的一轮）：
    用 rng 调一次 sample_rollouts 每题采 k 份 → 只留做对的 → 在模型的**副本**上 SFT → 返回 (新模型, 留下的数据)。

    【思路】用同一个种子，自己按正确的做法做一遍（结果和包里的 imitation.rejection_sampling_ft 相同），
        比较新模型的参数；不一样时，再试几种常见错误：没有过滤、留下的是做错的、去了重、
        没用传进来的 epochs / lr、直接改了原模型。
    【参数】fn：你的函数；seed：生成 rng 的种子
    【返回】CheckResult
    【例子】check_rejection_sampling_round(rejection_sampling_round)
    """
    name = getattr(fn, "__name__", "rejection_sampling_round")
    return _run(name, fn, lambda name, fn: _check_round(name, fn, seed))


def _check_round(name, fn, seed):
    from ..imitation import distinct_mask, sft_rollouts
    from ..sampler import sample_rollouts

    model, problems = _round_setup()
    before = model.params.copy()
    out = _call(fn, model, list(problems), ROUND_ARGS["k"], np.random.default_rng(seed),
                epochs=ROUND_ARGS["epochs"], lr=ROUND_ARGS["lr"])
    if isinstance(out, TrainableLLM):
        return _failed(name, "请返回两样东西：(新模型, 留下的数据)，例如 return new_model, data。")
    if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], TrainableLLM)):
        return _failed(name, f"应该返回 (新模型, 留下的数据)，新模型是 TrainableLLM；你返回的是 {type(out).__name__}。")
    new, data = out
    if new is model or not np.array_equal(model.params, before):
        return _failed(name, "原来的模型被改掉了：要先 model.copy() 得到一个副本，在副本上做 SFT，原模型不要动"
                             "（下一轮还要用它做对照）。")
    roll = sample_rollouts(model, problems, ROUND_ARGS["k"], np.random.default_rng(seed))

    def tuned(keep, epochs=ROUND_ARGS["epochs"], lr=ROUND_ARGS["lr"]):
        m = model.copy()
        sft_rollouts(m, roll, keep=keep, epochs=epochs, lr=lr)
        return m.params

    want = tuned(roll.correct)
    n_right = int(roll.correct.sum())
    if _close(new.params, want, rtol=1e-7, atol=1e-9):
        try:
            n_data = len(data)
        except TypeError:
            return _failed(name, "新模型对了，但第二个返回值应该是留下的数据（一个列表），你返回的是 "
                                 f"{type(data).__name__}。")
        if n_data != n_right:
            return _failed(name, f"新模型对了，但留下的数据有 {n_data} 份，应该是做对的 {n_right} 份。")
        return _passed(name, f"通过（{len(problems)} 道题 × {ROUND_ARGS['k']} 份，留下 {n_right} 份做对的，"
                             f"微调后的参数和包里的 rejection_sampling_ft 一致）")
    wrong = {
        "没有过滤：所有解答都拿去做 SFT 了。拒绝采样只留「做对的」（sample.correct 为 True 的）。":
            np.ones(len(roll), bool),
        "留下的是做错的解答：条件写反了，应该留 correct 为 True 的。": ~roll.correct,
        "这一题不去重：做对的解答全部留下（去重是 rejection_sampling_ft 的 dedup=True 选项）。":
            distinct_mask(roll, roll.correct),
    }
    for hint, keep in wrong.items():
        if _close(new.params, tuned(keep), rtol=1e-7, atol=1e-9):
            return _failed(name, hint)
    if _close(new.params, tuned(roll.correct, 30, 2.0), rtol=1e-7, atol=1e-9):
        return _failed(name, "SFT 没有用传进来的 epochs 和 lr（用了默认值）：sft(new_model, data, epochs=epochs, lr=lr)。")
    if np.array_equal(new.params, before):
        return _failed(name, "新模型的参数和原模型一模一样：是不是忘了对副本做 SFT？")
    return _failed(name, "新模型的参数和「只留做对的解答做 SFT」的结果不同。请用传进来的 rng 只调用一次 "
                         "sample_rollouts(model, problems, k, rng)（别的随机数用法会得到不同的样本），"
                         "再用 rollouts_to_data(problems, roll, keep=roll.correct) 取出做对的解答。")


# =============================================================================
# 作业三 · GRPO
# =============================================================================
ADVANTAGE_CASES = (
    ([1, 0, 0, 0], 4), ([1, 1, 0, 0, 1, 1, 1, 1], 4), ([0, 0, 0, 0, 1, 0, 1, 1], 4),
    ([1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], 8), ([1, 0], 2), ([0.5, 1.0, 0.0, 0.25, 0.75, 0.5], 3),
)
"""check_group_advantages 用的 (rewards, group_size)：有全对、全错的组，也有不是 0 / 1 的奖励。"""
STD_EPS = 1e-4


def _grpo_adv(r, g, eps=STD_EPS, ddof=1, baseline="mean", scale="group", eps_where="std"):
    """GRPO 优势和几种常见的写错方式（给检查用）。"""
    grp = np.asarray(r, dtype=float).reshape(-1, g)
    if baseline == "mean":
        centred = grp - grp.mean(axis=1, keepdims=True)
    elif baseline == "batch":
        centred = grp - grp.mean()
    elif baseline == "loo":
        centred = grp - (grp.sum(axis=1, keepdims=True) - grp) / (g - 1)
    else:
        centred = grp
    if scale == "none":
        return centred.reshape(-1)
    var = (grp.var(axis=1, ddof=ddof, keepdims=True) if scale == "group" else np.asarray(r, dtype=float).var(ddof=ddof))
    with np.errstate(all="ignore"):
        return _scaled(centred, var, eps, eps_where).reshape(-1)


def _scaled(centred, var, eps, eps_where):
    if eps_where == "std":
        out = centred / (np.sqrt(var) + eps)
    elif eps_where == "var":
        out = centred / np.sqrt(var + eps)
    else:
        out = centred / np.sqrt(var)
    return out


def check_group_advantages(fn):
    """
    检查 fn(rewards, group_size) 是否是 GRPO 的组内标准化优势：A_i = (r_i − mean(r)) / (std(r) + 1e-4)，
    均值和标准差都在同一组（同一道题的 G 份解答，连续排列）里算，std 是样本标准差（除以 G − 1，同 TRL）。

    【参数】fn：你的函数，rewards 是 (B,) 数组，B 是 group_size 的倍数；返回 (B,) 数组
    【返回】CheckResult
    【边界】会试奖励全相同的组（std = 0，优势应该全是 0，不能是 NaN）和不是 0 / 1 的奖励。
    【例子】check_group_advantages(group_advantages)
    """
    name = getattr(fn, "__name__", "group_advantages")
    return _run(name, fn, _check_group_advantages)


def _check_group_advantages(name, fn):
    from ..rl import group_advantages

    cases = [(np.array(r, dtype=float), g) for r, g in ADVANTAGE_CASES]
    got = [_as_array(_call(fn, r.copy(), g)) for r, g in cases]
    want = [group_advantages(r, g, "grpo", "group", STD_EPS) for r, g in cases]
    tol = dict(rtol=1e-6, atol=1e-8)
    if _all_close(got, want, **tol):
        return _passed(name, f"通过（{len(cases)} 组奖励，包括全对、全错的组和 G = 2、3、4、8）")
    if any(g is None for g in got):
        return _failed(name, "你的函数没有返回数组（是不是忘了 return？）")
    for (r, g), x in zip(cases, got):
        if x.shape != r.shape:
            return _failed(name, f"形状不对：应该返回和 rewards 一样的形状 {r.shape}（每份解答一个优势），"
                                 f"你返回的是 {x.shape}。可以先 reshape(-1, G) 按组算，最后再 reshape(-1)。",
                           [f"rewards = {_fmt(r)}，group_size = {g}"])
    const = [i for i, (r, g) in enumerate(cases) if np.any(np.ptp(r.reshape(-1, g), axis=1) == 0)]
    if any(not np.all(np.isfinite(got[i])) for i in const):
        return _failed(name, "奖励全相同的组，标准差是 0，你得到了 NaN 或无穷大：分母要加上 eps（std + 1e-4），"
                             "这样这一组的优势就是 0 —— 它对梯度没有贡献。", _adv_example(cases, got, want))
    wrong = {
        "用了总体标准差（除以 G），GRPO 用样本标准差（除以 G − 1，np.std(..., ddof=1)，和 TRL 一样）。":
            dict(ddof=0),
        "忘了减去基线（组平均）：只除以了标准差。做错的解答优势应该是负的。": dict(baseline="none"),
        "忘了除以标准差：这是 Dr. GRPO 的「减组平均」，GRPO 还要除以 (std + eps)。": dict(scale="none"),
        "差了 G/(G−1) 倍：你减的是同组「其他人」的平均（留一法，RLOO）。GRPO 减的是包括自己在内的组平均。":
            dict(baseline="loo"),
        "基线要按组算：你减的是整批的平均。每道题难度不同，要和同一道题的其他解答比。": dict(baseline="batch"),
        "标准差要按组算：你除的是整批的标准差（那是 TRL 的 scale_rewards=\"batch\"）。": dict(scale="batch"),
        "eps 要加在标准差上：(std + eps)，不是加在方差里 sqrt(var + eps)。": dict(eps_where="var"),
    }
    for eps in (0.0, 1e-8, 1e-6, 1e-5, 1e-3):
        other = [np.nan_to_num(_grpo_adv(r, g, eps=eps)) if eps == 0 else _grpo_adv(r, g, eps=eps) for r, g in cases]
        if _all_close(got, other, **tol):
            return _failed(name, f"几乎对了，只是分母里的 eps 不一样：请用 std + 1e-4（和 TRL 一样），"
                                 f"你的结果像是用了 {eps:g}。", _adv_example(cases, got, want))
    if all(_close(-x, w, **tol) for x, w in zip(got, want)):
        return _failed(name, "符号反了：做对的解答（奖励高于组平均）优势应该是正的。", _adv_example(cases, got, want))
    for hint, kw in wrong.items():
        if _all_close(got, [_grpo_adv(r, g, **kw) for r, g in cases], **tol):
            return _failed(name, hint, _adv_example(cases, got, want))
    return _failed(name, "对比一下下面这个例子：A_i = (r_i − 组平均) / (组内样本标准差 + 1e-4)。", _adv_example(cases, got, want))


def _adv_example(cases, got, want):
    for (r, g), x, w in zip(cases, got, want):
        if not _close(x, w, rtol=1e-6, atol=1e-8):
            return [f"例子：rewards = {_fmt(r)}，group_size = {g}", f"你的：{_fmt(x, 7)}", f"应该：{_fmt(w, 7)}"]
    return []


SURROGATE_RATIOS = np.array([0.5, 0.75, 0.79, 0.81, 0.9, 1.0, 1.1, 1.19, 1.21, 1.27, 1.29, 1.5, 2.0])
SURROGATE_CASES = ((0.2, 0.2), (0.2, 0.28), (0.1, 0.3))
"""check_clipped_surrogate 试的重要性比率 ρ（包括裁剪边界两侧）和 (eps_low, eps_high)；优势取 +1.5 和 −0.7。"""


def _surrogate(rho, adv, el, eh, kind="right"):
    lo, hi = 1.0 - el, 1.0 + eh
    if kind == "no_low":
        lo = -np.inf
    elif kind == "no_high":
        hi = np.inf
    elif kind == "swap":
        lo, hi = 1.0 - eh, 1.0 + el
    elif kind == "low_only":
        hi = 1.0 + el
    elif kind == "high_only":
        lo = 1.0 - eh
    clipped = np.clip(rho, lo, hi) * adv
    if kind == "max":
        return -np.maximum(rho * adv, clipped)
    if kind == "clipped_only":
        return -clipped
    if kind == "unclipped":
        return -rho * adv
    return -np.minimum(rho * adv, clipped)


def check_clipped_surrogate(fn):
    """
    检查 fn(ratio, adv, eps_low, eps_high) 是否返回每一步的裁剪替代损失
    l = −min(ρ A, clip(ρ, 1 − ε_low, 1 + ε_high) A)（PPO / GRPO；ε_high > ε_low 是 DAPO 的 clip-higher）。

    【参数】fn：你的函数；ratio、adv 是形状相同的数组；返回同形状的损失数组
        （也可以返回 (损失, 下界裁剪, 上界裁剪)，这里只看损失）
    【返回】CheckResult
    【例子】check_clipped_surrogate(clipped_surrogate)
    """
    name = getattr(fn, "__name__", "clipped_surrogate")
    return _run(name, fn, _check_clipped_surrogate)


def _surrogate_cases():
    rho = np.concatenate([SURROGATE_RATIOS, SURROGATE_RATIOS])
    adv = np.concatenate([np.full(len(SURROGATE_RATIOS), 1.5), np.full(len(SURROGATE_RATIOS), -0.7)])
    return [(rho, adv, el, eh) for el, eh in SURROGATE_CASES]


def _check_clipped_surrogate(name, fn):
    from ..rl import clipped_surrogate

    cases = _surrogate_cases()
    got = []
    for rho, adv, el, eh in cases:
        out = _call(fn, rho.copy(), adv.copy(), el, eh)
        if isinstance(out, tuple) and len(out) == 3:
            out = out[0]
        got.append(_as_array(out))
    want = [clipped_surrogate(rho, adv, el, eh).loss for rho, adv, el, eh in cases]
    if _all_close(got, want):
        return _passed(name, f"通过（{len(SURROGATE_RATIOS)} 个重要性比率 × 正负优势 × {len(cases)} 组 (ε_low, ε_high)，"
                             "包括裁剪边界两侧）")
    if any(g is None for g in got):
        return _failed(name, "你的函数没有返回数组（是不是忘了 return？）")
    for (rho, *_), g in zip(cases, got):
        if g.shape != rho.shape:
            return _failed(name, f"形状不对：每一步一个损失，应该返回形状 {rho.shape}，你返回的是 {g.shape}"
                                 "（是不是先求了平均？聚合由训练循环来做）。")
    if all(_close(-g, w) for g, w in zip(got, want)):
        return _failed(name, "符号反了：你返回的是目标 min(ρA, clip(ρ)A)，损失要取负号 −min(...)（训练是让损失变小）。",
                       _surr_example(cases, got, want))
    wrong = {
        "忘了截断下边：ρ 要夹在 [1 − ε_low, 1 + ε_high] 里，你只截了上边。A < 0、ρ 很小时就能看出来。": "no_low",
        "忘了截断上边：ρ 要夹在 [1 − ε_low, 1 + ε_high] 里，你只截了下边。A > 0、ρ 很大时就能看出来。": "no_high",
        "ε_low 和 ε_high 用反了：下界是 1 − ε_low，上界是 1 + ε_high。": "swap",
        "上下界用了同一个 ε（ε_low）：上界应该是 1 + ε_high（DAPO 的 clip-higher 里两者不同）。": "low_only",
        "上下界用了同一个 ε（ε_high）：下界应该是 1 − ε_low。": "high_only",
        "应该取 min（两项里更「悲观」的那个），你取了 max。": "max",
        "少了 min：只用了裁剪后的那一项。ρ 在区间外、又对目标不利时，要用没裁剪的 ρA。": "clipped_only",
        "没有裁剪：这是 −ρA，还要和 −clip(ρ, 1 − ε_low, 1 + ε_high)·A 取 min。": "unclipped",
    }
    for hint, kind in wrong.items():
        if all(_close(g, _surrogate(rho, adv, el, eh, kind)) for g, (rho, adv, el, eh) in zip(got, cases)):
            return _failed(name, hint, _surr_example(cases, got, want))
    return _failed(name, "对比一下下面这个例子：l = −min(ρA, clip(ρ, 1 − ε_low, 1 + ε_high)·A)。",
                   _surr_example(cases, got, want))


def _surr_example(cases, got, want):
    for (rho, adv, el, eh), g, w in zip(cases, got, want):
        bad = np.flatnonzero(~np.isclose(g, w, rtol=1e-7, atol=1e-9))
        if len(bad):
            i = bad[0]
            return [f"例子：ρ = {rho[i]:g}，A = {adv[i]:g}，ε_low = {el:g}，ε_high = {eh:g}：你的 {g[i]:.6g}，应该 {w[i]:.6g}"]
    return []
