"""
评估的实验：一次采样算出所有指标、精确值和采样估计放在一起、测试时计算曲线（第 6 讲"评估与测试时计算"，notebook 04）。

【思路】evaluation 里的每个指标管一件事；这里把它们组合成 notebook 里的一次实验，结果可以直接 print 或画图：
    · evaluate_sampled：同一批样本上的 pass@k、maj@k、best-of-k（精确 / 有噪声的验证器）、mean@n / best@n / worst@n；
    · compare_exact_sampled：pass@1 的精确值（答对的概率）和它的采样估计（标准误只含采样的波动，estimators.sampling_stderr）；
    · inference_curves：每道题花 k 个样本，几个模型的 pass@k、maj@k、best-of-k 随 k 怎么变（plots.plot_test_time_compute）。

【用法】
    import random
    import numpy as np
    from toyllm import ToyLLM, make_problem_set
    from toyllm.experiments import evaluate_sampled

    problems = make_problem_set(random.Random(0), 100, 3, 8)
    print(evaluate_sampled(ToyLLM(1e9), problems, n=16, rng=np.random.default_rng(0)))
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ._checks import as_int, as_real
from .estimators import LEVEL, Estimate, make_estimate, sampling_stderr
from .evaluation import best_of_k, default_ks, draw_samples, maj_at_k, mean_best_worst, pass_at_k_sampled
from .exact import answer_pass_at_k, answer_probs, exact_pass_at_1
from .sampler import prepare_problems
from .tables import pad


@dataclass(frozen=True)
class SampledEval:
    """
    evaluate_sampled 的结果。

    【属性】name：模型名；n：每道题的样本数；problems：题数；ks；verifier_error；
        pass_at_k、maj_at_k、best_of_k、best_of_k_noisy：{k: Estimate}；mean、best、worst：Estimate（mean@n 等）
    【例子】print(result) 打印一张中文表格；result.pass_at_k[1].value 是 pass@1 的估计
    """
    name: str
    n: int
    problems: int
    ks: tuple
    verifier_error: float
    pass_at_k: dict
    maj_at_k: dict
    best_of_k: dict
    best_of_k_noisy: dict
    mean: Estimate
    best: Estimate
    worst: Estimate

    def table(self, digits=3):
        """中文表格：每个 k 一行，四个指标（值 ± 标准误）。"""
        digits = as_int("digits", digits, 0, 10)
        w = 8 + 2 * digits
        lines = [f"{self.name}：{self.problems} 道题，每道采样 n = {self.n} 次（± 后面是题目层面的标准误）",
                 f"{pad('k', 4)}{pad('pass@k', w)}{pad('maj@k', w)}{pad('best-of-k', w)}"
                 f"best-of-k（验证器错 {self.verifier_error:.0%}）"]
        for k in self.ks:
            cells = [format(d[k], f".{digits}f") for d in (self.pass_at_k, self.maj_at_k, self.best_of_k)]
            lines.append(pad(k, 4) + "".join(pad(c, w) for c in cells) + format(self.best_of_k_noisy[k], f".{digits}f"))
        lines.append(f"mean@{self.n} = {self.mean:.{digits}f}，best@{self.n} = {self.best:.{digits}f}，"
                     f"worst@{self.n} = {self.worst:.{digits}f}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def evaluate_sampled(model, problems, n, rng, ks=None, temperature=1.0, verifier_error=0.1, subsets=200,
                     level=LEVEL):
    """
    一次采样，算出所有采样指标：pass@k、maj@k、best-of-k（精确 / 有噪声的验证器）、mean@n / best@n / worst@n。

    【思路】所有指标用**同一批**样本（每道题 n 个），所以它们之间的差别不是采样噪声造成的。
    【参数】model；problems：list of Problem；n：每道题的样本数；rng：numpy.random.Generator（采样、验证器的噪声、
        maj@k 的子集都从它来）；ks：默认 1, 2, 4, … , n；temperature；verifier_error：有噪声的验证器判反的概率；
        subsets：maj@k 每道题抽几个子集；level：置信水平
    【返回】SampledEval（print 它得到一张表）
    【例子】print(evaluate_sampled(ToyLLM(1e9), problems, 16, np.random.default_rng(0)))
    """
    n = as_int("n", n, low=1)
    samples = draw_samples(model, problems, n, rng, temperature)
    pass_k = pass_at_k_sampled(samples, default_ks(n) if ks is None else ks, level)
    ks = tuple(pass_k)
    mbw = mean_best_worst(samples, level=level)
    return SampledEval(
        name=str(getattr(model, "name", model)), n=n, problems=len(samples), ks=ks,
        verifier_error=as_real("verifier_error", verifier_error, 0.0, 1.0), pass_at_k=pass_k,
        maj_at_k=maj_at_k(samples, ks, rng, subsets, level),
        best_of_k=best_of_k(samples, ks, 0.0, None, level),
        best_of_k_noisy=best_of_k(samples, ks, verifier_error, rng, level),
        mean=mbw["mean"], best=mbw["best"], worst=mbw["worst"])


@dataclass(frozen=True)
class ExactVsSampled:
    """
    同一批题上的 pass@1 精确值和采样估计。

    【属性】name；exact：精确值（答对的概率，exact.answer_probs 的平均，float）；path：走对路径的概率
        （exact_pass_at_1）；sampled：采样的 pass@1（最终答案对），Estimate，
        标准误只含采样的波动（见 compare_exact_sampled）；steps_right：采样里"每一步都对"的比例（Estimate），
        它和 path 是同一个量；repaired：做对了、但中间有一步写错（后来被别的错误碰巧修好）的样本比例；
        z：(sampled − exact) / 标准误；n：每道题的样本数
    """
    name: str
    exact: float
    path: float
    sampled: Estimate
    steps_right: Estimate
    repaired: float
    z: float
    n: int

    def __str__(self):
        return (f"{self.name}：pass@1 精确值 = {self.exact:.4f}，采样估计 = {self.sampled:.4f}"
                f"（{self.sampled.level:.0%} 区间 [{self.sampled.ci_low:.4f}, {self.sampled.ci_high:.4f}]），"
                f"相差 {self.z:+.2f} 个标准误")


def compare_exact_sampled(model, problems, n, rng, temperature=1.0, level=LEVEL):
    """
    pass@1 的精确值和采样估计放在一起：估计值、它的误差棒、以及它要估计的真值。

    【思路】采样 n 次的平均是真正 pass@1（答对的概率，exact.answer_probs）的无偏估计，z 就拿它俩比。
        走对路径的概率（path，exact_pass_at_1）比它少了"写错以后又被后面的错误碰巧修好"的样本 ——
        这里把这个比例（repaired）也数出来；"每一步都对"的采样比例（steps_right）和 path 是同一个量。
    【参数】model；problems：list of Problem；n：每道题的样本数（≥ 2）；rng：numpy.random.Generator；
        temperature；level
    【返回】ExactVsSampled（print 它得到一句话）
    【例子】print(compare_exact_sampled(ToyLLM(1e9), problems, 64, np.random.default_rng(0)))
    """
    n = as_int("n", n, low=2)
    problems = prepare_problems(problems).problems
    samples = draw_samples(model, problems, n, rng, temperature)
    r = samples.rollouts
    exact = float(answer_probs(model, problems, temperature).mean())
    correct = samples.correct
    all_right = (r.step_ok | ~r.mask).all(axis=1).reshape(correct.shape)
    se = sampling_stderr(correct)
    value = float(correct.mean())
    z = (value - exact) / se if se > 0 else (0.0 if value == exact else math.inf)
    return ExactVsSampled(
        name=str(getattr(model, "name", model)), exact=exact, path=exact_pass_at_1(model, problems, temperature), sampled=make_estimate(value, se, len(samples), level),
        steps_right=make_estimate(all_right.mean(), sampling_stderr(all_right), len(samples), level),
        repaired=float((correct & ~all_right).mean()), z=z, n=n)


def inference_curves(models, problems, n, rng, ks=None, temperature=1.0, verifier_error=0.1, subsets=200,
                      level=LEVEL):
    """
    测试时计算（test-time compute）曲线：每道题花 k 个样本，pass@k、maj@k、best-of-k 随 k 怎么变。

    （名字不叫 test_time_compute：以 test_ 开头的函数被导入测试文件时，pytest 会把它当成一个测试去运行。）

    【思路】同样多的样本，三种用法：pass@k（有一个对就算对 —— 需要一个完美的验证器，是上限）、
        maj@k（不需要验证器，投票）、best-of-k（需要验证器；验证器会出错时介于两者之间或更差）。
        再和模型规模、有没有思维链放在一起比：小模型多采样能不能追上大模型？
    【参数】models：模型的列表（例如 [ToyLLM(1e9), ToyLLM(1e11), ToyLLM(1e9, cot=False)]）；
        problems；n：每道题的样本数；rng：numpy.random.Generator；ks：默认 1, 2, 4, … , n；
        temperature、verifier_error、subsets、level：同 evaluate_sampled
    【返回】可以直接画图的普通数据（dict / list / float）：
        {"ks": [...], "n": n, "problems": P, "verifier_error": ε,
         "models": [{"name", "size", "cot",
                     "exact_pass_at_k", "pass_at_k", "pass_at_k_se", "maj_at_k", "maj_at_k_se",
                     "best_of_k", "best_of_k_se", "best_of_k_noisy", "best_of_k_noisy_se"}, ...]}
        每个列表和 "ks" 一样长；*_se 是标准误（题目层面）；exact_pass_at_k 是精确的 pass@k
        （exact.answer_pass_at_k：由答对的概率 q 算 1 − (1 − q)^k），采样的 pass@k 估计的就是它。
    【例子】data = inference_curves([ToyLLM(1e9), ToyLLM(1e11)], problems, 32, np.random.default_rng(0))；
        plots.plot_test_time_compute(data)
    """
    models = _as_models(models)
    n = as_int("n", n, low=1)
    problems = list(prepare_problems(problems).problems)
    rows, ks_out = [], None
    for model in models:
        ev = evaluate_sampled(model, problems, n, rng, ks, temperature, verifier_error, subsets, level)
        ks_out = list(ev.ks)
        exact = answer_pass_at_k(model, problems, ev.ks, temperature)
        row = {"name": ev.name, "size": float(model.size), "cot": bool(model.cot),
               "exact_pass_at_k": [exact[k] for k in ev.ks]}
        for key, d in (("pass_at_k", ev.pass_at_k), ("maj_at_k", ev.maj_at_k), ("best_of_k", ev.best_of_k),
                       ("best_of_k_noisy", ev.best_of_k_noisy)):
            row[key] = [d[k].value for k in ev.ks]
            row[key + "_se"] = [d[k].stderr for k in ev.ks]
        rows.append(row)
    return {"ks": ks_out, "n": n, "problems": len(problems), "verifier_error": float(verifier_error),
            "models": rows}


def _as_models(models):
    if hasattr(models, "size") and hasattr(models, "cot"):
        return [models]
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or not models:
        raise TypeError(f"models 必须是模型的列表，例如 [ToyLLM(1e9), ToyLLM(1e11)]，收到 {models!r}")
    for m in models:
        if not (hasattr(m, "size") and hasattr(m, "cot")):
            raise TypeError(f"models 里的每一个都必须是 ToyLLM 或 TrainableLLM，收到 {m!r}")
    return list(models)
