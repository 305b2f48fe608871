"""
保存 / 读取模型和训练记录（维护者的工具 tools/checkpoint.py）：往返精确、原子写入、坏文件给出清楚的中文错误。
"""

import errno
import json
import math
import os
import random
from pathlib import Path

import numpy as np
import pytest

import toyllm
from toyllm import CONTEXTS, ToyLLM, TrainableLLM, make_problem_set
from tools.checkpoint import (CONTEXT_STRINGS, FORMAT_VERSION, CheckpointError, context_string, load_history,
                               load_model, read_checkpoint, save_history, save_model)
from toyllm.exact import exact_pass_at_1
from toyllm.policy import prob_table


def trained_model(seed=0, size=1e9, name=None):
    m = TrainableLLM(size, name=name)
    m.params[:] = np.random.default_rng(seed).normal(0.0, 1.5, size=m.params.shape)
    return m


def leftovers(folder):
    """文件夹里除了正式文件以外的东西（临时文件）。"""
    return sorted(p.name for p in Path(folder).iterdir() if p.name.endswith(".tmp") or p.name.startswith("."))


# =============================================================================
# 往返
# =============================================================================
def test_round_trip_gives_identical_model_and_probabilities(tmp_path):
    m = trained_model(name="GRPO 训练后")
    path = tmp_path / "model.json"
    assert save_model(m, path, metadata={"algorithm": "grpo", "seed": 0}) == str(path)
    m2 = load_model(path)
    assert type(m2) is TrainableLLM
    assert (m2.size, m2.cot, m2.name) == (m.size, m.cot, m.name)
    assert np.array_equal(m2.params, m.params)                      # 逐位相同，不是"差不多"
    assert np.array_equal(prob_table(m2), prob_table(m))
    problems = make_problem_set(random.Random(0), 20, 3, 8)
    assert exact_pass_at_1(m2, problems) == exact_pass_at_1(m, problems)
    for p in problems[:5]:
        x = p.start
        for i, step in enumerate(p.steps):
            assert m2.step_probs(step.op, x, step.operand, i) == m.step_probs(step.op, x, step.operand, i)
            x = step.operand + x if step.op == "add" else x - step.operand if step.op == "sub" else x * step.operand
    # 同样的种子 → 同样的采样
    assert m2.generate(problems[0], random.Random(5)) == m.generate(problems[0], random.Random(5))


def test_loaded_model_is_independent_of_the_saved_one(tmp_path):
    m = trained_model()
    save_model(m, tmp_path / "m.json")
    m2 = load_model(tmp_path / "m.json")
    m2.params[0, 0] += 1.0
    assert m2.params[0, 0] != m.params[0, 0]


def test_file_is_small_readable_json(tmp_path):
    m = trained_model()
    m.delta[("mul", 2.2)] = [0.8125, -0.25, -0.5625]
    path = save_model(m, tmp_path / "m.json", metadata={"algorithm": "grpo", "options": {"lr": 0.5}, "seed": 7})
    text = Path(path).read_text(encoding="utf-8")
    doc = json.loads(text)
    assert doc["format"] == "toyllm-model" and doc["version"] == FORMAT_VERSION == 1
    assert doc["toyllm_version"] == toyllm.__version__
    assert doc["class"] == "TrainableLLM" and doc["size"] == 1e9 and doc["cot"] is True and doc["name"] == "1B"
    assert list(doc["delta"]) == [context_string(k) for k in CONTEXTS] == list(CONTEXT_STRINGS)
    assert doc["delta"]["mul 2.2"] == [0.8125, -0.25, -0.5625]
    assert '"mul 2.2": [0.8125, -0.25, -0.5625]' in text             # 每个情境一行
    assert doc["metadata"] == {"algorithm": "grpo", "options": {"lr": 0.5}, "seed": 7}
    assert "NaN" not in text and "Infinity" not in text
    assert len(text) < 3000 and text.count("\n") < 40


def test_context_strings():
    assert context_string(("mul", 2.2)) == "mul 2.2" and context_string(("add", 0.0)) == "add 0.0"
    assert len(CONTEXT_STRINGS) == 12 and all(CONTEXT_STRINGS[context_string(k)] == k for k in CONTEXTS)


def test_toy_llm_round_trip_without_cot(tmp_path):
    m = ToyLLM(3e10, cot=False, name="30B 无思维链")
    save_model(m, tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert doc["class"] == "ToyLLM" and "delta" not in doc
    m2 = load_model(tmp_path / "t.json")
    assert type(m2) is ToyLLM and (m2.size, m2.cot, m2.name) == (3e10, False, "30B 无思维链")
    assert np.array_equal(prob_table(m2, step_index=4), prob_table(m, step_index=4))


def test_history_round_trip_in_model_file_and_alone(tmp_path):
    hist = {"iter": np.arange(4), "reward": [0.25, 0.5, 0.625, 0.75], "pass1": np.array([0.1, 0.2, 0.3, 0.4]),
            "kl": [0.0, float("nan"), 0.01, float("inf")], "note": ["a", None, "中文", "d"],
            "p_correct": [[0.5, 0.6], [0.7, 0.8], [0.9, 1.0], [1.0, 1.0]], "done": [False, False, True, np.bool_(True)]}
    meta = {"algorithm": "grpo", "options": {"eps": (0.2, 0.28), "n": np.int64(8), "lr": np.float64(0.5)}, "seed": 3}
    m = trained_model()
    save_model(m, tmp_path / "m.json", history=hist, metadata=meta)
    save_history(hist, tmp_path / "h.json", metadata=meta)
    for name in ("m.json", "h.json"):
        h = load_history(tmp_path / name)
        assert h == {"iter": [0, 1, 2, 3], "reward": [0.25, 0.5, 0.625, 0.75], "pass1": [0.1, 0.2, 0.3, 0.4],
                     "kl": [0.0, None, 0.01, None], "note": ["a", None, "中文", "d"],
                     "p_correct": [[0.5, 0.6], [0.7, 0.8], [0.9, 1.0], [1.0, 1.0]], "done": [False, False, True, True]}
        assert type(h["iter"][0]) is int and type(h["done"][3]) is bool
        ckpt = read_checkpoint(tmp_path / name)
        assert ckpt.metadata == {"algorithm": "grpo", "options": {"eps": [0.2, 0.28], "n": 8, "lr": 0.5}, "seed": 3}
        assert ckpt.toyllm_version == toyllm.__version__
    assert read_checkpoint(tmp_path / "h.json").model is None
    assert np.array_equal(read_checkpoint(tmp_path / "m.json").model.params, m.params)
    # NaN 读回来是 None，numpy 会把它变回 nan
    assert np.isnan(np.array(load_history(tmp_path / "h.json")["kl"], dtype=float)[1])


def test_load_history_of_a_model_without_history(tmp_path):
    save_model(trained_model(), tmp_path / "m.json")
    with pytest.raises(CheckpointError, match="没有训练记录"):
        load_history(tmp_path / "m.json")


def test_load_model_of_a_history_file(tmp_path):
    save_history({"a": [1]}, tmp_path / "h.json")
    with pytest.raises(CheckpointError, match="load_history"):
        load_model(tmp_path / "h.json")


def test_same_model_gives_identical_bytes(tmp_path):
    save_model(trained_model(), tmp_path / "a.json", metadata={"seed": 1})
    save_model(trained_model(), tmp_path / "b.json", metadata={"seed": 1})
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_overwrite_keeps_permissions_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "m.json"
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
    path = tmp_path / "model.json"
    save_model(trained_model(0), path, metadata={"which": "old"})
    return path, path.read_bytes()


def check_old_file_intact(path, old_bytes):
    assert path.read_bytes() == old_bytes
    assert read_checkpoint(path).metadata == {"which": "old"}
    assert leftovers(path.parent) == []


def test_crash_in_os_replace(old_file, monkeypatch):
    path, old = old_file

    def broken_replace(src, dst):
        assert Path(src).parent == Path(dst).parent and Path(src).read_text(encoding="utf-8").endswith("}\n")
        raise OSError(errno.EIO, "模拟的 I/O 错误")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="原来的文件"):
        save_model(trained_model(1), path, metadata={"which": "new"})
    monkeypatch.undo()
    check_old_file_intact(path, old)


def test_crash_in_fsync(old_file, monkeypatch):
    path, old = old_file
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "fsync 失败")))
    with pytest.raises(OSError):
        save_model(trained_model(1), path, metadata={"which": "new"})
    monkeypatch.undo()
    check_old_file_intact(path, old)


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_crash_in_the_middle_of_writing(old_file, monkeypatch, error):
    """磁盘写满 / Ctrl+C 发生在写了一部分之后：临时文件里只有半个 JSON，旧文件不能受影响。"""
    path, old = old_file
    real_fdopen = os.fdopen
    written = []

    class HalfFile:
        def __init__(self, f):
            self.f = f

        def write(self, s):
            if len(written) >= 5:
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
        save_model(trained_model(1), path, metadata={"which": "new"})
    monkeypatch.undo()
    assert len(written) == 5                                  # 真的写了一部分才出错
    check_old_file_intact(path, old)


def test_crash_while_encoding(old_file, monkeypatch):
    path, old = old_file
    monkeypatch.setattr(json, "dumps", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("模拟的崩溃")))
    with pytest.raises(RuntimeError):
        save_model(trained_model(1), path)
    monkeypatch.undo()
    check_old_file_intact(path, old)


def test_save_refuses_nan_model_and_keeps_old_file(old_file):
    path, old = old_file
    m = trained_model(1)
    m.params[CONTEXTS.index(("mul", 2.2)), 1] = float("nan")
    with pytest.raises(ValueError, match="mul 2.2"):
        save_model(m, path)
    check_old_file_intact(path, old)


@pytest.mark.parametrize("kwargs, exc, word", [
    ({"model": "1B"}, TypeError, "TrainableLLM"),
    ({"path": 3}, TypeError, "path"),
    ({"path": ""}, ValueError, "path"),
    ({"metadata": [1, 2]}, TypeError, "metadata"),
    ({"metadata": {"lr": float("nan")}}, ValueError, "metadata['lr']"),
    ({"metadata": {1: "a"}}, TypeError, "键"),
    ({"metadata": {"f": print}}, TypeError, "metadata['f']"),
    ({"history": [1, 2]}, TypeError, "history"),
    ({"history": {"a": 3}}, TypeError, "history['a']"),
    ({"history": {"a": "abc"}}, TypeError, "history['a']"),
])
def test_save_bad_arguments(tmp_path, kwargs, exc, word):
    args = {"model": trained_model(), "path": tmp_path / "m.json", **kwargs}
    with pytest.raises(exc) as info:
        save_model(**args)
    assert word in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_save_into_missing_folder_or_onto_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="不存在"):
        save_model(trained_model(), tmp_path / "没有这个文件夹" / "m.json")
    with pytest.raises(IsADirectoryError, match="文件夹"):
        save_model(trained_model(), tmp_path)


# =============================================================================
# 坏文件：每一种都给出带文件名的中文错误，什么也不加载
# =============================================================================
def good_doc():
    m = trained_model()
    return {"format": "toyllm-model", "version": 1, "toyllm_version": "0.1.0", "class": "TrainableLLM",
            "size": 1e9, "cot": True, "name": "1B",
            "delta": {context_string(k): m.params[i].tolist() for i, k in enumerate(CONTEXTS)},
            "metadata": {}}


def edited(change):
    doc = good_doc()
    change(doc)
    return json.dumps(doc, ensure_ascii=False)


def set_key(key, value):
    return lambda d: d.__setitem__(key, value)


def del_key(key):
    return lambda d: d.pop(key)


def set_delta(ctx, value):
    return lambda d: d["delta"].__setitem__(ctx, value)


BAD_FILES = {
    "empty": ("", "空的"),
    "blank": ("  \n", "空的"),
    "truncated": (edited(lambda d: None)[:300], "JSON"),
    "not_utf8": ("__BINARY__", "UTF-8"),
    "not_json": ("这不是 JSON", "JSON"),
    "top_level_list": ("[1, 2, 3]", "JSON 对象"),
    "wrong_format": (edited(set_key("format", "pickle")), "format"),
    "missing_format": (edited(del_key("format")), "'format'"),
    "missing_version": (edited(del_key("version")), "'version'"),
    "newer_version": (edited(set_key("version", 2)), "升级"),
    "old_version": (edited(set_key("version", 0)), "版本"),
    "version_string": (edited(set_key("version", "1")), "version"),
    "version_bool": (edited(set_key("version", True)), "version"),
    "missing_size": (edited(del_key("size")), "'size'"),
    "missing_metadata": (edited(del_key("metadata")), "'metadata'"),
    "missing_delta": (edited(del_key("delta")), "delta"),
    "unknown_key": (edited(set_key("detla", {})), "detla"),
    "unknown_class": (edited(set_key("class", "GPT")), "class"),
    "size_string": (edited(set_key("size", "1B")), "size"),
    "size_zero": (edited(set_key("size", 0)), "size"),
    "size_negative": (edited(set_key("size", -1e9)), "size"),
    "size_bool": (edited(set_key("size", True)), "size"),
    "size_overflow": (edited(lambda d: None).replace('"size": 1000000000.0', '"size": 1e999'), "size"),
    "cot_string": (edited(set_key("cot", "yes")), "cot"),
    "cot_false_trainable": (edited(set_key("cot", False)), "cot"),
    "name_number": (edited(set_key("name", 7)), "name"),
    "toyllm_version_number": (edited(set_key("toyllm_version", 1)), "toyllm_version"),
    "metadata_list": (edited(set_key("metadata", [])), "metadata"),
    "delta_list": (edited(set_key("delta", [[0, 0, 0]] * 12)), "delta"),
    "unknown_context": (edited(set_delta("div 0.0", [0, 0, 0])), "div 0.0"),
    "context_tuple_style": (edited(lambda d: d["delta"].__setitem__("('mul', 2.2)", d["delta"].pop("mul 2.2"))),
                            "('mul', 2.2)"),
    "missing_context": (edited(lambda d: d["delta"].pop("sub 1.6")), "sub 1.6"),
    "short_row": (edited(set_delta("mul 1.5", [0.0, 0.0])), "mul 1.5"),
    "long_row": (edited(set_delta("mul 1.5", [0.0, 0.0, 0.0, 0.0])), "[0.0, 0.0, 0.0, 0.0]"),
    "row_not_list": (edited(set_delta("mul 1.5", 0.5)), "mul 1.5"),
    "row_string": (edited(set_delta("add 0.7", [0.0, "x", 0.0])), "add 0.7"),
    "row_bool": (edited(set_delta("add 0.7", [0.0, True, 0.0])), "add 0.7"),
    "row_null": (edited(set_delta("add 0.7", [0.0, None, 0.0])), "add 0.7"),
    "nan": (edited(lambda d: None).replace(json.dumps(good_doc()["delta"]["mul 2.2"][1]), "NaN", 1), "NaN"),
    "infinity": (edited(set_delta("mul 2.2", [0.0, 0.0, 0.0])).replace('"mul 2.2": [0.0, 0.0', '"mul 2.2": [0.0, -Infinity'),
                 "Infinity"),
    "overflow": (edited(set_delta("mul 2.2", [0.0, 0.0, 0.0])).replace('"mul 2.2": [0.0, 0.0', '"mul 2.2": [0.0, 1e400'),
                 "mul 2.2"),
    "duplicate_key": (edited(lambda d: None).replace('"cot": true', '"cot": true, "cot": false'), "两次"),
    "toy_with_delta": (edited(set_key("class", "ToyLLM")), "delta"),
    "history_not_dict": (edited(set_key("history", [1, 2])), "history"),
    "history_column_not_list": (edited(set_key("history", {"reward": 0.5})), "reward"),
    "history_format_without_history": (json.dumps({"format": "toyllm-history", "version": 1, "toyllm_version": "0.1.0",
                                                   "metadata": {}}), "'history'"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_file_gives_clear_error(tmp_path, case):
    text, word = BAD_FILES[case]
    path = tmp_path / f"{case}.json"
    if text == "__BINARY__":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00binary")
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(CheckpointError) as info:
        load_model(path)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert str(path) in message and "读取失败" in message, message
    assert word in message, message
    assert not any(ch.isascii() and ch.isalpha() for ch in message.split("：", 1)[0].replace(str(path), "")), message


def test_bad_files_dict_cases_are_really_bad():
    """BAD_FILES 里 edited(...) 的每一项都真的改动了文件（否则上面的测试就测了个寂寞）。"""
    good = edited(lambda d: None)
    assert json.loads(good) == good_doc()
    assert all(text != good for text, _ in BAD_FILES.values())


def test_good_hand_written_file_loads(tmp_path):
    """手写的文件：整数也算数，键的顺序无所谓，history 可以有。"""
    doc = good_doc()
    doc["delta"] = {k: [0, 0, 0] for k in reversed(list(CONTEXT_STRINGS))}
    doc["delta"]["mul 2.2"] = [1, -1, 0.5]
    doc["size"] = 1000000000
    doc["history"] = {"reward": [0.1, None]}
    (tmp_path / "m.json").write_text(json.dumps(doc), encoding="utf-8")
    m = load_model(tmp_path / "m.json")
    assert m.size == 1e9 and m.delta[("mul", 2.2)].tolist() == [1.0, -1.0, 0.5]
    assert load_history(tmp_path / "m.json") == {"reward": [0.1, None]}


def test_words_that_look_like_problems_are_fine(tmp_path):
    """metadata 里的字符串 "NaN"、"Infinity" 只是字符串，不是坏文件。"""
    save_model(trained_model(), tmp_path / "m.json", metadata={"note": "NaN Infinity \u0000", "inf": "info"})
    assert read_checkpoint(tmp_path / "m.json").metadata == {"note": "NaN Infinity \u0000", "inf": "info"}


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="找不到文件") as info:
        load_model(tmp_path / "nope.json")
    assert isinstance(info.value, CheckpointError) and str(tmp_path / "nope.json") in str(info.value)
    with pytest.raises(IsADirectoryError):
        load_model(tmp_path)
    with pytest.raises(TypeError, match="path"):
        load_model(None)


def test_failed_load_does_not_touch_anything(tmp_path):
    """读取失败时没有任何东西被"读了一半"：没有模型对象，文件本身也没有被改。"""
    path = tmp_path / "m.json"
    text = BAD_FILES["short_row"][0]
    path.write_text(text, encoding="utf-8")
    created = []
    original_init = TrainableLLM.__init__

    def spy(self, *a, **k):
        created.append(self)
        original_init(self, *a, **k)

    TrainableLLM.__init__ = spy
    try:
        with pytest.raises(CheckpointError):
            load_model(path)
    finally:
        TrainableLLM.__init__ = original_init
    assert created == [] and path.read_text(encoding="utf-8") == text


def test_truncated_real_file_at_every_length(tmp_path):
    """把一个真的模型文件截断在任意位置，都报 CheckpointError（写到一半的文件不会被当成好文件）。"""
    save_model(trained_model(), tmp_path / "m.json", history={"r": [0.5, 0.25]}, metadata={"seed": 0})
    data = (tmp_path / "m.json").read_bytes()
    cut = tmp_path / "cut.json"
    for n in range(0, len(data) - 2, 7):
        cut.write_bytes(data[:n])
        with pytest.raises(CheckpointError):
            load_model(cut)
    cut.write_bytes(data[:-1])           # 只少了最后的换行：仍然是完整的 JSON
    assert np.array_equal(load_model(cut).params, trained_model().params)


def test_extreme_but_legal_models_round_trip(tmp_path):
    for size in (1.0, 1e3, 1e15, 1.7976931348623157e308):
        m = TrainableLLM(size)
        m.params[:] = [[1e300, -1e-300, 5e-324]] * 12
        save_model(m, tmp_path / "x.json")
        m2 = load_model(tmp_path / "x.json")
        assert m2.size == size and np.array_equal(m2.params, m.params)
        assert not math.isnan(m2.p_correct(("add", 0.0)))


def test_rl_history_meta_is_saved_as_metadata(tmp_path):
    """toyllm.rl 的 History 带着 .meta：不给 metadata 时自动存它（里面的 NaN 存成 null，不让保存失败）。"""
    from toyllm.rl import History
    hist = History(["iteration", "entropy"], {"algorithm": "rl", "config": {"lr": 2.0}, "seed": 4, "odd": float("nan")})
    hist.append({"iteration": 1, "entropy": float("nan")})
    hist.append({"iteration": 2, "entropy": 0.5})
    path = save_model(trained_model(), tmp_path / "m.json", history=hist)
    ckpt = read_checkpoint(path)
    assert ckpt.metadata == {"algorithm": "rl", "config": {"lr": 2.0}, "seed": 4, "odd": None}
    assert ckpt.history == {"iteration": [1, 2], "entropy": [None, 0.5]}
    save_history(hist, tmp_path / "h.json", metadata={"mine": 1})          # 明确给了 metadata 就用给的
    assert read_checkpoint(tmp_path / "h.json").metadata == {"mine": 1}
