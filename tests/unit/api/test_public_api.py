"""
公开 API 的坏输入（hypothesis）：每个公开函数、每个参数，喂它未知的情境、错的类型、NaN、无穷和空的输入。

【要求】每一次都抛出 ValueError / TypeError（或 KeyError 的子类），消息是中文、写出参数名 ——
    不能是从深处冒出来的裸 KeyError / IndexError / ZeroDivisionError / numpy 的英文错误，更不能悄悄地
    返回一个没有意义的结果（例如 NaN）。

【怎么读这张表】CASES 的每一项是一个公开函数：good() 给出一组合法的参数，bad 写出要破坏哪些参数、各用哪一类坏值
    （KINDS：number、int、context、model、problems……）。每个 (函数, 参数) 是一个测试；hypothesis 从那一类坏值里抽，
    把那个参数换掉，其他参数保持合法。表是显式的，所以一个新的公开函数没有写进来时，test_every_public_function_is_listed
    会失败。
"""

import importlib
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toyllm
from toyllm import ToyLLM, TrainableLLM, make_problem_set

CHINESE = re.compile(r"[\u4e00-\u9fff]")
NAN, INF = math.nan, math.inf

# =============================================================================
# 坏值的种类
# =============================================================================
_nonfinite = [NAN, INF, -INF, np.float64(NAN)]
KINDS = {
    "number": _nonfinite + ["1", None, [1.0], complex(1, 1)],
    "positive": _nonfinite + ["1", None, 0.0, -1.0],
    "temperature": _nonfinite + ["1", None, -1.0],
    "nonneg": _nonfinite + ["1", None, -1.0],
    "optional_number": _nonfinite + ["1", [1.0], complex(1, 1)],
    "int": [2.5, NAN, INF, "3", None],
    "count": [2.5, NAN, "3", None, -1],
    "context": [("div", 0.0), ("mul", 9.9), "mul 2.2", None, 3, ("add",)],
    "op": ["div", "", None, 3],
    "model": [None, "1B", 3, object()],
    "problems": [[], None, "abc", [1, 2], [None]],
    "problem": [None, "abc", 3, (1, 2, 3)],
    "rng": [None, 0, "seed", np.random.default_rng(0)],
    "nprng": [None, 0, "seed", random.Random(0)],
    "array": [[], np.array([NAN]), [INF, 1.0], "abc", None],
    "choice": ["nope", "", None, 3],
    "mapping": [[], None, "x", {}],
    "notmapping": [[1], "x", 3],
    "history": [[1], "x", 3, None],
    "columns": [[], [1, 2], [None], "abc", ["nope"]],
    "notstr": [[], [1, 2], 3, b"x"],
    "path": [None, 3, ""],
    "callable": [3, "f"],
    "text": [None, 3, b"x"],
    "ks": [[], [0], [2.5], "k", None, [NAN]],
    "answers": [[], None, "abc", 3],
    "eps": [NAN, -INF, "1", None, -1.0, [1.0]],      # +inf 是合法的：表示不裁剪
    "answer": [None, "abc", 2.5, [1]],
    "stderr": [INF, "1", None, -1.0, [0.1]],          # NaN 是合法的标准误（只有一个样本时无法估计）
    # 下面几类不含 None：这些参数的 None 是文档写明的默认值（例如 None 表示"用默认的题"）
    "name": ["nope", "", 3],
    "problems_given": [[], "abc", [1, 2], [None]],
    "array_given": [[], np.array([NAN]), [INF, 1.0], "abc"],
    "count_given": [2.5, NAN, "3", -1],
    "ks_given": [[], [0], [2.5], "k", [NAN]],
    "axes": ["ax", 3, [1, 2, 3]],
}
"""每一类坏值（hypothesis 从里面抽）。每一个都是那个参数不该接受的值。"""


# =============================================================================
# 合法的参数（小而快）
# =============================================================================
def _problems():
    return make_problem_set(random.Random(0), 3, 3, 4)


def _model():
    return TrainableLLM(1e9)


def _sample():
    p = _problems()[0]
    return p, ToyLLM(1e9).generate(p, random.Random(0))


def _rollouts():
    from toyllm.sampler import sample_rollouts

    return sample_rollouts(_model(), _problems(), 2, np.random.default_rng(0))


def _samples():
    from toyllm.evaluation import draw_samples

    return draw_samples(ToyLLM(1e9), _problems(), 4, np.random.default_rng(0))


def _history():
    return {"iteration": [1, 2, 3], "samples": [10, 20, 30], "pass1_exact": [0.5, 0.7, 0.9]}


def _axes(n):
    from matplotlib.figure import Figure

    return Figure().subplots(1, n, squeeze=False).ravel()


PATH = str(__import__("pathlib").Path(__import__("tempfile").gettempdir()) / "toyllm-public-api.safetensors")
"""保存函数的合法路径（临时文件夹里的一个文件）。"""


def _curves():
    from toyllm.experiments import inference_curves

    return inference_curves([ToyLLM(1e9)], _problems(), 2, np.random.default_rng(0), subsets=2)


def _scaling():
    from toyllm.scaling import scaling_curve

    return scaling_curve(_problems(), np.random.default_rng(0), sizes=(1e8, 1e9), n=2)


def _compared():
    from toyllm.experiments import compare_exact_sampled

    return [compare_exact_sampled(ToyLLM(1e9), _problems(), 2, np.random.default_rng(0))]


def _passk_result():
    from toyllm.dashboards import run_passk_dashboard_logic

    return run_passk_dashboard_logic(n=2, repeats=2, n_problems=2)[0]


def _grad_check():
    from toyllm.gradcheck import compare_grads

    return compare_grads("g", np.zeros((12, 3)), np.zeros((12, 3)))


def _rl_config():
    from toyllm.rl import preset

    return preset("grpo", iterations=1, batch_problems=2, group_size=2)


def _grad_result():
    from toyllm.dashboards import run_gradient_dashboard_logic

    return run_gradient_dashboard_logic(n_samples=2, repeats=3, n_problems=2)[0]


def _module_path(module):
    """toyllm 的模块，或维护者的工具 tools/checkpoint.py（保存和读取）。"""
    return "tools.checkpoint" if module == "checkpoint" else f"toyllm.{module}"


class Case:
    """一个公开函数：func（"模块.名字"，或者 "模块.类.方法" 用 obj 给出实例），good() 给出合法参数，bad {参数: 种类}。"""

    def __init__(self, func, good, bad, obj=None):
        self.func, self.good, self.bad, self.obj = func, good, bad, obj

    def resolve(self):
        module, _, name = self.func.rpartition(".")
        if self.obj is not None:
            return getattr(self.obj(), name)
        return getattr(importlib.import_module(_module_path(module)), name)


def _problem():
    from toyllm.arithmetic import Problem, Step
    return Problem(37, (Step("mul", 12), Step("add", 458)), 902)


def _tiny(context=8):
    from toyllm.tinylm import TinyLM
    return TinyLM(d=8, heads=2, layers=1, context=context)


def _sums():
    from toyllm.tinylm import addition_examples
    return addition_examples(4, digits=1)


def _tiny_config():
    from toyllm.tinylm import tiny_config
    return tiny_config("grpo", iterations=1, batch_problems=2, group_size=2)


CASES = [
    # ---- 小 transformer（notebook 08）-------------------------------------------------------
    Case("tinylm.TinyLM", lambda: dict(d=8, heads=2, layers=1, context=8, seed=0),
         {"d": "count", "heads": "count", "layers": "count", "context": "count", "seed": "count"}),
    Case("tinylm.encode", lambda: dict(text="12+3="), {"text": "text"}),
    Case("tinylm.answer_of", lambda: dict(completion="12$"), {"completion": "text"}),
    Case("tinylm.step_values", lambda: dict(completion="12$"), {"completion": "text"}),
    Case("tinylm.write_number", lambda: dict(n=37), {"n": "int"}),
    Case("tinylm.read_number", lambda: dict(text="7300"), {"text": "text"}),
    Case("tinylm.problem_example", lambda: dict(problem=_problem()), {"problem": "problem"}),
    Case("tinylm.addition_examples", lambda: dict(n=5, seed=0, digits=1), {"n": "count", "seed": "count", "digits": "int"}),
    Case("tinylm.generate", lambda: dict(model=_tiny(), prompts=["1+2="], temperature=0),
         {"model": "model", "prompts": "notstr", "temperature": "temperature"}),
    Case("tinylm.accuracy", lambda: dict(model=_tiny(), examples=_sums(), temperature=0),
         {"model": "model", "examples": "problems", "temperature": "temperature"}),
    Case("tinylm.pass_at_k_curve", lambda: dict(model=_tiny(), examples=_sums(), n=2, ks=[1, 2]),
         {"model": "model", "examples": "problems", "n": "count", "ks": "ks"}),
    Case("tinylm.sft", lambda: dict(model=_tiny(), examples=_sums(), steps=1, batch_size=2, lr=1e-3, seed=0),
         {"model": "model", "examples": "problems", "steps": "count", "batch_size": "count", "lr": "nonneg",
          "seed": "count"}),
    Case("tinylm.rl_train", lambda: dict(model=_tiny(), examples=_sums(), config=_tiny_config()),
         {"model": "model", "examples": "problems", "config": "name"}),
    Case("tinylm.tiny_config", lambda: dict(name="grpo"), {"name": "name"}),
    Case("tinylm.step_errors", lambda: dict(model=_tiny(32), problems=[_problem()]),
         {"model": "model", "problems": "problems"}),
    Case("tinylm.save_weights", lambda: dict(model=_tiny(), path=PATH),
         {"model": "model", "path": "path", "history": "notmapping"}),
    Case("tinylm.load_weights", lambda: dict(path="m.safetensors"), {"path": "path"}),
    # ---- 算术、文字、估计 -----------------------------------------------------------------
    Case("arithmetic.apply_op", lambda: dict(op="add", a=12, b=7, procedure="correct"),
         {"op": "op", "a": "int", "b": "int", "procedure": "choice"}),
    Case("arithmetic.bug_bites", lambda: dict(op="add", a=18, b=7), {"op": "op", "a": "int", "b": "int"}),
    Case("arithmetic.count_carries", lambda: dict(a=18, b=7), {"a": "int", "b": "int"}),
    Case("arithmetic.count_borrows", lambda: dict(a=18, b=7), {"a": "int", "b": "int"}),
    Case("arithmetic.step_hardness", lambda: dict(op="mul", a=18, b=7), {"op": "op", "a": "int", "b": "int"}),
    Case("arithmetic.make_problem", lambda: dict(rng=random.Random(0), n_steps=3), {"rng": "rng", "n_steps": "count"}),
    Case("arithmetic.make_problem_set", lambda: dict(rng=random.Random(0), count=2, min_steps=3, max_steps=4),
         {"rng": "rng", "count": "count", "min_steps": "count", "max_steps": "count"}),
    Case("text.mean", lambda: dict(xs=[1.0, 2.0]), {"xs": "array"}),
    # display_width、pad 的 s 可以是任何对象（文档写明先转成 str），所以不破坏它
    Case("text.pad", lambda: dict(s="中文", width=6), {"width": "count", "align": "choice"}),
    Case("text.bar", lambda: dict(frac=0.5), {"frac": "number", "width": "count"}),
    Case("text.fmt_size", lambda: dict(size=1e9), {"size": "positive"}),
    Case("estimators.pass_at_k", lambda: dict(n=10, c=3, k=2), {"n": "count", "c": "count", "k": "count"}),
    Case("estimators.choose_ratio", lambda: dict(m=[0, 3], k=2, n=4), {"m": "array", "k": "count", "n": "count"}),
    # ---- 规模曲线、梯度检查 ----------------------------------------------------------------
    Case("scaling.sigmoid_curve", lambda: dict(C=[1e3, 1e4], R0=0.1, A=0.9, B=1.0, C_mid=1e3),
         {"C": "array", "R0": "number", "A": "number", "B": "number", "C_mid": "positive"}),
    Case("scaling.fit_sigmoid", lambda: dict(C=[1e3, 1e4, 1e5, 1e6], R=[0.2, 0.4, 0.7, 0.8], R0=0.1),
         {"C": "array", "R": "array", "R0": "number", "A": "optional_number", "A_max": "optional_number"}),
    Case("scaling.reach_target", lambda: dict(history=_history(), target=0.8),
         {"history": "mapping", "target": "number", "column": "choice"}),
    Case("gradcheck.as_grad_array", lambda: dict(name="grad", grad=np.zeros((12, 3))), {"grad": "array"}),
    Case("gradcheck.finite_difference_grad", lambda: dict(f=lambda p: float(p.sum()), params=np.zeros((12, 3))),
         {"f": "callable", "params": "array", "h": "positive"}),
    Case("gradcheck.objective_function", lambda: dict(model=_model(), problems=_problems()),
         {"model": "model", "problems": "problems", "objective": "choice", "temperature": "positive"}),
    Case("gradcheck.compare_grads", lambda: dict(name="g", mine=np.zeros((12, 3)), reference=np.zeros((12, 3))),
         {"mine": "array", "reference": "array", "rtol": "nonneg", "atol": "nonneg"}),
    Case("gradcheck.diagnose", lambda: dict(mine=np.zeros((12, 3)), reference=np.ones((12, 3))),
         {"mine": "array", "reference": "array", "rtol": "nonneg", "atol": "nonneg"}),
    Case("gradcheck.format_result", lambda: dict(result=_grad_check()), {"result": "text"}),
    # ---- 保存 / 读取 -----------------------------------------------------------------------
    Case("checkpoint.save_model", lambda: dict(model=_model(), path=PATH),
         {"model": "model", "path": "path", "metadata": "notmapping", "history": "notmapping"}),
    Case("checkpoint.load_model", lambda: dict(path="m.safetensors"), {"path": "path"}),
    Case("checkpoint.convert", lambda: dict(old="m.json", new=PATH), {"old": "path", "new": "path"}),
    Case("saving.load_history", lambda: dict(path="m.safetensors"), {"path": "path"}),
    # ---- 画图、面板 ------------------------------------------------------------------------
    Case("plots.plot_pass_at_k", lambda: dict(curves={"1B": {1: 0.5, 2: 0.7}}), {"curves": "mapping", "ax": "axes"}),
    Case("plots.plot_test_time_compute", lambda: dict(data=_curves()), {"data": "mapping", "by": "choice", "axes": "axes"}),
    Case("plots.plot_scaling", lambda: dict(data=_scaling()), {"data": "mapping", "axes": "axes"}),
    Case("plots.plot_context_bars", lambda: dict(before=ToyLLM(1e9), after=_model()),
         {"before": "model", "after": "model", "labels": "text", "ax": "axes"}),
    Case("plots.plot_training_curves", lambda: dict(history=_history()),
         {"history": "mapping", "columns": "columns", "axes": "axes"}),
    Case("plots.plot_exact_vs_sampled", lambda: dict(results=_compared()), {"results": "problems", "ax": "axes"}),
    Case("plots.plot_gradient_estimates", lambda: dict(result=_grad_result()), {"result": "text", "axes": "axes"}),
    Case("plots.plot_pass_at_k_estimates", lambda: dict(result=_passk_result()),
         {"result": "text", "estimator": "choice", "ax": "axes"}),
    Case("plotstyle.figure_png", lambda: dict(fig=_axes(1)[0].figure), {"fig": "text", "dpi": "positive"}),
    Case("dashboards.run_gradient_dashboard_logic", lambda: dict(n_samples=2, repeats=2, n_problems=2),
         {"size": "positive", "n_samples": "count", "context": "context", "procedure": "choice", "repeats": "count",
          "n_problems": "count", "seed": "count", "axes": "axes"}),
    Case("dashboards.run_passk_dashboard_logic", lambda: dict(n=2, repeats=2, n_problems=2),
         {"size": "positive", "n": "count", "temperature": "positive", "estimator": "choice", "repeats": "count",
          "n_problems": "count", "seed": "count", "pass_at_k_fn": "callable", "axes": "axes"}),
    Case("dashboards.run_grpo_dashboard_logic", lambda: dict(iters=1),
         {"lr": "number", "group_size": "count", "size": "positive", "temperature": "positive", "iters": "count",
          "seed": "count", "advantage": "choice", "estimator": "choice", "advantage_fn": "callable", "axes": "axes"}),
    Case("dashboards.gradient_dashboard", lambda: dict(n_samples=2, repeats=2, n_problems=2),
         {"size": "positive", "n_samples": "count", "context": "context", "procedure": "choice", "seed": "count"}),
    Case("dashboards.passk_dashboard", lambda: dict(n=2, repeats=2, n_problems=2),
         {"size": "positive", "n": "count", "temperature": "positive", "estimator": "choice", "seed": "count",
          "pass_at_k_fn": "callable"}),
    Case("dashboards.grpo_dashboard", lambda: dict(iters=1),
         {"advantage_fn": "callable", "surrogate_fn": "callable", "lr": "number", "group_size": "count",
          "iters": "count", "size": "positive", "temperature": "positive", "advantage": "choice", "estimator": "choice"}),
    # ---- 模型（rl 分支） -------------------------------------------------------------------
    Case("toy_llm.ToyLLM", lambda: dict(size=1e9), {"size": "positive", "name": "notstr"}),
    Case("toy_llm.softmax", lambda: dict(logits=[1.0, 2.0]), {"logits": "array", "temperature": "temperature"}),
    Case("toy_llm.ToyLLM.context_logits", lambda: dict(key=("mul", 2.2)), {"key": "context", "step_index": "count"},
         obj=lambda: ToyLLM(1e9)),
    Case("toy_llm.ToyLLM.step_probs", lambda: dict(op="add", a=12, b=7, step_index=0),
         {"op": "op", "a": "int", "b": "int", "step_index": "count", "temperature": "temperature"}, obj=lambda: ToyLLM(1e9)),
    Case("toy_llm.ToyLLM.generate", lambda: dict(problem=_problems()[0], rng=random.Random(0)),
         {"problem": "problem", "rng": "rng", "temperature": "temperature"}, obj=lambda: ToyLLM(1e9)),
    Case("trainable.TrainableLLM", lambda: dict(size=1e9), {"size": "positive", "delta": "notmapping"}),
    Case("trainable.TrainableLLM.p_correct", lambda: dict(key=("mul", 2.2)), {"key": "context"}, obj=_model),
    Case("trainable.TrainableLLM.context_logits", lambda: dict(key=("mul", 2.2)), {"key": "context"}, obj=_model),
    Case("trainable.context_key", lambda: dict(op="add", a=12, b=7), {"op": "op", "a": "int", "b": "int"}),
    Case("trainable.add_grad", lambda: dict(grads={}, key=("mul", 2.2), action=0, probs=[0.5, 0.3, 0.2], weight=1.0),
         {"grads": "problems", "key": "context", "action": "count", "probs": "array", "weight": "number"}),
    Case("trainable.apply_grads", lambda: dict(model=_model(), grads={}, lr=1.0),
         {"model": "model", "grads": "problems", "lr": "number"}),
    Case("trainable.context_report", lambda: dict(model=_model()), {"model": "model"}),
    Case("trainable.entropy_of", lambda: dict(model=_model(), problems=_problems(), rng=random.Random(0)),
         {"model": "model", "problems": "problems", "rng": "rng", "n": "count"}),
    Case("trainable.evaluate", lambda: dict(model=_model(), problems=_problems(), rng=random.Random(0)),
         {"model": "model", "problems": "problems", "rng": "rng", "n": "count", "ks": "ks"}),
    Case("trainable.log_likelihood", lambda: dict(model=_model(), data=[_sample()]), {"model": "model", "data": "text"}),
    Case("trainable.probs_for", lambda: dict(model=_model(), problem=_sample()[0], sample=_sample()[1]),
         {"model": "model", "problem": "problem", "sample": "problem"}),
    Case("trainable.sft", lambda: dict(model=_model(), data=[_sample()], epochs=1),
         {"model": "model", "data": "text", "epochs": "count", "lr": "number"}),
    Case("trainable.step_records", lambda: dict(problem=_sample()[0], sample=_sample()[1]),
         {"problem": "problem", "sample": "problem"}),
    Case("policy.base_logit_table", lambda: dict(size=1e9), {"size": "positive"}),
    Case("policy.logit_table", lambda: dict(model=_model()), {"model": "model", "step_index": "count"}),
    Case("policy.prob_table", lambda: dict(model=_model()),
         {"model": "model", "temperature": "temperature", "step_index": "count"}),
    Case("policy.softmax_rows", lambda: dict(logits=np.zeros((2, 3))), {"logits": "array", "temperature": "temperature"}),
    Case("sampler.prepare_problems", lambda: dict(problems=_problems()), {"problems": "problems"}),
    Case("sampler.sample_rollouts", lambda: dict(model=_model(), problems=_problems(), n=2, rng=np.random.default_rng(0)),
         {"model": "model", "problems": "problems", "n": "count", "rng": "nprng", "temperature": "temperature"}),
    Case("exact.correct_paths", lambda: dict(problems=_problems()), {"problems": "problems"}),
    *[Case(f"exact.{name}", lambda: dict(model=_model(), problems=_problems()),
           {"model": "model", "problems": "problems", "temperature": "temperature"})
      for name in ("exact_entropy", "exact_pass_at_1", "expected_reward", "grad_expected_reward",
                   "log_expected_reward", "mean_log_reward")],
    Case("exact.exact_pass_at_k", lambda: dict(model=_model(), problems=_problems(), k=[1, 2]),
         {"model": "model", "problems": "problems", "k": "ks", "temperature": "temperature"}),
    Case("exact.answer_pass_at_k", lambda: dict(model=_model(), problems=_problems(), k=[1, 2]),
         {"model": "model", "problems": "problems", "k": "ks", "temperature": "temperature"}),
    Case("evaluation.draw_samples", lambda: dict(model=_model(), problems=_problems(), n=2, rng=np.random.default_rng(0)),
         {"model": "model", "problems": "problems", "n": "count", "rng": "nprng", "temperature": "temperature"}),
    Case("evaluation.pass_at_k_sampled", lambda: dict(samples=_samples()), {"samples": "problems", "ks": "ks"}),
    Case("evaluation.maj_at_k", lambda: dict(samples=_samples()), {"samples": "problems", "ks": "ks"}),
    Case("evaluation.best_of_k", lambda: dict(samples=_samples()),
         {"samples": "problems", "ks": "ks", "verifier_error": "number"}),
    Case("evaluation.mean_best_worst", lambda: dict(samples=_samples()), {"samples": "problems", "k": "count_given"}),
    Case("evaluation.maj_vote", lambda: dict(answers=[1, 2, 2]), {"answers": "answers"}),
    Case("evaluation.best_of_n", lambda: dict(answers=[1, 2], scores=[0.1, 0.9]), {"answers": "answers", "scores": "array"}),
    Case("evaluation.verify", lambda: dict(answers=[1, 2, None], truth=3),
         {"answers": "answers", "truth": "answer", "error_rate": "number"}),
    Case("estimators.estimate_mean", lambda: dict(values=[0.1, 0.5]), {"values": "array", "level": "number"}),
    Case("estimators.verdict", lambda: dict(diff=0.1, stderr=0.01), {"diff": "number", "stderr": "nonneg", "z": "nonneg"}),
    Case("estimators.t_critical", lambda: dict(df=4), {"df": "count"}),
    Case("estimators.seed_verdict", lambda: dict(a=[0.1, 0.2, 0.3]), {"a": "array"}),
    Case("estimators.make_estimate", lambda: dict(value=0.5, stderr=0.1, n=10),
         {"value": "number", "stderr": "stderr", "n": "count", "level": "number"}),
    Case("estimators.sampling_stderr", lambda: dict(correct=np.array([[1, 0], [1, 1]])), {"correct": "array"}),
    Case("experiments.compare_exact_sampled", lambda: dict(model=_model(), problems=_problems(), n=2,
                                                           rng=np.random.default_rng(0)),
         {"model": "model", "problems": "problems", "n": "count", "rng": "nprng", "temperature": "temperature"}),
    Case("experiments.evaluate_sampled", lambda: dict(model=_model(), problems=_problems(), n=2,
                                                      rng=np.random.default_rng(0), subsets=2),
         {"model": "model", "problems": "problems", "n": "count", "rng": "nprng", "verifier_error": "number"}),
    Case("experiments.inference_curves", lambda: dict(models=[_model()], problems=_problems(), n=2,
                                                      rng=np.random.default_rng(0), subsets=2),
         {"models": "problems", "problems": "problems", "n": "count", "rng": "nprng"}),
    Case("scaling.scaling_curve", lambda: dict(problems=_problems(), rng=np.random.default_rng(0), sizes=(1e9,), n=2),
         {"problems": "problems", "rng": "nprng", "sizes": "array", "n": "count"}),
    Case("evaluation.default_ks", lambda: dict(n=8), {"n": "count"}),
    Case("rl.group_advantages", lambda: dict(rewards=[1.0, 0.0, 1.0, 1.0], group_size=2),
         {"rewards": "array", "group_size": "count", "method": "choice", "eps": "number"}),
    Case("rl.clipped_surrogate", lambda: dict(ratio=[1.0, 1.1], adv=[0.5, -0.5]),
         {"ratio": "array", "adv": "array", "eps_low": "eps", "eps_high": "eps"}),
    Case("rl.kl_estimates", lambda: dict(logp=[-1.0, -2.0], logp_ref=[-1.5, -2.0]), {"logp": "array", "logp_ref": "array"}),
    Case("rl.aggregate_loss", lambda: dict(per_step=np.ones((2, 3)), mask=np.ones((2, 3), bool)),
         {"per_step": "array", "mask": "array", "how": "choice"}),
    Case("rl.aggregation_weights", lambda: dict(mask=np.ones((2, 3), bool)), {"mask": "array", "how": "choice"}),
    Case("rl.preset", lambda: dict(name="grpo"), {"name": "name"}),
    Case("rl.diff_presets", lambda: dict(a="grpo", b="dapo"), {"a": "name", "b": "name"}),
    Case("rl.presets_table", lambda: dict(names=["grpo"]), {"names": "ks_given"}),
    Case("rl.default_problems", lambda: dict(seed=0, n_train=4, n_heldout=4), {"seed": "count", "n_train": "count"}),
    Case("rl.step_rewards", lambda: dict(rollouts=_rollouts()), {"rollouts": "problem", "kind": "choice"}),
    Case("rl.train", lambda: dict(model=_model(), config=_rl_config(), train_problems=_problems(),
                                  heldout_problems=_problems()),
         {"model": "model", "train_problems": "problems_given", "heldout_problems": "problems_given",
          "advantage_fn": "callable"}),
    Case("imitation.step_counts", lambda: dict(ctx=np.zeros((1, 2), int), actions=np.zeros((1, 2), int),
                                               mask=np.ones((1, 2), bool)),
         {"ctx": "array", "actions": "array", "mask": "array"}),
    Case("imitation.distinct_mask", lambda: dict(rollouts=_rollouts()), {"rollouts": "problem", "keep": "array_given"}),
    Case("imitation.rollouts_to_data", lambda: dict(problems=_problems(), rollouts=_rollouts()),
         {"problems": "problems", "rollouts": "problem"}),
    Case("imitation.sft_counts", lambda: dict(model=_model(), counts=np.zeros((12, 3)), epochs=1),
         {"model": "model", "counts": "array", "epochs": "count", "lr": "number"}),
    Case("imitation.sft_rollouts", lambda: dict(model=_model(), rollouts=_rollouts(), epochs=1),
         {"model": "model", "rollouts": "problem", "epochs": "count", "lr": "number"}),
    Case("imitation.hinted_rollouts", lambda: dict(model=_model(), problems=_problems(), n=2, rng=np.random.default_rng(0)),
         {"model": "model", "problems": "problems", "n": "count", "rng": "nprng", "hint_boost": "number"}),
    *[Case(f"imitation.{name}", lambda: dict(model=_model(), train_problems=_problems(), heldout_problems=_problems(),
                                             rounds=1, epochs=1),
           {"model": "model", "train_problems": "problems", "heldout_problems": "problems", "rounds": "count",
            "lr": "number"}) for name in ("star", "expert_iteration", "rejection_sampling_ft")],
]
"""每个公开函数一项：合法的参数，以及要破坏的参数和坏值的种类。"""


# =============================================================================
# 检查
# =============================================================================
@pytest.fixture(autouse=True)
def _close_figures():
    """画图函数（不给 ax 时）用 pyplot 新建的图，测完关掉，不留给别的测试。"""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _rejected(call, param):
    """call() 必须抛出 ValueError / TypeError / KeyError 的子类，消息是中文并写出参数名。"""
    try:
        out = call()
    except (ValueError, TypeError) as e:
        err = e
    except KeyError as e:
        assert type(e) is not KeyError, f"裸 KeyError（应当是写出参数 {param} 的中文错误）：{e!r}"
        err = e
    else:
        pytest.fail(f"坏的 {param} 被悄悄接受了，返回 {out!r}"[:300])
    message = str(err.args[0]) if err.args else ""
    assert CHINESE.search(message), f"错误消息不是中文：{type(err).__name__}: {message}"
    assert param in message, f"错误消息没有写出参数名 {param}：{type(err).__name__}: {message}"


PARAMS = [pytest.param(case, param, id=f"{case.func}:{param}")
          for case in CASES for param in case.bad]


@pytest.mark.parametrize("case, param", PARAMS)
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bad_argument_is_rejected_in_chinese(case, param, data):
    func = case.resolve()
    bad = data.draw(st.sampled_from(KINDS[case.bad[param]]), label=param)
    args = dict(case.good(), **{param: bad})
    _rejected(lambda: func(**args), param)


def test_good_arguments_are_accepted():
    """表里的"合法参数"真的合法（否则上面的测试测的是别的错误）。"""
    import matplotlib

    matplotlib.use("Agg")
    for case in CASES:
        if case.func.startswith(("checkpoint.load", "checkpoint.convert", "saving.load", "tinylm.load")):
            continue                     # 读取的"合法参数"是一个不存在的文件：只用来破坏 path 的类型
        case.resolve()(**case.good())


def test_every_public_function_is_listed():
    """每个模块 __all__（没有时：模块里定义的公开名字）里的函数都在 CASES 里（或者明确说明了为什么不在）."""
    no_arguments = {"plotstyle.font_path", "plotstyle.use_chinese_font",     # 没有参数可以破坏
                    "text.display_width"}                                    # 任何对象都先转成 str（文档写明）
    not_functions = set()
    listed = {c.func for c in CASES} | no_arguments | not_functions
    missing = []
    for module in ("arithmetic", "text", "estimators", "scaling", "gradcheck", "checkpoint", "plots", "widgets",
                   "plotstyle"):
        mod = importlib.import_module(_module_path(module))
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for name in names:
            obj = getattr(mod, name)
            if callable(obj) and getattr(obj, "__module__", None) == mod.__name__ and not isinstance(obj, type):
                vectorised = ("context_ids_np", "exact_np", "apply_op_np", "bug_np")
                if f"{module}.{name}" not in listed and name not in vectorised:
                    missing.append(f"{module}.{name}")
    assert missing == [], f"这些公开函数没有写进 CASES：{missing}"
    assert hasattr(toyllm, "__version__")


# 搬到 toyllm.peers 的公开名字（#37）：旧的位置 → 新的位置（README 的"搬家的名字"是同一张表）
MOVED = {"toyllm.rl.peers.ROWS": "toyllm.peers.ROWS", "toyllm.rl.peers.to_peer": "toyllm.peers.to_peer",
         "toyllm.rl.peers.hydra_value": "toyllm.peers.hydra_value", "toyllm.rl.peer_rows.Row": "toyllm.peers.rows.Row",
         "toyllm.rl.peer_losses.sapo_surrogate": "toyllm.peers.losses.sapo_surrogate",
         "toyllm.rl.peer_losses.rollout_correction": "toyllm.peers.losses.rollout_correction",
         "toyllm.rl.peer_advantages.opo_advantages": "toyllm.peers.advantages.opo_advantages",
         "toyllm.rl.peer_advantages.reinforce_pp_advantages": "toyllm.rl.losses.reinforce_pp_advantages",
         "toyllm.rl.peer_advantages.whiten": "toyllm.rl.losses.whiten",
         "toyllm.rl.cs336.masked_mean": "toyllm.peers.cs336.masked_mean",
         "toyllm.rl.PRESET_PEERS": "toyllm.peers.PRESET_PEERS"}


@pytest.mark.parametrize("old, new", list(MOVED.items()))
def test_moved_names_live_at_the_new_place_and_the_old_place_says_where(old, new):
    import toyllm.peers  # noqa: F401
    module, name = new.rsplit(".", 1)
    assert getattr(importlib.import_module(module), name) is not None
    old_module, old_name = old.rsplit(".", 1)
    with pytest.raises((ImportError, AttributeError), match="toyllm.peers"):
        getattr(importlib.import_module(old_module), old_name)
    from paths import ROOT
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`{old_module}`" in readme or f"`{old_module}." in readme or f"`{old}`" in readme, "README 的搬家表里没有它"
