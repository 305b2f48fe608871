"""
保存 / 读取模型和训练记录（toyllm.saving 的格式：safetensors + 旁边的 .history.json）：两个模型往返逐位相同、
原子写入、坏文件和旧版 JSON 文件给出清楚的中文错误；tools/checkpoint.py 把旧版 JSON 文件转换成新格式。
"""

import errno
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toyllm import CONTEXTS, TrainableLLM, make_problem_set
from toyllm import tinylm as tl
from toyllm.exact import exact_pass_at_1
from toyllm.history import History
from toyllm.policy import prob_table
from toyllm.saving import history_path, load_history
from tools.checkpoint import CONTEXT_STRINGS, convert, load_model, save_model

from paths import ROOT


def trained_model(seed=0, size=1e9, name=None):
    m = TrainableLLM(size, name=name)
    m.params[:] = np.random.default_rng(seed).normal(0.0, 1.5, size=m.params.shape)
    return m


def leftovers(folder):
    """文件夹里除了正式文件以外的东西（临时文件）。"""
    return sorted(p.name for p in Path(folder).iterdir() if p.name.endswith(".tmp") or p.name.startswith("."))


# =============================================================================
# 往返：两个模型
# =============================================================================
def test_toy_round_trip_gives_identical_model_and_probabilities(tmp_path):
    m = trained_model(name="GRPO 训练后")
    path = tmp_path / "model.safetensors"
    assert len(save_model(m, path)) == 64                               # 返回 sha256
    m2 = load_model(path)
    assert type(m2) is TrainableLLM and (m2.size, m2.cot, m2.name) == (m.size, m.cot, m.name)
    assert np.array_equal(m2.params, m.params) and np.array_equal(prob_table(m2), prob_table(m))
    problems = make_problem_set(random.Random(0), 20, 3, 8)
    assert exact_pass_at_1(m2, problems) == exact_pass_at_1(m, problems)
    assert m2.generate(problems[0], random.Random(5)) == m.generate(problems[0], random.Random(5))
    m2.params[0, 0] += 1.0                                               # 读回来的是独立的一份
    assert m2.params[0, 0] != m.params[0, 0]
    assert not history_path(path).exists()                               # 没给训练记录就不写


def test_network_round_trip_with_history(tmp_path):
    model = tl.TinyLM(d=8, heads=2, layers=1, context=12, seed=3)
    hist = History(["iteration", "loss"], {"algorithm": "sft", "seed": 3})
    hist.append({"iteration": 1, "loss": float("nan")})
    hist.append({"iteration": 2, "loss": 0.5})
    path = tmp_path / "net.safetensors"
    tl.save_weights(model, path, history=hist)
    back = tl.load_weights(path)
    assert back.config == model.config
    assert all(np.array_equal(back.params[k], v) and back.params[k].dtype == v.dtype for k, v in model.params.items())
    assert load_history(path) == {"metadata": {"algorithm": "sft", "seed": 3},
                                  "history": {"iteration": [1, 2], "loss": [None, 0.5]}}
    with pytest.raises(ValueError, match="net.safetensors.*format"):    # 网络的文件不是玩具的
        load_model(path)


def test_history_beside_the_model(tmp_path):
    hist = {"iter": np.arange(3), "reward": [0.25, 0.5, 0.625], "kl": [0.0, float("inf"), np.float64(0.01)],
            "note": ["a", None, "中文"], "done": [False, True, np.bool_(True)], "pair": [(1, 2), [3, 4], np.array([5, 6])]}
    meta = {"algorithm": "grpo", "options": {"eps": (0.2, 0.28), "n": np.int64(8)}}
    path = tmp_path / "m.safetensors"
    save_model(trained_model(), path, history=hist, metadata=meta)
    assert history_path(path) == tmp_path / "m.history.json"
    doc = load_history(path)
    assert doc == load_history(tmp_path / "m.history.json")
    assert doc["metadata"] == {"algorithm": "grpo", "options": {"eps": [0.2, 0.28], "n": 8}}
    assert doc["history"] == {"iter": [0, 1, 2], "reward": [0.25, 0.5, 0.625], "kl": [0.0, None, 0.01],
                              "note": ["a", None, "中文"], "done": [False, True, True], "pair": [[1, 2], [3, 4], [5, 6]]}
    assert type(doc["history"]["iter"][0]) is int and type(doc["history"]["done"][2]) is bool
    with pytest.raises(FileNotFoundError, match="训练记录.*不存在"):
        load_history(tmp_path / "other.safetensors")


def test_same_model_gives_identical_bytes(tmp_path):
    save_model(trained_model(), tmp_path / "a.safetensors", history={"r": [1]})
    save_model(trained_model(), tmp_path / "b.safetensors", history={"r": [1]})
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()
    assert (tmp_path / "a.history.json").read_bytes() == (tmp_path / "b.history.json").read_bytes()


def test_overwrite_keeps_permissions_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "m.safetensors"
    save_model(trained_model(0), path)
    os.chmod(path, 0o640)
    save_model(trained_model(1), path)
    assert np.array_equal(load_model(path).params, trained_model(1).params)
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


# =============================================================================
# 原子写入：中途出错时旧文件原封不动、临时文件被删掉
# =============================================================================
@pytest.fixture
def old_file(tmp_path):
    path = tmp_path / "model.safetensors"
    save_model(trained_model(0), path, history={"which": ["old"]})
    return path, path.read_bytes(), history_path(path).read_bytes()


def check_old_file_intact(path, old, old_history):
    assert path.read_bytes() == old and history_path(path).read_bytes() == old_history
    assert np.array_equal(load_model(path).params, trained_model(0).params)
    assert leftovers(path.parent) == []


@pytest.mark.parametrize("where", ["replace", "fsync"])
def test_crash_while_writing_keeps_the_old_file(old_file, monkeypatch, where):
    monkeypatch.setattr(os, where, lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "模拟的 I/O 错误")))
    with pytest.raises(OSError, match="原来的文件"):
        save_model(trained_model(1), old_file[0], history={"which": ["new"]})
    monkeypatch.undo()
    check_old_file_intact(*old_file)


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_crash_in_the_middle_of_writing(old_file, monkeypatch, error):
    """磁盘写满 / Ctrl+C 发生在写了一部分之后：旧文件不受影响。"""
    real_fdopen, written = os.fdopen, []

    class HalfFile:
        def __init__(self, f):
            self.f = f

        def write(self, s):
            if written:
                raise error
            written.append(s)
            return self.f.write(s)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: HalfFile(real_fdopen(*a, **k)))
    with pytest.raises(type(error)):
        save_model(trained_model(1), old_file[0])
    monkeypatch.undo()
    assert len(written) == 1                                  # 真的写了一部分才出错
    check_old_file_intact(*old_file)


def test_save_refuses_nan_model_and_keeps_old_file(old_file):
    m = trained_model(1)
    m.params[CONTEXTS.index(("mul", 2.2)), 1] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        save_model(m, old_file[0])
    check_old_file_intact(*old_file)


@pytest.mark.parametrize("kwargs, exc, word", [
    ({"model": "1B"}, TypeError, "TrainableLLM"),
    ({"path": 3}, TypeError, "path"),
    ({"path": ""}, ValueError, "path"),
    ({"metadata": [1, 2]}, TypeError, "metadata"),
    ({"metadata": {1: "a"}}, TypeError, "键"),
    ({"metadata": {"f": print}}, TypeError, "metadata['f']"),
    ({"history": [1, 2]}, TypeError, "history"),
    ({"history": {"a": [object()]}}, TypeError, "history['a'][0]"),
])
def test_save_bad_arguments(tmp_path, kwargs, exc, word):
    args = {"model": trained_model(), "path": tmp_path / "m.safetensors", **kwargs}
    with pytest.raises(exc) as info:
        save_model(**args)
    assert word in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_save_into_missing_folder_or_onto_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="不存在"):
        save_model(trained_model(), tmp_path / "没有这个文件夹" / "m.safetensors")
    with pytest.raises(IsADirectoryError, match="文件夹"):
        save_model(trained_model(), tmp_path)


# =============================================================================
# 坏文件：每一种都给出带文件名的中文错误，什么也不加载
# =============================================================================
def test_bad_files_name_the_file(tmp_path):
    good = tmp_path / "good.safetensors"
    save_model(trained_model(), good)
    data = good.read_bytes()
    with pytest.raises(FileNotFoundError, match="nope.safetensors 不存在"):
        load_model(tmp_path / "nope.safetensors")
    with pytest.raises(FileNotFoundError, match="文件夹"):
        load_model(tmp_path)
    with pytest.raises(TypeError, match="path"):
        load_model(None)
    cut = tmp_path / "cut.safetensors"
    for n in range(0, len(data) - 1, 7):                 # 截断在任意位置：都报错，不会被当成好文件
        cut.write_bytes(data[:n])
        with pytest.raises(ValueError, match="cut.safetensors"):
            load_model(cut)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00binary")
    with pytest.raises(ValueError, match="junk.safetensors.*不是完整的 safetensors"):
        load_model(junk)
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_len])
    for name, change, word in (("size", {"size": "1B"}, "size"), ("format", {"format": "pickle"}, "format")):
        header["__metadata__"] = {**header["__metadata__"], **change}
        text = json.dumps(header).encode()
        bad = tmp_path / f"{name}.safetensors"
        bad.write_bytes(len(text).to_bytes(8, "little") + text + data[8 + header_len:])
        with pytest.raises(ValueError, match=f"{name}.safetensors.*{word}"):
            load_model(bad)


def test_failed_load_creates_no_model(tmp_path, monkeypatch):
    path = tmp_path / "m.safetensors"
    save_model(trained_model(), path)
    path.write_bytes(path.read_bytes()[:-5])
    created = []
    original = TrainableLLM.__init__
    monkeypatch.setattr(TrainableLLM, "__init__", lambda self, *a, **k: (created.append(self), original(self, *a, **k)))
    with pytest.raises(ValueError):
        load_model(path)
    assert created == []


# =============================================================================
# 旧版的 JSON 文件：说明怎样转换；转换以后 Δ 逐位相同
# =============================================================================
def old_json(m, tmp_path):
    doc = {"format": "toyllm-model", "version": 1, "toyllm_version": "0.1.0", "class": "TrainableLLM",
           "size": m.size, "cot": True, "name": m.name,
           "delta": {f"{op} {h:.1f}": m.params[i].tolist() for i, (op, h) in enumerate(CONTEXTS)},
           "metadata": {"seed": 7}, "history": {"reward": [0.1, None]}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def test_old_json_file_is_refused_with_the_command_that_converts_it(tmp_path):
    path = old_json(trained_model(), tmp_path)
    with pytest.raises(ValueError) as info:
        load_model(path)
    assert "旧版的 JSON" in str(info.value) and f"python tools/checkpoint.py {path}" in str(info.value)


def test_convert_old_json(tmp_path):
    m = trained_model(3, name="旧的")
    old = old_json(m, tmp_path)
    new = tmp_path / "new.safetensors"
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "checkpoint.py"), str(old), str(new)],
                            capture_output=True, text=True, check=True)
    assert "已转换" in result.stdout
    back = load_model(new)
    assert np.array_equal(back.params, m.params) and back.name == "旧的" and back.size == m.size
    assert load_history(new) == {"metadata": {"seed": 7}, "history": {"reward": [0.1, None]}}
    assert len(CONTEXT_STRINGS) == 12
    with pytest.raises(ValueError, match="TrainableLLM"):
        convert(new.with_name("new.history.json"), tmp_path / "x.safetensors")
