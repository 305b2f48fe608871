"""
公开边界：未知的情境、错的类型、NaN、空输入 —— 每个公开函数都报中文的 TypeError / ValueError
（说出参数名），不会冒出 AttributeError、numpy 的英文报错，或悄悄算出 NaN。
"""

import importlib
import inspect
import math
import random
import re

import numpy as np
import pytest

from toyllm import TrainableLLM, make_problem_set
from toyllm.history import History
from toyllm.evaluation import draw_samples
from toyllm.exact import correct_paths
from toyllm.rl import RLConfig
from toyllm.sampler import sample_rollouts
from toyllm.toy_llm import UnknownContextError

MODULES = ["toy_llm", "trainable", "policy", "sampler", "exact", "estimators", "evaluation", "experiments", "scaling",
           "history", "problems", "imitation",
           "rl.config", "rl.presets", "rl.losses", "rl.groups", "rl.toy"]
CJK = re.compile(r"[\u4e00-\u9fff]")
BAD = {"None": None, "str": "abc", "nan": math.nan, "empty_list": [], "empty_array": np.array([]), "negative": -1,
       "dict": {"x": 1}, "unknown_context": ("zz", 9.9)}
PROBLEMS = make_problem_set(random.Random(0), 4, 2, 3)
ROLLOUTS = sample_rollouts(TrainableLLM(1e9), PROBLEMS, 2, np.random.default_rng(0))
PATHS = correct_paths(PROBLEMS)
DATA = [(p, TrainableLLM(1e9).generate(p, random.Random(0))) for p in PROBLEMS]
SAMPLES = draw_samples(TrainableLLM(1e9), PROBLEMS, 2, np.random.default_rng(0))
GOOD = {"model": lambda: TrainableLLM(1e9), "problems": lambda: PROBLEMS, "train_problems": lambda: PROBLEMS,
        "heldout_problems": lambda: PROBLEMS, "n": lambda: 2, "rng": lambda: np.random.default_rng(0),
        "size": lambda: 1e9, "key": lambda: ("mul", 1.5), "group_size": lambda: 2, "rewards": lambda: np.array([1., 0.]),
        "ratio": lambda: np.ones(2), "adv": lambda: np.ones(2), "logp": lambda: np.zeros(2),
        "logp_ref": lambda: np.zeros(2), "mask": lambda: np.ones((2, 2), bool), "per_step": lambda: np.ones((2, 2)),
        "probs": lambda: np.full(3, 1 / 3), "logprobs": lambda: np.log(np.full(3, 1 / 3)),
        "logits": lambda: np.zeros((12, 3)), "columns": lambda: ["a"], "k": lambda: 1, "a": lambda: "grpo",
        "b": lambda: "dapo", "grads": dict, "action": lambda: 0, "weight": lambda: 1.0, "lr": lambda: 1.0,
        "data": list, "op": lambda: "mul", "a": lambda: 47, "problem": lambda: PROBLEMS[0],
        "sample": lambda: TrainableLLM(1e9).generate(PROBLEMS[0], random.Random(0)), "counts": lambda: np.zeros((12, 3)),
        "rollouts": lambda: ROLLOUTS, "advantages": lambda: np.zeros(len(ROLLOUTS)), "paths": lambda: PATHS,
        "values": lambda: [1.0, 0.0], "value": lambda: 0.5, "stderr": lambda: 0.1, "correct": lambda: np.ones((2, 2)),
        "answers": lambda: [1, 2], "truth": lambda: 1, "scores": lambda: [0.1, 0.2], "samples": lambda: SAMPLES,
        "parts": lambda: [ROLLOUTS], "batch": lambda: PROBLEMS, "cfg": lambda: RLConfig(batch_problems=2, group_size=2),
        "models": lambda: [TrainableLLM(1e9)], "row": lambda: {}, "config": lambda: None, "cot": lambda: True,
        "judged": lambda: np.ones((2, 2)), "params": lambda: np.zeros((12, 3)),
        "base": lambda: np.zeros((12, 3)),
        "m": lambda: np.array([0, 2]), "C": lambda: [1e3, 1e4, 1e5, 1e6], "R": lambda: [0.2, 0.4, 0.7, 0.8],
        "R0": lambda: 0.1, "A": lambda: 0.9, "B": lambda: 1.0, "C_mid": lambda: 1e4, "target": lambda: 0.5,
        "history": lambda: {"iteration": [1, 2], "samples": [8, 16], "pass1_exact": [0.4, 0.6]}}
OVERRIDES = {"context_key": {"a": lambda: 47, "b": lambda: 12}, "check_problems": {"name": lambda: "problems"},
             "log_likelihood": {"data": lambda: DATA}, "sft": {"data": lambda: DATA},
             "evaluate": {"rng": lambda: random.Random(0)}, "entropy_of": {"rng": lambda: random.Random(0)},
             "best_of_k_from_verdicts": {"k": lambda: 1}, "sample_subset": {"rows": lambda: np.array([0, 2])},
             "diff_presets": {"a": lambda: "grpo", "b": lambda: "dapo"},
             "gspo_surrogate": {"log_ratio": lambda: np.zeros((2, 2)), "adv": lambda: np.ones(2),
                                "mask": lambda: np.ones((2, 2), bool)}}


def _public_functions():
    for name in MODULES:
        module = importlib.import_module(f"toyllm.{name}")
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for attr in names:
            obj = getattr(module, attr)
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                params = [p.name for p in inspect.signature(obj).parameters.values()
                          if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
                for i, p in enumerate(params):
                    yield pytest.param(obj, params, i, id=f"{name}.{attr}({p})")


@pytest.mark.parametrize("func, params, i", list(_public_functions()))
def test_bad_argument_gives_a_chinese_error(func, params, i):
    for label, bad in BAD.items():
        good = {**GOOD, **OVERRIDES.get(func.__name__, {})}
        args = [bad if j == i else good.get(p, lambda: 1)() for j, p in enumerate(params)]
        try:
            func(*args)
        except (TypeError, ValueError) as e:          # UnknownContextError 是 KeyError 也是 ValueError
            assert CJK.search(str(e)), f"{func.__name__}({params[i]}={label}) 的报错不是中文：{e!r}"
            assert params[i] in str(e), f"{func.__name__}({params[i]}={label}) 的报错没有说出参数名：{e}"
        except Exception as e:                        # noqa: BLE001 —— 别的异常就是没在边界上检查
            pytest.fail(f"{func.__name__}({params[i]}={label}) 抛出了 {type(e).__name__}: {e}")


def test_unknown_context_names_the_parameter_the_value_and_the_contexts():
    model = TrainableLLM(1e9)
    for call in (lambda: model.p_correct(("mul", 9.9)), lambda: model.context_logits("mul"),
                 lambda: model.delta[("div", 1.0)]):
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, KeyError) and isinstance(info.value, UnknownContextError)
        msg = str(info.value)
        assert ("key" in msg or "delta 的键" in msg) and "('mul', 1.5)" in msg and "可用的情境" in msg
    assert "('mul', 9.9)" in _message(lambda: model.p_correct(("mul", 9.9)))
    assert model.delta.get(("mul", 9.9)) is None and ("mul", 9.9) not in model.delta     # 字典语义不变


def test_unknown_history_column_is_a_chinese_key_error():
    hist = History(["iteration", "loss"])
    with pytest.raises(KeyError) as info:
        hist["los"]
    assert "los" in str(info.value) and "iteration、loss" in str(info.value)
    assert hist.get("los") is None


def _message(call):
    try:
        call()
    except Exception as e:                            # noqa: BLE001
        return str(e)
    return ""
