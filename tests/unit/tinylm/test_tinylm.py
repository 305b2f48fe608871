"""
小 transformer（toyllm.tinylm）：每一层的反向对有限差分、确定性、RL 提高留出题准确率、RL 走的是 rl.losses、坏输入。
"""

import random

import numpy as np
import pytest

import toyllm.peers  # noqa: F401  登记 verl / TRL 的损失和选项：这里也核对它们在网络上起作用
from toyllm import tinylm as tl
from toyllm.arithmetic import Problem, Step, make_problem_set
from toyllm.rl import losses
from toyllm.saving import load_history
from toyllm.toy_llm import ToyLLM, softmax
from toyllm.trainable import TrainableLLM

from paths import ROOT


def _num_grad(f, x, h=1e-6):
    """中心差分 ∂f/∂x（x 原地扰动后复原）。"""
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + h
        fp = f()
        x[i] = old - h
        fm = f()
        x[i] = old
        g[i] = (fp - fm) / (2 * h)
    return g


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_layer_norm_backward(rng):
    x, g, b = rng.normal(size=(2, 3, 5)), rng.normal(size=5), rng.normal(size=5)
    dy = rng.normal(size=(2, 3, 5))
    loss = lambda: float((tl.layer_norm(x, g, b)[0] * dy).sum())  # noqa: E731
    dx, dg, db = tl.layer_norm_backward(dy, tl.layer_norm(x, g, b)[1])
    for ana, arr in ((dx, x), (dg, g), (db, b)):
        assert _rel(ana, _num_grad(loss, arr)) < 1e-7


def test_attention_backward(rng):
    x, wqkv, wo = rng.normal(size=(2, 4, 6)), rng.normal(size=(6, 18)) * 0.5, rng.normal(size=(6, 6)) * 0.5
    dy = rng.normal(size=(2, 4, 6))
    loss = lambda: float((tl.attention(x, wqkv, wo, 2)[0] * dy).sum())  # noqa: E731
    dx, dwqkv, dwo = tl.attention_backward(dy, tl.attention(x, wqkv, wo, 2)[1])
    for ana, arr in ((dx, x), (dwqkv, wqkv), (dwo, wo)):
        assert _rel(ana, _num_grad(loss, arr)) < 1e-7


def test_mlp_backward(rng):
    x, w1, b1, w2, b2 = (rng.normal(size=s) for s in ((2, 3, 4), (4, 8), (8,), (8, 4), (4,)))
    dy = rng.normal(size=(2, 3, 4))
    loss = lambda: float((tl.mlp(x, w1, b1, w2, b2)[0] * dy).sum())  # noqa: E731
    grads = tl.mlp_backward(dy, tl.mlp(x, w1, b1, w2, b2)[1])
    for ana, arr in zip(grads, (x, w1, b1, w2, b2)):
        assert _rel(ana, _num_grad(loss, arr)) < 1e-6


def test_whole_network_backward_including_embedding_and_head():
    """整个网络（嵌入、两层、最后的 LN、输出头）：每个参数的梯度对中心差分，float64。"""
    model = tl.TinyLM(d=8, heads=2, layers=2, context=6, seed=1, dtype=np.float64)
    for v in model.params.values():                     # 初始化太小时差分看不出注意力的梯度：放大一些
        v *= 10 if v.ndim == 2 else 1
    x, y, m = tl.batch_tokens(model, ["1+2=", "11+"], ["3$", "2=1"])
    s = np.random.default_rng(2).normal(size=m.shape) * m

    def loss():
        return float((tl.token_logprobs(model, x, y)[0] * s).sum())

    logp, lp, cache = tl.token_logprobs(model, x, y)
    grads = tl.backward(model.params, tl.dlogits_from_dlogp(s, lp, y), cache)
    assert set(grads) == set(model.params)
    for name, p in model.params.items():
        assert _rel(grads[name], _num_grad(loss, p)) < 1e-6, name


def test_kv_cache_matches_full_forward():
    model = tl.TinyLM(seed=3)
    prompts = ["12+35=", "7+8="]
    outs = tl.greedy(model, prompts)
    x, y, m = tl.batch_tokens(model, prompts, outs)
    z = model.logits(x)
    full = [tl.decode(z[i, len(p) - 1:len(p) - 1 + len(o)].argmax(-1)) for i, (p, o) in enumerate(zip(prompts, outs))]
    assert full == outs


def test_text_of_toy_problems():
    p = Problem(37, (Step("mul", 12), Step("add", 458)), 902)
    e = tl.problem_example(p)
    assert e == tl.Example("7300*2100+8540=", "4440;2090$", 902, True)
    assert tl.problem_example(p, reversed_digits=False) == tl.Example("37*12+458=", "444;902$", 902)
    assert tl.answer_of(e.target, True) == 902 and e.is_correct("4440;2090$") and not e.is_correct("4440;2091$")
    assert tl.step_values("4440;2x90$", True) == [444, None]
    assert tl.answer_of("444;902$") == 902 and tl.answer_of("444;9") is None
    assert [tl.write_number(n) for n in (0, 7, 37, 9999)] == ["0000", "7000", "7300", "9999"]
    for q in make_problem_set(random.Random(0), 50, 1, 3):
        for rev in (True, False):
            e = tl.problem_example(q, reversed_digits=rev)
            tl.encode(e.prompt + e.target)
            assert e.is_correct(e.target) and tl.step_values(e.target, rev) == list(q.correct_values())
    with pytest.raises(ValueError, match="n 必须 <= 9999，收到 10000"):
        tl.write_number(10000)


def test_step_errors_sorts_each_wrong_step_into_the_toys_procedures(monkeypatch):
    """一步写错时按玩具的三种做法归类：bug（忘记进位）、粗心（某一位 ±1）、别的；一步错了，后面的步不再数。"""
    problems = [Problem(47, (Step("add", 38), Step("mul", 3)), 255),      # 47 + 38 = 85，85 × 3 = 255
                Problem(47, (Step("add", 38),), 85), Problem(47, (Step("add", 38),), 85),
                Problem(52, (Step("sub", 17),), 35)]
    written = [tl.write_number(75) + ";" + tl.write_number(225) + "$",   # 忘记进位：bug；第二步不数
               tl.write_number(95) + "$",                                  # 十位多 1：粗心
               tl.write_number(85) + "$",                                  # 对
               "12x$"]                                                     # 不是数：别的
    monkeypatch.setattr(tl.analysis, "greedy", lambda model, prompts: written[:len(prompts)])
    counts = tl.step_errors(tl.TinyLM(d=8, heads=2, layers=1, context=25), problems)
    add1 = ("add", 0.7)
    assert counts == {add1: {"steps": 3, "correct": 1, "bug": 1, "careless": 1, "other": 0},
                      ("sub", 0.8): {"steps": 1, "correct": 0, "bug": 0, "careless": 0, "other": 1}}
    table = tl.step_error_table(counts, toy=ToyLLM(1e9))
    assert table.headers[:3] == ["情境", "步数", "做对"] and table.cells[0][:3] == ["加法，1 次进位", "3", "0.333"]
    assert float(table.cells[0][6]) == pytest.approx(softmax(ToyLLM(1e9).context_logits(add1))[0], abs=1e-3)
    with pytest.raises(ValueError, match="problems 不能为空"):
        tl.step_errors(tl.TinyLM(d=8, heads=2, layers=1, context=25), [])


def _trained(seed=0, steps=450, **size):
    model = tl.TinyLM(seed=seed, **size)
    train = tl.addition_examples(2000, seed=seed)
    hist = tl.sft(model, train, steps=steps, batch_size=64, lr=3e-3, seed=seed)
    return model, train, hist


@pytest.fixture(scope="module")
def sft_model():
    """和 notebook 08 一样 SFT 450 步（种子 0）：准确率已经升起来，RL 还有提高的余地。"""
    return _trained(0)


def test_determinism_same_seed_same_weights():
    small = {"d": 16, "heads": 2, "layers": 1}
    model, train, hist = _trained(0, 20, **small)
    again, _, hist2 = _trained(0, 20, **small)
    assert list(hist["loss"]) == list(hist2["loss"])
    assert all(np.array_equal(model.params[k], again.params[k]) for k in model.params)
    cfg = tl.tiny_config("grpo", iterations=3, batch_problems=4, group_size=4, mu=2, beta=0.04)
    a, b = model.copy(), again.copy()
    ha, hb = tl.rl_train(a, train, cfg), tl.rl_train(b, train, cfg)
    assert ha.to_dict() == hb.to_dict()
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    assert all(v.dtype == np.float32 for v in a.params.values())


def test_rl_raises_heldout_accuracy(sft_model):
    model, train, _ = sft_model
    test = tl.addition_examples(200, seed=100, exclude=train)
    model = model.copy()

    def acc():
        return tl.accuracy(model, test), tl.accuracy(model, test, 1.0, np.random.default_rng(0))

    before = acc()
    tl.rl_train(model, train, tl.tiny_config("grpo", iterations=40, seed=0))
    after = acc()
    assert after[0] > before[0] and after[1] > before[1] + 0.03, (before, after)    # 贪心、采样都升


@pytest.mark.parametrize("name", ["clipped_surrogate", "group_advantages", "aggregation_weights"])
def test_rl_goes_through_the_taught_functions(sft_model, monkeypatch, name):
    """把 rl.losses 里的函数换成"记下调用再照常计算"的版本：网络的 RL 训练调用了它；换成错的公式，训练结果就变。"""
    model, train, _ = sft_model
    real = getattr(losses, name)
    calls = []

    def spy(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(losses, name, spy)
    cfg = tl.tiny_config("dapo", iterations=2, batch_problems=4, group_size=4, lr=1e-3)
    a = model.copy()
    tl.rl_train(a, train, cfg)
    assert calls
    if name == "clipped_surrogate":          # 把 ∂l/∂log π 变成 0：网络就不会再被更新
        def frozen(*args, **kwargs):
            out = real(*args, **kwargs)
            out.dloss_dlogp = np.zeros_like(out.dloss_dlogp)
            return out
        monkeypatch.setattr(losses, name, frozen)
        b = model.copy()
        tl.rl_train(b, train, cfg.replace(beta=0.0))
        assert all(np.array_equal(b.params[k], model.params[k]) for k in b.params)


def test_presets_run_at_token_level(sft_model):
    model, train, _ = sft_model
    for name in ("grpo", "dr_grpo", "dapo", "ppo"):
        hist = tl.rl_train(model.copy(), train, tl.tiny_config(name, iterations=2, batch_problems=4, group_size=4))
        assert hist.n_rows == 2 and np.isfinite(hist["loss"]).all()
    ppo = tl.rl_train(model.copy(), train, tl.tiny_config("ppo", iterations=3, batch_problems=8, lr=3e-3))
    assert max(ppo["kl_est"]) >= 0


def test_save_load_roundtrip(tmp_path, sft_model):
    model, _, hist = sft_model
    path = tmp_path / "tiny.safetensors"
    tl.save_weights(model, path, history=hist)
    back = tl.load_weights(path)
    assert back.config == model.config
    assert all(np.array_equal(back.params[k], model.params[k]) and back.params[k].dtype == np.float32
               for k in model.params)
    nan_as_none = {k: [None if isinstance(v, float) and np.isnan(v) else v for v in col] for k, col in hist.to_dict().items()}
    assert load_history(path)["history"] == nan_as_none                      # NaN 在 JSON 里存成 null
    from tools.checkpoint import save_model
    save_model(TrainableLLM(1e9), tmp_path / "toy.safetensors")
    with pytest.raises(ValueError, match="toy.safetensors.*format"):          # 玩具的文件不是网络的
        tl.load_weights(tmp_path / "toy.safetensors")


def test_bad_inputs():
    with pytest.raises(ValueError, match="d 必须能被 heads 整除.*d = 10、heads = 4"):
        tl.TinyLM(d=10, heads=4)
    with pytest.raises(ValueError, match="'x'.*不在字表"):
        tl.encode("12x3")
    model = tl.TinyLM(d=8, heads=2, layers=1, context=8)
    with pytest.raises(ValueError, match="examples 不能为空.*Example"):
        tl.sft(model, [], steps=1)
    with pytest.raises(TypeError, match="examples 必须是 Example 的列表.*'12\\+3='"):
        tl.sft(model, "12+3=", steps=1)
    with pytest.raises(ValueError, match="放不进上下文 context = 8"):
        tl.sft(model, [tl.problem_example(Problem(37, (Step("mul", 12), Step("add", 458)), 902))], steps=1)
    with pytest.raises(ValueError, match="不在字表"):
        tl.generate(model, ["1 + 2 ="], 0)
    with pytest.raises(ValueError, match="temperature"):
        tl.generate(model, ["1+2="], -1)
    with pytest.raises(ValueError, match="optimizer"):
        tl.rl_train(model, tl.addition_examples(4, digits=1), tl.tiny_config("grpo").replace(optimizer="sgd"))


def test_progress_text_and_history_columns(capsys):
    """进度是 stdout 上的一行字（notebook 保存以后照样能读），只写步数：同样的训练每次写出同样的字。"""
    model = tl.TinyLM(d=8, heads=2, layers=1, context=8)
    data = tl.addition_examples(20, digits=1)
    hist = tl.sft(model, data, steps=2, progress=True, heldout=data[:4], eval_every=1)
    assert list(hist) == ["iteration", "loss", "greedy"] and hist.n_rows == 2 and np.isfinite(hist["greedy"]).all()
    hist = tl.rl_train(model, data, tl.tiny_config("grpo", iterations=2, batch_problems=2, group_size=2), progress=True)
    assert list(hist) == tl.RL_COLUMNS
    tl.sft(model, data, steps=30, callback=lambda it, m: it == 7, progress=True)
    out = capsys.readouterr()
    assert out.out == "SFT（2 步）： 1 2\nRL（2 次迭代）： 1 2\nSFT（30 步）： 3 6（停在第 7 步）\n" and out.err == ""


def test_rl_gradients_stay_float32():
    """losses 的函数返回 float64：先转成 float32 再和网络的数组相乘，梯度才不会悄悄变成 float64（慢 3 倍）。"""
    model = tl.TinyLM(seed=0)
    data = tl.addition_examples(16)
    prompts = [e.prompt for e in data]
    x, y, m = tl.batch_tokens(model, prompts, tl.generate(model, prompts, 1.0, np.random.default_rng(0)))
    old = tl.token_logprobs(model, x, y)[0]
    adv = np.random.default_rng(1).normal(size=len(data)).astype(np.float32)
    grads, info = tl.rl_loss_grad(model, x, y, m, adv, old, old, tl.tiny_config("ppo", entropy_coef=0.01))
    assert all(g.dtype == np.float32 for g in grads.values())
    assert all(type(v) is float for v in info.values())


def _notebook08_text():
    """notebook 08 提交的输出（strict nbval 保证它们就是代码现在算出来的）：所有文字输出连在一起。"""
    import json

    nb = json.loads((ROOT / "notebooks" / "08_tiny_transformer.ipynb")
                    .read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            parts.append("".join(text))
    return "\n".join(parts)


def test_lecture_claims_about_the_toy_problems_match_notebook_08():
    """第 6 讲 §10.3 对玩具多步题说的话，和 notebook 08 算出来的数一致。"""
    import re

    text = _notebook08_text()
    bug, careless, other = map(int, re.search(r"像 bug (\d+)%，像粗心 (\d+)%，别的 (\d+)%", text).groups())
    assert bug > 0 and careless > 0 and other > bug + careless      # 一部分是玩具的两种样子，更多的是别的
    net, toy = re.search(r"网络：(.*)\n\s*玩具：(.*)", text).groups()
    assert net != toy                                                 # 难度顺序不一样
    # 玩具最容易的乘一位数，在网络上是最难的两个之一（§10.3、notebook 08 第 8 节）
    net_order, toy_order = net.split(" < "), toy.split(" < ")
    assert toy_order[-1] == "乘一位数" and "乘一位数" in net_order[:2]
    # 这一次训练前后的两个模型：每个情境的差都在评估的 3 个标准误以内；总的贪心准确率也是
    # （§10.3 "没有一个差超过评估的 3 个标准误"）
    assert re.search(r"各种判定的个数： \{'这个大小上分不出': 11\}", text)
    assert re.search(r"留出题（400 道）贪心准确率：[\d.]+ → [\d.]+，差 [-+][\d.]+ ± [\d.]+（评估的标准误）"
                     r"→ 两个模型的差：这个大小上分不出", text)
    rl_table = text[text.index("差 ± 评估的标准误"):]
    rows = {line.split()[0]: [float(x) for x in re.findall(r"= ([\d.]+)", line)]
            for line in rl_table.splitlines()[1:12]}
    assert max(rows["乘两位数"]) < 0.05                               # SFT 以后几乎不会，RL 以后也几乎不会


# ---- 每个预设在网络上都起作用（一个目标函数：toyllm.rl.objective）----
def _spy_calls(monkeypatch, module, names, calls):
    """把 module 里的这些函数换成记录调用（名字, 位置参数, 关键字参数）再转发的版本，记在 calls 里。"""
    for name in names:
        real = getattr(module, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls.append((_name, args, kwargs))
            return _real(*args, **kwargs)
        monkeypatch.setattr(module, name, spy)


def _arg(call, position, name):
    _, args, kwargs = call
    return kwargs[name] if name in kwargs else args[position] if len(args) > position else None


# 每个预设：它自己的那个函数被调用了，而且参数是预设给的
PRESET_REACHES = {
    "reinforce": lambda c: any(n == "group_advantages" and _arg((n, a, k), 2, "method") == "none" for n, a, k in c),
    "rloo": lambda c: any(n == "group_advantages" and _arg((n, a, k), 2, "method") == "rloo" for n, a, k in c),
    "grpo": lambda c: any(n == "group_advantages" and _arg((n, a, k), 2, "method") == "grpo" for n, a, k in c),
    "dr_grpo": lambda c: any(n == "aggregation_weights" and _arg((n, a, k), 1, "how") == "constant" for n, a, k in c),
    "ppo": lambda c: any(n == "kl_estimator" and _arg((n, a, k), 3, "clamp") is not None for n, a, k in c),
    "dapo": lambda c: any(n == "clipped_surrogate" and _arg((n, a, k), 3, "eps_high") == 0.28 for n, a, k in c),
    "ppo_critic": lambda c: any(n == "gae" for n, a, k in c) and any(n == "value_loss" for n, a, k in c),
    "ppo_dual_clip": lambda c: any(n == "clipped_surrogate" and k.get("clip_ratio_c") == 3.0 for n, a, k in c),
    "gspo": lambda c: any(n == "gspo_surrogate" for n, a, k in c),
    "cispo": lambda c: any(n == "cispo_surrogate" for n, a, k in c),
    "reinforce_pp": lambda c: any(n == "reinforce_pp_advantages" for n, a, k in c),
    "grpo_async": lambda c: any(n == "truncated_is_weights" for n, a, k in c),
    "reinforce_pp_no_baseline": lambda c: any(n == "reinforce_pp_no_baseline_advantages" for n, a, k in c),
    "sapo": lambda c: any(n == "sapo_surrogate" and _arg((n, a, k), 4, "tau_neg") == 1.05 for n, a, k in c),
    "gmpo": lambda c: any(n == "gmpo_surrogate" and _arg((n, a, k), 3, "eps_low") == 0.4 for n, a, k in c),
    "gpg": lambda c: any(n == "gpg_surrogate" for n, a, k in c) and any(n == "gpg_advantages" for n, a, k in c),
    "clip_cov": lambda c: any(n == "clip_cov_surrogate" and k.get("rng") is not None for n, a, k in c),
    "kl_cov": lambda c: any(n == "kl_cov_surrogate" and k.get("coef") == 0.1 for n, a, k in c),
}


def test_every_preset_reaches_its_own_function_on_the_network(sft_model, monkeypatch):
    """每个预设在网络上调用它自己的函数（GSPO → gspo_surrogate、异步 → truncated_is_weights ……），参数是预设给的。"""
    from toyllm.rl import PRESETS, critic
    assert set(PRESET_REACHES) == set(PRESETS)
    model, train, _ = sft_model
    for name, reached in PRESET_REACHES.items():
        with monkeypatch.context() as mp:
            calls = []
            _spy_calls(mp, losses, ["group_advantages", "aggregation_weights", "kl_estimator", "clipped_surrogate",
                                    "gspo_surrogate", "cispo_surrogate", "reinforce_pp_advantages",
                                    "truncated_is_weights"], calls)
            _spy_calls(mp, toyllm.peers.advantages, ["reinforce_pp_no_baseline_advantages", "gpg_advantages"], calls)
            _spy_calls(mp, toyllm.peers.losses, ["sapo_surrogate", "gmpo_surrogate", "gpg_surrogate", "clip_cov_surrogate",
                                                 "kl_cov_surrogate"], calls)
            _spy_calls(mp, critic, ["gae", "value_loss"], calls)
            tl.rl_train(model.copy(), train, tl.tiny_config(name, iterations=3, batch_problems=4, group_size=4))
        assert reached(calls), name


def test_switching_the_preset_changes_the_networks_update(sft_model):
    """同一个种子、同样的题：每个预设更新出来的权重都和 GRPO（μ 相同时）不同 —— 没有哪个选项被悄悄忽略。"""
    from toyllm.rl import PRESETS
    model, train, _ = sft_model
    small = {"iterations": 3, "batch_problems": 4, "group_size": 4, "lr": 1e-3}
    weights = {}
    for name in PRESETS:
        cfg = tl.tiny_config(name, **small)
        a = model.copy()
        tl.rl_train(a, train, cfg)
        twin = model.copy()                         # GRPO，μ 和这个预设相同
        tl.rl_train(twin, train, tl.tiny_config("grpo", mu=cfg.mu, **small))
        weights[name] = a.params
        if name != "grpo":
            assert not all(np.array_equal(a.params[k], twin.params[k]) for k in a.params), name


def test_network_refuses_options_that_cannot_apply():
    model = tl.TinyLM(d=16, heads=2, layers=1)
    train = tl.addition_examples(8)
    with pytest.raises(ValueError, match="config.reward.*'process'"):
        tl.rl_train(model, train, tl.tiny_config("grpo", reward="process"))
    with pytest.raises(ValueError, match="config.optimizer.*'sgd'"):
        tl.rl_train(model, train, tl.tiny_config("grpo", optimizer="sgd"))


def test_both_models_call_the_same_objective(sft_model, monkeypatch):
    """玩具的 rl.train 和网络的 rl_train 调用的是同一个函数对象 toyllm.rl.objective.rl_objective。"""
    from toyllm import TrainableLLM
    from toyllm.rl import default_problems, objective, preset, train as toy_train
    seen = []
    real = objective.rl_objective

    def spy(*args, **kwargs):
        seen.append(args[0].dtype)
        return real(*args, **kwargs)
    monkeypatch.setattr(objective, "rl_objective", spy)
    model, examples, _ = sft_model
    tl.rl_train(model.copy(), examples, tl.tiny_config("grpo", iterations=1, batch_problems=4, group_size=4))
    toy_set, held = default_problems(0)
    toy_train(TrainableLLM(1e9), preset("grpo", iterations=1), toy_set, held)
    assert np.dtype(np.float32) in seen and np.dtype(np.float64) in seen       # 网络（float32）和玩具（float64）都来过


def test_both_models_reach_the_objective_through_the_same_loop_function(sft_model, monkeypatch):
    """一个循环：玩具和网络都从 toyllm.rl.loop.policy_step 调用 rl_objective，而它在 loop.run 里被调用。"""
    import inspect
    from toyllm import TrainableLLM
    from toyllm.rl import default_problems, loop, objective, preset, train as toy_train
    callers = {}
    real = objective.rl_objective

    def spy(*args, **kwargs):
        frame = inspect.currentframe().f_back
        callers.setdefault(args[0].dtype, set()).add((frame.f_code, frame.f_back.f_code))
        return real(*args, **kwargs)
    monkeypatch.setattr(objective, "rl_objective", spy)
    model, examples, _ = sft_model
    tl.rl_train(model.copy(), examples, tl.tiny_config("ppo", iterations=1, batch_problems=4, group_size=4))
    toy_set, held = default_problems(0)
    toy_train(TrainableLLM(1e9), preset("ppo", iterations=1), toy_set, held)
    one = {(loop.policy_step.__code__, loop.run.__code__)}
    assert callers == {np.dtype(np.float32): one, np.dtype(np.float64): one}


def test_dynamic_sampling_refills_on_the_network(sft_model):
    """DAPO 的动态采样在网络上也补采（最多 max_draws 批），凑不满时按 on_short。"""
    model, train, _ = sft_model
    cfg = tl.tiny_config("dapo", iterations=2, batch_problems=4, group_size=4)
    hist = tl.rl_train(model.copy(), train, cfg)
    assert hist.meta["short_batches"] >= 0
    with pytest.raises(RuntimeError, match="on_short"):
        tl.rl_train(model.copy(), train[:4], cfg.replace(max_draws=1, on_short="raise", batch_problems=4,
                                                          group_size=2, temperature=1e-3))


# ---- 每个选项：在网络上起作用，或者报错说出它的名字（讲义 §10.3 的说法）----
_SMALL = {"iterations": 3, "batch_problems": 4, "group_size": 4, "lr": 1e-3, "mu": 2}
OPTION_CHANGES = {
    # 选项: (预设, 其余的改动, 换成的值)。条件选项（只对某个损失、某个优势……）放在用得到它的设置里。
    "iterations": ("grpo", {}, 2), "batch_problems": ("grpo", {}, 3), "group_size": ("grpo", {}, 3),
    "lr": ("grpo", {}, 3e-3), "advantage": ("grpo", {}, "rloo"), "scale_rewards": ("grpo", {}, "batch"),
    "std_eps": ("grpo", {}, 0.5), "loss_agg": ("grpo", {}, "token-mean"), "mu": ("grpo", {}, 3),
    "clip": ("grpo", {"eps_low": 1e-3, "eps_high": 1e-3}, False), "eps_low": ("grpo", {}, 1e-4),
    "eps_high": ("grpo", {}, 1e-4), "beta": ("grpo", {}, 0.5), "kl_estimator": ("grpo", {"beta": 0.5}, "k1"),
    "dynamic_sampling": ("grpo", {}, True), "max_draws": ("dapo", {"gen_batch_scale": 1}, 1),
    "gen_batch_scale": ("grpo", {}, 2), "entropy_coef": ("grpo", {}, 0.1), "temperature": ("grpo", {}, 0.7),
    "seed": ("grpo", {}, 1), "policy_loss": ("grpo", {}, "cispo"), "seq_eps_low": ("gspo", {}, 0.5),
    "seq_eps_high": ("gspo", {}, 0.5), "cispo_clip": ("cispo", {}, "trl"),
    "clip_ratio_c": ("ppo", {"eps_low": 1e-4}, 1.0001), "gamma": ("ppo_critic", {}, 0.5),
    "lam": ("ppo_critic", {}, 0.5), "critic_lr": ("ppo_critic", {}, 0.5), "vf_coef": ("ppo_critic", {}, 0.5),
    "staleness": ("grpo", {}, 1), "tis_cap": ("grpo_async", {}, 0.5),
    "rollout_is": ("grpo_async", {"tis_cap": 1.0001}, "sequence"), "rollout_rs": ("grpo_async", {}, "token_k1"),
    "rollout_rs_threshold": ("grpo_async", {"rollout_rs": "token_k1"}, 1.0001),
    "loss_scale_factor": ("grpo", {"loss_agg": "seq-mean-token-sum-norm"}, 3), "is_level": ("grpo", {}, "sequence"),
    "delta": ("ppo", {"eps_high": 1e-4}, 1.0002), "tau_pos": ("sapo", {}, 3.0), "tau_neg": ("sapo", {}, 3.0),
    "clip_cov_ratio": ("clip_cov", {}, 0.3), "clip_cov_lb": ("clip_cov", {}, -5.0),
    "clip_cov_ub": ("clip_cov", {"clip_cov_lb": -5.0, "clip_cov_ratio": 0.3}, -4.0),
    "kl_cov_ratio": ("kl_cov", {}, 0.3), "ppo_kl_coef": ("kl_cov", {"kl_cov_ratio": 0.3}, 10.0),
    "vespo_k_pos": ("grpo", {"policy_loss": "vespo"}, 0.5), "vespo_lambda_pos": ("grpo", {"policy_loss": "vespo"}, 0.5),
    "vespo_k_neg": ("grpo", {"policy_loss": "vespo"}, 0.5), "vespo_lambda_neg": ("grpo", {"policy_loss": "vespo"}, 0.5),
}
OPTION_REFUSED = {"reward": "process", "optimizer": "sgd"}
"""网络上不能用的选项和一个会被拒绝的值（错误信息里有选项名）。"""
OPTION_RAISES = {"on_short": ("dapo", {"gen_batch_scale": 1, "max_draws": 1, "temperature": 1e-3}, "raise")}
"""只在出事时起作用的选项：凑不满时 on_short="raise" 报错，"train" 照样训练。"""


def test_every_option_is_classified():
    import dataclasses
    from toyllm.rl import RLConfig
    classified = set(OPTION_CHANGES) | set(OPTION_REFUSED) | set(OPTION_RAISES)
    own = dataclasses.fields(RLConfig)[:-1]                     # 最后一个字段 peer 装 toyllm.peers 的选项
    assert classified == {f.name for f in own + dataclasses.fields(toyllm.peers.PeerOptions)}


@pytest.mark.parametrize("name", sorted(OPTION_CHANGES))
def test_every_option_changes_the_networks_update(sft_model, name):
    """讲义 §10.3："RLConfig 的每个选项在网络上都起作用"：只改这一个选项，训练出的权重就不同。"""
    model, train, _ = sft_model
    preset, extra, value = OPTION_CHANGES[name]
    base = tl.tiny_config(preset, **{**_SMALL, **extra})
    assert getattr(base, name) != value, name
    a, b = model.copy(), model.copy()
    tl.rl_train(a, train, base)
    tl.rl_train(b, train, base.replace(**{name: value}))
    assert not all(np.array_equal(a.params[k], b.params[k]) for k in a.params), name


@pytest.mark.parametrize("name", sorted(OPTION_REFUSED))
def test_options_the_network_cannot_use_are_refused_by_name(name):
    model = tl.TinyLM(d=16, heads=2, layers=1)
    with pytest.raises(ValueError, match=f"config.{name}"):
        tl.rl_train(model, tl.addition_examples(8), tl.tiny_config("grpo").replace(**{name: OPTION_REFUSED[name]}))


def test_on_short_raise_stops_where_train_goes_on(sft_model):
    model, train, _ = sft_model
    preset, extra, value = OPTION_RAISES["on_short"]
    cfg = tl.tiny_config(preset, **{**_SMALL, **extra})
    assert tl.rl_train(model.copy(), train, cfg).meta["short_batches"] > 0
    with pytest.raises(RuntimeError, match="on_short"):
        tl.rl_train(model.copy(), train, cfg.replace(on_short=value))


def test_the_parameter_count_in_the_docstring_is_the_models():
    """TinyLM 的说明写着参数个数的算法和默认模型的个数：都和 n_params 一致。"""
    import re
    doc = tl.TinyLM.__doc__
    assert int(re.search(r"n_params → ([\d,]+)", doc).group(1).replace(",", "")) == tl.TinyLM(seed=0).n_params
    for d, layers, context in [(64, 2, 16), (32, 1, 25), (128, 3, 8)]:
        V = len(tl.VOCAB)
        expected = (2 * V + context) * d + layers * (12 * d * d + 9 * d) + 2 * d
        assert tl.TinyLM(d=d, heads=4, layers=layers, context=context).n_params == expected
