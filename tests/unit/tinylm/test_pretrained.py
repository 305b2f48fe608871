"""
预训练的小 transformer（toyllm.tinylm.pretrained）：仓库里的文件和清单对得上，make pretrain 的前 50 步逐位重现，
坏文件报带文件名的中文错误，SFT 的学习率计划和 callback。
"""

import hashlib
import json
import os

import numpy as np
import pytest
from background import Background
from paths import ROOT

from toyllm import tinylm as tl
from toyllm.tinylm import pretraining as P
from toyllm.tinylm.train import COSINE_FLOOR, lr_factor

SIZES = list(P.PRETRAINED)


def _replay(_folder):
    """
    要整个训练集的几件事（生成 60 万道老师写的题要十几秒，纯 Python）：重跑每种大小的前 50 步、留出题没有混进训练题、
    老师答对的比例。在后台进程里先做（tests/background.py），测试在最后比较结果。
    """
    examples = P.training_examples()
    fingerprints = {}
    for name in SIZES:
        def stop(it, model, name=name):
            if it == P.FINGERPRINT_STEP:
                fingerprints[name] = P.fingerprint(model)
                return True
        P.pretrain(name, examples, callback=stop)
    held = {tl.problem_example(p).prompt for p in P.heldout_problems()}
    return {"fingerprints": fingerprints, "count": len(examples),
            "overlap": sorted(held & {e.prompt for e in examples}),
            "teacher_right": float(np.mean([tl.answer_of(e.target, True) == e.answer for e in examples[:5000]]))}


BACKGROUND = Background(_replay, "pretrain", priority=0, process=True)
"""重跑 make pretrain 的开头：在另一个进程里先开始（tests/background.py），用第二个核。"""


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    return BACKGROUND.get(tmp_path_factory)


@pytest.fixture(scope="module")
def evaluations():
    """每种大小在清单的留出题上重新量一次（贪心解码是确定的：BLAS 单线程、内核固定）。"""
    return {name: P.evaluate(tl.pretrained(name)) for name in SIZES}


@pytest.mark.parametrize("name", SIZES)
def test_file_matches_its_manifest(name):
    info = tl.manifest(name)
    data = (P.WEIGHTS / info["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == info["sha256"]
    model = tl.pretrained(name)
    assert model.config == info["config"] and model.n_params == info["n_params"]
    assert info["recipe"] == P.RECIPE and model.config == {**P.SIZES[name]["model"], **P.RECIPE["model"]}
    assert all(v.dtype == np.float32 for v in model.params.values())


def test_files_are_small_and_default_is_base():
    assert sum((P.WEIGHTS / tl.manifest(n)["file"]).stat().st_size for n in SIZES) <= 5 * 2 ** 20
    assert tl.pretrained().config == tl.pretrained(P.DEFAULT).config and P.DEFAULT == "base"
    sizes = [tl.manifest(n)["n_params"] for n in SIZES]
    assert sizes == sorted(sizes) and sizes[0] < 40_000 and 300_000 < sizes[-1] < 500_000


@pytest.mark.parametrize("name", SIZES)
def test_heldout_accuracy_is_what_the_manifest_says(name, evaluations):
    assert evaluations[name] == tl.manifest(name)["heldout"]


def test_accuracy_rises_with_size(evaluations):
    greedy = [evaluations[n]["greedy"] for n in SIZES]
    assert greedy == sorted(greedy) and greedy[0] < greedy[-1]


def test_default_meets_the_targets(evaluations):
    """issue 的目标：留出题贪心 ≥ 60%；加减法每个情境 ≥ 80%（至少 20 步的情境）；乘一位数 ≥ 50%。"""
    result = evaluations[P.DEFAULT]
    assert result["greedy"] >= 0.6
    rate = {k: c["correct"] / c["steps"] for k, c in result["contexts"].items() if c["steps"] >= 20}
    assert all(r >= 0.8 for k, r in rate.items() if k.startswith(("加法", "减法"))), rate
    assert rate["乘一位数"] >= 0.5


@pytest.mark.parametrize("name", SIZES)
def test_first_50_steps_of_make_pretrain_reproduce(name, replay):
    """重跑配方的前 50 步（_replay），参数的指纹和清单里 make pretrain 记下的逐位相同。"""
    assert replay["fingerprints"][name] == tl.manifest(name)["fingerprint"]


def test_heldout_problems_are_not_trained_on(replay):
    assert len(P.heldout_problems()) == P.RECIPE["heldout"]["count"]
    assert replay["overlap"] == []
    assert all(replay["count"] == tl.manifest(name)["training_examples"] for name in SIZES)


# ---------------------------------------------------------------------------
# 坏文件：带文件名的中文错误
# ---------------------------------------------------------------------------
@pytest.fixture()
def saved(tmp_path):
    model = tl.TinyLM(d=8, heads=2, layers=1, context=12, seed=3)
    path = tmp_path / "m.safetensors"
    return model, path, tl.save_weights(model, path)


def test_save_and_load_round_trip(saved):
    model, path, sha = saved
    back = tl.load_weights(path, sha256=sha)
    assert back.config == model.config
    assert all(np.array_equal(back.params[k], v) for k, v in model.params.items())


def _header(path):
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    return data, n, json.loads(data[8:8 + n])


def _rewrite(path, header, body):
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + body)


def test_bad_files_name_the_file(saved, tmp_path):
    model, path, sha = saved
    data, n, header = _header(path)
    with pytest.raises(FileNotFoundError, match="nothing.safetensors.*不存在"):
        tl.load_weights(tmp_path / "nothing.safetensors")
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="cut.safetensors.*被截断"):
        tl.load_weights(cut)
    junk = tmp_path / "junk.safetensors"
    junk.write_text('{"format": "toyllm-model"}')
    with pytest.raises(ValueError, match="junk.safetensors.*safetensors"):
        tl.load_weights(junk)
    with pytest.raises(ValueError, match="m.safetensors.*sha256"):
        tl.load_weights(path, sha256="0" * 64)
    other = tmp_path / "other.safetensors"
    header["__metadata__"]["format"] = "something-else"
    _rewrite(other, header, data[8 + n:])
    with pytest.raises(ValueError, match="other.safetensors.*format"):
        tl.load_weights(other)
    shapes = tmp_path / "shapes.safetensors"
    header["__metadata__"] = {"format": P.FORMAT, "config": json.dumps({**model.config, "d": 16, "heads": 2})}
    _rewrite(shapes, header, data[8 + n:])
    with pytest.raises(ValueError, match=r"shapes.safetensors 的参数 \S+ 是 float32 \(\d+, 8\)，.* \(\d+, 16\)"):
        tl.load_weights(shapes)
    cfg = tmp_path / "cfg.safetensors"
    header["__metadata__"] = {"format": P.FORMAT, "config": json.dumps({**model.config, "d": 7})}
    _rewrite(cfg, header, data[8 + n:])
    with pytest.raises(ValueError, match="cfg.safetensors.*config"):
        tl.load_weights(cfg)


def test_nan_and_missing_parameters_are_refused(tmp_path):
    model = tl.TinyLM(d=8, heads=2, layers=1, context=12)
    model.params["head"][0, 0] = np.nan
    with pytest.raises(ValueError, match="参数 head 里有 NaN"):          # 存的时候就拒绝
        tl.save_weights(model, tmp_path / "nan.safetensors")
    assert not (tmp_path / "nan.safetensors").exists()
    from safetensors.numpy import save                                # 别处写出来的坏文件：读的时候也拒绝
    (tmp_path / "nan.safetensors").write_bytes(save(model.params, metadata={
        "format": P.FORMAT, "config": json.dumps(model.config, sort_keys=True)}))
    with pytest.raises(ValueError, match="nan.safetensors 的参数 head 里有 NaN"):
        tl.load_weights(tmp_path / "nan.safetensors")
    model.params["head"][0, 0] = 0
    del model.params["lnf.b"]
    tl.save_weights(model, tmp_path / "less.safetensors")
    with pytest.raises(ValueError, match=r"less.safetensors 的参数名不对：缺 \['lnf.b'\]"):
        tl.load_weights(tmp_path / "less.safetensors")


def test_a_failed_save_keeps_the_old_file(saved, monkeypatch):
    model, path, sha = saved
    before = path.read_bytes()
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("磁盘满了")))
    with pytest.raises(OSError):
        tl.save_weights(tl.TinyLM(d=8, heads=2, layers=1, context=12, seed=9), path)
    assert path.read_bytes() == before and [p.name for p in path.parent.iterdir()] == ["m.safetensors"]


def test_unknown_name_lists_the_names():
    with pytest.raises(ValueError, match="name 必须是 'small'、'base'、'large' 之一，收到 'huge'"):
        tl.pretrained("huge")


# ---------------------------------------------------------------------------
# SFT 的学习率计划和 callback
# ---------------------------------------------------------------------------
def test_lr_factor():
    assert lr_factor(7, 100) == 1.0
    assert lr_factor(50, 1000, warmup=100) == 0.5
    assert lr_factor(1000, 1000, schedule="cosine") == pytest.approx(COSINE_FLOOR)
    assert lr_factor(500, 1000, schedule="cosine") == pytest.approx(COSINE_FLOOR + (1 - COSINE_FLOOR) / 2)
    f = [lr_factor(it, 300, 30, "cosine") for it in range(1, 301)]
    assert np.argmax(f) == 29 and all(a >= b for a, b in zip(f[29:], f[30:]))


def test_sft_schedule_and_callback():
    train = tl.addition_examples(50, seed=0)
    seen = []
    hist = tl.sft(tl.TinyLM(d=8, heads=2, layers=1, context=12), train, steps=20, batch_size=4,
                  warmup=5, schedule="cosine", callback=lambda it, m: seen.append(it) or it == 7)
    assert seen == list(range(1, 8)) and list(hist["iteration"]) == seen
    a, b = (tl.TinyLM(d=8, heads=2, layers=1, context=12) for _ in range(2))
    tl.sft(a, train, steps=5, batch_size=4)
    tl.sft(b, train, steps=5, batch_size=4, warmup=3)
    assert not np.array_equal(a.params["head"], b.params["head"])
    with pytest.raises(ValueError, match="schedule 必须是 'constant'、'cosine' 之一，收到 'cos'"):
        tl.sft(a, train, steps=1, schedule="cos")
    with pytest.raises(TypeError, match="callback 必须是函数"):
        tl.sft(a, train, steps=1, callback=3)
    with pytest.raises(ValueError, match="warmup"):
        tl.sft(a, train, steps=1, warmup=-1)


def test_problem_example_writes_given_values():
    from toyllm.arithmetic import Problem, Step
    p = Problem(37, (Step("mul", 12), Step("add", 458)), 902)
    e = tl.problem_example(p, values=[443, 901])
    assert e.target == "3440;1090$" and e.answer == 902 and not e.is_correct(e.target)
    assert tl.problem_example(p, values=[444, 902]) == tl.problem_example(p)
    with pytest.raises(ValueError, match="values 要有 2 个数"):
        tl.problem_example(p, values=[444])


def test_training_solutions_come_from_the_toy_teacher(replay):
    """训练题的解答是老师 ToyLLM(teacher) 采样写的：大部分对，也有错（网络要学的是老师的分布）。"""
    assert 0.8 < replay["teacher_right"] < 0.99


def test_the_wheel_ships_the_weights(tmp_path):
    """pip install（不是 -e）装的包里也有权重和清单：wheel 里有 weights/ 的每个文件。"""
    import subprocess
    import sys
    import zipfile
    import shutil
    root, src = ROOT, tmp_path / "src"
    shutil.copytree(root / "toyllm", src / "toyllm", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, src / name)            # 在副本里构建：setuptools 的 build/ 不落在仓库里
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(src),
                    "-w", str(tmp_path)], check=True, cwd=tmp_path)
    (wheel,) = tmp_path.glob("toyllm-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in SIZES:
        info = tl.manifest(name)
        assert {f"toyllm/tinylm/weights/{info['file']}", f"toyllm/tinylm/weights/{name}.json"} <= names
