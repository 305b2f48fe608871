"""
确定性与鲁棒性：同一个种子 → 逐位相同的结果（换一个进程、换 PYTHONHASHSEED 也一样）；
Ctrl+C 不丢已经训练的东西；极端但合法的设置不崩溃、不出 NaN；超出范围的步数被清楚地拒绝。
"""

import hashlib
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toyllm import (MAX_STEPS, ToyLLM, TrainableLLM, apply_grads, evaluate, make_problem, make_problem_set, sft)
import toyllm.peers  # noqa: F401  登记 verl / TRL 的预设：每个进程都核对同样的 18 个预设
from toyllm import rl
from tools.checkpoint import load_history, load_model, save_model
from toyllm.exact import exact_pass_at_1
from toyllm.policy import prob_table
from toyllm.sampler import sample_rollouts

from paths import ROOT

HERE = Path(__file__).resolve().parent


# =============================================================================
# 指纹：把一次完整计算的每一部分变成一个 sha256
# =============================================================================
def _digest(obj):
    return hashlib.sha256(repr(obj).encode("utf-8")).hexdigest()[:16]


def _floats(xs):
    return [float(x).hex() for x in xs]             # float.hex：逐位精确的写法


def _arrays(obj):
    return {f: hashlib.sha256(np.ascontiguousarray(getattr(obj, f)).tobytes()).hexdigest()[:16]
            for f in obj.__dataclass_fields__ if isinstance(getattr(obj, f), np.ndarray)}


def fingerprints():
    """出题、采样（逐个与向量化）、SFT、评估、路径 pass@1、每个 RL 预设的训练记录和参数。"""
    out = {}
    problems = make_problem_set(random.Random(0), 120, 1, MAX_STEPS)
    out["problems"] = _digest(problems)
    rng = random.Random(1)
    samples = {}
    for model in (ToyLLM(1e9), ToyLLM(1e9, cot=False), TrainableLLM(3e8, {("mul", 2.2): [1.0, -0.5, 0.25]})):
        for t in (1.0, 0.7, 0.0):
            samples[f"{model.name}@{t}"] = [model.generate(p, rng, t) for p in problems[:40]]
    out["generate"] = _digest(samples)
    data = [(p, s) for p, s in zip(problems[:40], samples["1B@1.0"]) if s.correct]
    tuned = sft(TrainableLLM(1e9), data, epochs=5, lr=2.0)
    out["sft"] = _digest(_floats(tuned.params.ravel()))
    out["evaluate"] = _digest({k: float(v).hex() for k, v in
                               evaluate(tuned, problems[:30], random.Random(2), n=4, ks=(1, 2, 4)).items()})
    out["exact"] = _digest(_floats(exact_pass_at_1(tuned, problems, per_problem=True)))
    out["rollouts"] = _digest(_arrays(sample_rollouts(tuned, problems[:40], 8, np.random.default_rng(3))))
    train_set, heldout = rl.default_problems(seed=5, n_train=48, n_heldout=40)
    configs = {name: rl.preset(name, iterations=4, batch_problems=8, group_size=4, seed=7) for name in rl.PRESETS}
    configs["process+entropy"] = rl.preset("grpo", iterations=4, batch_problems=8, group_size=4, reward="process",
                                           entropy_coef=0.01, beta=0.02, kl_estimator="k2")
    for name, cfg in configs.items():
        model = TrainableLLM(1e9)
        hist = rl.train(model, cfg, train_set, heldout)
        out[f"rl:{name}"] = _digest([(c, repr(v)) for c, v in hist.items()] + [repr(sorted(hist.meta.items()))]
                                    + _floats(model.params.ravel()))
    return out


def _run_fingerprints(hashseed):
    code = ("import json, sys; sys.path[:0] = [%r, %r]; import test_determinism as t; "
            "print(json.dumps(t.fingerprints()))" % (str(HERE), str(ROOT / "tests")))
    env = {**os.environ, "PYTHONHASHSEED": str(hashseed)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_same_seed_same_results_across_processes_and_hash_seeds():
    a = _run_fingerprints(0)
    b = _run_fingerprints(4242)
    here = fingerprints()                             # 第三个 PYTHONHASHSEED：pytest 进程自己的
    assert set(a) == set(here) and len(a) == 6 + len(rl.PRESETS) + 1
    diff = [k for k in a if not (a[k] == b[k] == here[k])]
    assert diff == [], f"这些部分在不同进程里结果不同：{diff}"


def test_fingerprints_notice_a_different_seed():
    """指纹确实依赖于种子（否则上面的测试什么也证明不了）。"""
    p1 = make_problem_set(random.Random(0), 120, 1, MAX_STEPS)
    p2 = make_problem_set(random.Random(1), 120, 1, MAX_STEPS)
    assert _digest(p1) != _digest(p2)
    t, h = rl.default_problems(seed=5, n_train=48, n_heldout=40)
    h1 = rl.train(TrainableLLM(1e9), rl.preset("grpo", iterations=2, batch_problems=8, group_size=4, seed=7), t, h)
    h2 = rl.train(TrainableLLM(1e9), rl.preset("grpo", iterations=2, batch_problems=8, group_size=4, seed=8), t, h)
    assert h1["reward"] != h2["reward"] or h1["loss"] != h2["loss"]


# =============================================================================
# Ctrl+C：训练停下，已经做的更新留在模型上，历史记录说明停在哪里
# =============================================================================
@pytest.fixture(scope="module")
def small_problems():
    return rl.default_problems(seed=1, n_train=40, n_heldout=30)


def test_keyboard_interrupt_between_iterations_keeps_everything(small_problems, tmp_path):
    cfg = rl.preset("grpo", iterations=10, batch_problems=8, group_size=4, seed=3)

    def stop_after_3(hist, model):
        if hist.n_rows == 3:
            raise KeyboardInterrupt

    model = TrainableLLM(1e9)
    hist = rl.train(model, cfg, *small_problems, callback=stop_after_3)     # 不把异常抛出去
    assert hist.interrupted and hist.meta["interrupted"] and hist.n_rows == 3
    assert "中断" in hist.message and "3 / 10" in hist.message
    # 和"本来就只训练 3 次"逐位相同：中断没有丢掉、也没有多做任何东西
    ref = TrainableLLM(1e9)
    ref_hist = rl.train(ref, cfg.replace(iterations=3), *small_problems)
    assert model.params.tobytes() == ref.params.tobytes()
    assert hist.to_dict() == ref_hist.to_dict() and not ref_hist.interrupted
    assert hist.meta["final_pass1_exact"] == exact_pass_at_1(model, small_problems[1])
    # 中断以后可以直接保存，读回来一样
    path = tmp_path / "interrupted.safetensors"
    save_model(model, path, history=hist)
    assert load_model(path).params.tobytes() == model.params.tobytes()
    assert load_history(path)["history"] == hist.to_dict()
    assert load_history(path)["metadata"]["interrupted"] is True


def test_keyboard_interrupt_inside_an_update_keeps_partial_updates(small_problems):
    """μ = 4 时在第 2 次迭代的第 3 次更新里按 Ctrl+C：前两次更新保留在模型上，记录里只有第 1 次迭代，并说明。"""
    cfg = rl.preset("ppo", iterations=5, batch_problems=8, group_size=4, seed=3)
    calls = {"n": 0, "stop_at": None}

    def surrogate(rho, adv, el, eh):
        calls["n"] += 1
        if calls["stop_at"] is not None and calls["n"] > calls["stop_at"]:
            raise KeyboardInterrupt
        return rl.clipped_surrogate(rho, adv, el, eh)

    snapshots = []

    def after_iteration(hist, model):
        snapshots.append(model.params.copy())
        if hist.n_rows == 1:                       # 第 1 次迭代调用了 n 次 = μ 次更新 × 每次更新的调用次数
            per_update = calls["n"] // cfg.mu
            assert per_update * cfg.mu == calls["n"]
            calls["stop_at"] = calls["n"] + 2 * per_update

    model = TrainableLLM(1e9)
    hist = rl.train(model, cfg, *small_problems, surrogate_fn=surrogate, callback=after_iteration)
    assert hist.interrupted and hist.n_rows == 1 and len(snapshots) == 1
    assert "做了 2 次更新" in hist.message
    assert not np.array_equal(model.params, snapshots[0])     # 第 2 次迭代的两次更新还在模型上
    assert np.all(np.isfinite(model.params))


# =============================================================================
# 极端但合法的设置：不崩溃、不出 NaN
# =============================================================================
def assert_finite_history(hist):
    bad = {c: v for c, v in hist.items() if not all(isinstance(x, (int, np.integer)) or math.isfinite(x) for x in v)}
    assert bad == {}, f"history 里有 NaN / 无穷：{bad}"


@pytest.fixture(scope="module")
def problems():
    return make_problem_set(random.Random(0), 30, 1, MAX_STEPS)


@pytest.mark.parametrize("size", [1e3, 1e15])
def test_extreme_sizes(size, problems):
    for model in (ToyLLM(size), ToyLLM(size, cot=False), TrainableLLM(size)):
        t = prob_table(model, step_index=MAX_STEPS - 1)
        assert np.all(np.isfinite(t)) and np.allclose(t.sum(axis=1), 1.0)
        p = exact_pass_at_1(model, problems)
        assert 0.0 <= p <= 1.0
        rng = random.Random(0)
        assert all(len(model.generate(q, rng).values) == len(q.steps) for q in problems)
        r = sample_rollouts(model, problems, 4, np.random.default_rng(0))
        assert np.all(np.isfinite(r.probs)) and np.all(np.isfinite(r.logp))
    small, mid, huge = (exact_pass_at_1(ToyLLM(s), problems) for s in (1e3, 1e9, 1e15))
    assert small < 0.1 < mid < 0.99 < huge                    # 规模的两端确实走到了头


@pytest.mark.parametrize("temperature", [1e-3, 100.0])
def test_extreme_temperatures(temperature, problems):
    model = TrainableLLM(1e9, {("mul", 2.2): [3.0, 0.0, -3.0]})
    t = prob_table(model, temperature)
    assert np.all(np.isfinite(t)) and np.allclose(t.sum(axis=1), 1.0)
    if temperature < 1:
        assert np.allclose(t, prob_table(model, 0.0))         # 接近贪心
    else:
        assert np.allclose(t, 1 / 3, atol=0.02)               # 接近均匀
    assert 0.0 <= exact_pass_at_1(model, problems, temperature) <= 1.0
    rng = random.Random(0)
    for q in problems:
        s = model.generate(q, rng, temperature)
        assert len(s.values) == len(q.steps)
    r = sample_rollouts(model, problems, 4, np.random.default_rng(0), temperature)
    assert np.all(np.isfinite(r.probs)) and np.all(np.isfinite(r.logp[r.mask]))


def test_sft_and_apply_grads_with_lr_100(problems):
    rng = random.Random(0)
    base = ToyLLM(1e9)
    data = [(q, base.generate(q, rng)) for q in problems]
    model = sft(TrainableLLM(1e9), data, epochs=20, lr=100.0)
    assert np.all(np.isfinite(model.params))
    assert np.all(np.isfinite(prob_table(model)))
    apply_grads(model, {("add", 0.0): [1.0, -1.0, 0.5]}, 100.0)
    assert np.all(np.isfinite(model.params))
    assert 0.0 <= exact_pass_at_1(model, problems) <= 1.0


RL_EXTREMES = [("size", 1e3), ("size", 1e15), ("temperature", 1e-3), ("temperature", 100.0), ("lr", 100.0)]
# rl.py 现在的已知问题（写给维护者；修好以后 strict=True 会让这里报 XPASS，提醒删掉标记）：
KNOWN_RL_NAN = {}     # 曾经：PPO 在 lr = 100 时 k3 溢出成 NaN；现在训练损失里的 k3 像 verl 一样夹在 ≤ 10


def _rl_cases():
    for name in rl.PRESETS:
        for option, value in RL_EXTREMES:
            marks = ()
            if (name, option, value) in KNOWN_RL_NAN:
                marks = (pytest.mark.xfail(strict=True, reason=KNOWN_RL_NAN[(name, option, value)]),
                         pytest.mark.filterwarnings("ignore::RuntimeWarning"))
            yield pytest.param(name, option, value, marks=marks, id=f"{name}-{option}={value:g}")


@pytest.mark.parametrize("name, option, value", list(_rl_cases()))
def test_rl_extreme_settings(name, option, value):
    train_set, heldout = rl.default_problems(seed=2, n_train=24, n_heldout=20)
    size = value if option == "size" else 1e9
    overrides = {option: value} if option != "size" else {}
    model = TrainableLLM(size)
    hist = rl.train(model, rl.preset(name, iterations=6, batch_problems=8, group_size=4, seed=0, **overrides),
                    train_set, heldout)
    assert hist.n_rows == 6 and not hist.interrupted
    assert np.all(np.isfinite(model.params))
    assert_finite_history(hist)
    assert math.isfinite(hist.meta["final_pass1_exact"])


def test_ten_thousand_step_problems_are_rejected():
    rng = random.Random(0)
    with pytest.raises(ValueError) as info:
        make_problem(rng, 10_000)
    assert "n_steps" in str(info.value) and str(MAX_STEPS) in str(info.value) and "10000" in str(info.value)
    with pytest.raises(ValueError) as info:
        make_problem_set(rng, 5, 1, 10_000)
    assert "max_steps" in str(info.value) and str(MAX_STEPS) in str(info.value)
    assert len(make_problem(rng, MAX_STEPS).steps) == MAX_STEPS          # 上限本身是合法的
