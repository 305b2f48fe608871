"""
保存和读取模型、训练记录：一个人能看懂的 JSON 文件（不用 pickle）。维护者的工具（tools/train_cli.py --save 用它），
不在学生的包里：notebook 里的训练几秒钟就跑完，不用存。

【思路】训练出的模型（玩具的 TrainableLLM、小 transformer）和训练记录可以存下来、重启后读回。文件是普通 JSON：{"format": "toyllm-model",
    "version": 1, "toyllm_version", "class": "TrainableLLM", "size", "cot", "name", "delta": {"add 0.0": [Δ 三个数],
    ……12 个情境各一行}, "metadata": {...}, "history": {"列名": [...]}}；只存训练记录时 "format" 是 "toyllm-history"。
    浮点数按 repr 写出，读回来的 Δ 逐位相同，概率也完全一样。
【边界】写入是原子的（同一文件夹里的临时文件 → fsync → os.replace），中途出错旧文件原封不动。读取时先检查整个文件，
    全部通过才创建模型；不存在、被截断、手改错、版本不对，都报带文件名的 CheckpointError（ValueError 的子类；
    文件不存在时也是 FileNotFoundError）。Δ 和你给的 metadata 不许有 NaN / 无穷；训练记录里的存成 null（读回 None）。
"""

import collections
import dataclasses
import json
import math
import os
from collections.abc import Mapping

import numpy as np

from toyllm.arithmetic import CONTEXTS
from toyllm.files import atomic_write
from toyllm.tinylm import VOCAB, TinyLM
from toyllm.tinylm.model import check_model
from toyllm.toy_llm import ToyLLM
from toyllm.trainable import TrainableLLM

MODEL_FORMAT, HISTORY_FORMAT, FORMAT_VERSION = "toyllm-model", "toyllm-history", 1
CONTEXT_STRINGS = {f"{op} {h:.1f}": (op, h) for op, h in CONTEXTS}
"""文件里 12 个情境的写法 → 情境，例如 "mul 2.2" → ("mul", 2.2)。"""
_STRINGS = {key: text for text, key in CONTEXT_STRINGS.items()}
TINYLM_FORMAT = "toyllm-tinylm"
"""小 transformer 的文件：训练记录文件，metadata 里的 "format"（save_tinylm 写，load_tinylm 只认它和 FORMAT_VERSION）。"""
Checkpoint = collections.namedtuple("Checkpoint", "path format model history metadata toyllm_version")
Checkpoint.__doc__ = "read_checkpoint 的结果；model 在训练记录文件里是 None，history 没有时是 None。"


def _finite(x):
    return type(x) in (int, float) and math.isfinite(x)


_FIELDS = {      # 文件里的项 → (检查, 应该是什么)；前两项之外，模型文件和训练记录文件各有自己的项
    "toyllm_version": (lambda v: isinstance(v, str), "字符串"), "metadata": (lambda v: isinstance(v, dict), "JSON 对象 {...}"),
    "class": (lambda v: v in ("TrainableLLM", "ToyLLM"), "'TrainableLLM' 或 'ToyLLM'"),
    "size": (lambda v: _finite(v) and v > 0, "> 0 的有限的数（参数量）"), "cot": (lambda v: isinstance(v, bool), "true 或 false"),
    "name": (lambda v: isinstance(v, str), "字符串"), "delta": (lambda v: isinstance(v, dict), "{\"情境\": [3 个数]}"),
    "history": (lambda v: isinstance(v, dict) and all(isinstance(c, list) for c in v.values()), "{\"列名\": [...]}")}
_KEYS = {MODEL_FORMAT: ("toyllm_version", "class", "size", "cot", "name", "metadata", "delta", "history"),
         HISTORY_FORMAT: ("toyllm_version", "metadata", "history")}


def context_string(key):
    """情境在文件里的写法。【例子】context_string(("mul", 2.2)) == "mul 2.2" """
    if not isinstance(key, tuple) or key not in _STRINGS:
        raise ValueError(f"key 必须是 toyllm.CONTEXTS 里的一个情境，例如 ('mul', 2.2)，收到 {key!r}")
    return _STRINGS[key]


class CheckpointError(ValueError):
    """模型 / 训练记录文件读不出来（不存在、损坏、被截断、版本不对、手改出错）。消息里有文件名和具体问题。"""


class _Missing(CheckpointError, FileNotFoundError):
    """文件不存在：既是 CheckpointError，也是 FileNotFoundError。"""


def save_model(model, path, history=None, metadata=None):
    """
    把模型（可选：连同训练记录）原子地存成 JSON 文件。

    【参数】model：TrainableLLM 或 ToyLLM；path：文件路径（文件夹要已经存在）；history：{列名: list}，
        rl.train 返回的 History 可以直接传；metadata：{str: JSON 值}，不给时用 history.meta（如果有）
    【返回】写入的路径（str）
    【边界】Δ 里有 NaN / 无穷时报 ValueError（指出情境）；numpy 的数和数组、tuple、dataclass 自动转换。
    【例子】save_model(model, "grpo_1B.json", history=hist, metadata={"seed": 0}); load_model("grpo_1B.json")
    【Python 小知识】os.replace 在同一个文件系统里是原子的：别人看到的要么是旧文件，要么是新文件。
    """
    if not isinstance(model, ToyLLM):
        raise TypeError(f"model 必须是 TrainableLLM 或 ToyLLM，收到 {type(model).__name__}")
    trainable = isinstance(model, TrainableLLM)
    doc = {"class": "TrainableLLM" if trainable else "ToyLLM", "size": float(model.size), "cot": bool(model.cot),
           "name": str(model.name)}
    if trainable:
        bad = [context_string(k) for k, row in zip(CONTEXTS, model.params) if not np.all(np.isfinite(row))]
        if bad:
            raise ValueError(f"模型的 Δ 里有 NaN 或无穷（情境 {'、'.join(bad)}），不能保存；训练可能发散了，试试更小的学习率 lr")
        doc["delta"] = {context_string(k): row.tolist() for k, row in zip(CONTEXTS, model.params)}
    return _write(path, MODEL_FORMAT, doc, history, metadata)


def save_history(history, path, metadata=None):
    """把训练记录（不带模型）原子地存成 JSON 文件，参数同 save_model。【例子】save_history({"reward": [0.1]}, "h.json")"""
    if not isinstance(history, Mapping):
        raise TypeError(f"history 必须是 {{列名: list}} 形式的字典，收到 {type(history).__name__}")
    return _write(path, HISTORY_FORMAT, {}, history, metadata)


def _as_path(path):
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str) or not os.fspath(path):
        raise (ValueError if path == "" else TypeError)(f"path 必须是非空的文件路径（str 或 pathlib.Path），收到 {path!r}")
    return os.fspath(path)


def _write(path, fmt, doc, history, metadata):
    path = _as_path(path)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata 必须是字典 {{str: 值}}，收到 {type(metadata).__name__}")
    if history is not None and not isinstance(history, Mapping):
        raise TypeError(f"history 必须是 {{列名: list}} 形式的字典，收到 {type(history).__name__}")
    for name, col in (history or {}).items():
        if isinstance(col, (str, bytes, Mapping)) or not hasattr(col, "__iter__"):
            raise TypeError(f"history[{name!r}] 必须是一列值（list），收到 {type(col).__name__}")
    meta = getattr(history, "meta", None) if metadata is None else metadata   # History.meta 里的 NaN 存成 null
    from toyllm import __version__
    doc = {"format": fmt, "version": FORMAT_VERSION, "toyllm_version": __version__, **doc,
           "metadata": _to_json(meta, "metadata", metadata is None) if isinstance(meta, Mapping) else {}}
    if history is not None:
        doc["history"] = _to_json({k: list(v) for k, v in history.items()}, "history", True)
    dumps = lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))  # noqa: E731
    lines = [f"  {dumps(k)}: " + ("{\n" + ",\n".join(f"    {dumps(n)}: {dumps(c)}" for n, c in v.items()) + "\n  }"
                                  if k in ("delta", "history") and v else dumps(v)) for k, v in doc.items()]
    atomic_write(path, "{\n" + ",\n".join(lines) + "\n}\n")
    return path


def _to_json(value, where, null_nonfinite):
    """转成纯 JSON 值；非有限的数：null_nonfinite 时变成 None，否则报 ValueError（指出位置）。"""
    value = dataclasses.asdict(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value
    value = value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value
    if isinstance(value, float) and not math.isfinite(value) and not null_nonfinite:
        raise ValueError(f"{where} 是 {value!r}；文件里不能存 NaN 或无穷，请换成有限的数或 None")
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str):
                raise TypeError(f"{where} 的键必须是字符串，收到 {k!r}（类型 {type(k).__name__}）")
        return {k: _to_json(v, f"{where}[{k!r}]", null_nonfinite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v, f"{where}[{i}]", null_nonfinite) for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, int, float)):
        return value if not isinstance(value, float) or math.isfinite(value) else None
    raise TypeError(f"{where} 是 {type(value).__name__} 类型的 {value!r}，不能写进 JSON；"
                    "可以用的是数、字符串、布尔、None，以及它们组成的 list / dict")


def load_model(path):
    """读回 save_model 存的模型（TrainableLLM 或 ToyLLM），概率和保存时完全一样；出错见模块说明。【例子】load_model("m.json")"""
    ckpt = read_checkpoint(path)
    if ckpt.model is None:
        raise CheckpointError(f"文件 {ckpt.path} 读取失败：这是训练记录文件，里面没有模型；请用 load_history 读它")
    return ckpt.model


def load_history(path):
    """读回训练记录 {列名: list}（save_history 的文件，或带 history 的模型文件）。【例子】load_history("h.json")["reward"]"""
    ckpt = read_checkpoint(path)
    if ckpt.history is None:
        raise CheckpointError(f"文件 {ckpt.path} 里没有训练记录（history）；保存时用 save_model(..., history=...) 或 save_history")
    return ckpt.history


def read_checkpoint(path):
    """读一个 toyllm 文件的全部内容，返回 Checkpoint；所有检查都在创建模型之前做完。【例子】read_checkpoint("m.json").metadata"""
    path = _as_path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise _Missing(f"文件 {path} 读取失败：找不到文件（当前文件夹是 {os.getcwd()}）") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path} 是一个文件夹，不是模型文件") from None
    try:
        doc = _check(raw)
    except _Problem as e:
        raise CheckpointError(f"文件 {path} 读取失败：{e}") from None
    model = None                              # 全部检查通过以后才创建模型
    if doc["format"] == MODEL_FORMAT:
        delta = {CONTEXT_STRINGS[k]: v for k, v in doc.get("delta", {}).items()}
        model = (TrainableLLM(float(doc["size"]), delta=delta, name=doc["name"]) if doc["class"] == "TrainableLLM"
                 else ToyLLM(float(doc["size"]), cot=doc["cot"], name=doc["name"]))
    return Checkpoint(path, doc["format"], model, doc.get("history"), doc["metadata"], doc["toyllm_version"])


class _Problem(Exception):
    """文件内容的问题（read_checkpoint 把它变成带文件名的 CheckpointError）。"""


def _fail(problem):
    raise _Problem(problem)


def _unique(pairs):
    keys = [k for k, _ in pairs]
    dup = [k for k in keys if keys.count(k) > 1]
    return _fail(f"键 {dup[0]!r} 出现了两次（手改时复制多了？）") if dup else dict(pairs)


def _check(raw):
    """解析并检查整个文件，返回 dict；哪里不对就抛出 _Problem（一句中文说明）。"""
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique,
                         parse_constant=lambda c: _fail(f"文件里有 {c}；数必须是有限的"))
    except UnicodeDecodeError:
        _fail("不是 UTF-8 文本；这不是 toyllm 保存的文件，或者已经损坏")
    except json.JSONDecodeError as e:
        _fail("文件是空的（可能是写到一半时中断了）" if not raw.strip() else
              f"不是合法的 JSON（第 {e.lineno} 行第 {e.colno} 列：{e.msg}）；文件可能被截断了，或者手改时写错了")
    if not isinstance(doc, dict):
        _fail(f"最外层必须是一个 JSON 对象 {{...}}，收到 {type(doc).__name__}")
    fmt, version = doc.get("format"), doc.get("version")
    if fmt not in _KEYS:
        _fail(f"'format' 必须是 {MODEL_FORMAT!r} 或 {HISTORY_FORMAT!r}，收到 {fmt!r}（这可能不是 toyllm 保存的文件）")
    if type(version) is not int or version != FORMAT_VERSION:
        _fail(f"文件格式版本 'version' 是 {version!r}，这个 toyllm 只认识整数版本 {FORMAT_VERSION}"
              + ("；请升级 toyllm" if type(version) is int and version > FORMAT_VERSION else ""))
    allowed = ("format", "version", *_KEYS[fmt])
    optional = ("history", "delta" if doc.get("class") == "ToyLLM" else "") if fmt == MODEL_FORMAT else ()
    for problem, keys in (("缺少", [k for k in allowed if k not in doc and k not in optional]),
                          ("有不认识的项", [k for k in doc if k not in allowed])):
        if keys:
            _fail(f"{problem} {'、'.join(map(repr, keys))}（可以有的项：{'、'.join(allowed)}；文件可能被截断或手改过）")
    for key, (ok, what) in _FIELDS.items():
        if key in doc and not ok(doc[key]):
            _fail(f"{key!r} 必须是 {what}，收到 {doc[key]!r}"[:200])
    if doc.get("class") == "ToyLLM" and "delta" in doc:
        _fail("'class' 是 'ToyLLM'（没有 Δ）时不能有 'delta'；要 Δ 请写 'TrainableLLM'")
    if doc.get("class") == "TrainableLLM" and not doc["cot"]:
        _fail("TrainableLLM 只支持有思维链的版本，'cot' 必须是 true")
    delta = doc.get("delta", {})
    for name, row in delta.items():
        if name not in CONTEXT_STRINGS:
            _fail(f"'delta' 里有未知的情境 {name!r}；情境写成\"运算 难度\"，可以用的是：{'、'.join(CONTEXT_STRINGS)}")
        if not (isinstance(row, list) and len(row) == 3 and all(map(_finite, row))):
            _fail(f"'delta' 里情境 {name!r} 的 Δ 必须是 3 个有限的数 [Δ_correct, Δ_bug, Δ_careless]，收到 {row!r}"[:200])
    missing = [k for k in CONTEXT_STRINGS if "delta" in doc and k not in delta]
    if missing:
        _fail(f"'delta' 缺少情境 {'、'.join(map(repr, missing))}（12 个情境都要有，Δ 为 0 也写 [0.0, 0.0, 0.0]）")
    try:
        json.dumps([doc["metadata"], doc.get("history")], allow_nan=False)
    except ValueError:
        _fail("metadata 或 history 里有超出浮点范围的数（变成了无穷）")
    return doc


# =============================================================================
# 小 transformer：训练记录文件，参数放在 metadata 里
# =============================================================================
def save_tinylm(model, path, history=None):
    """
    把模型（可选：连同训练记录）原子地存成 JSON：用 save_history 写文件，
    metadata 里是 {"format": "toyllm-tinylm", "version": 1, "config": {...}, "vocab": 字表, "params": {名字: 嵌套 list}}。
    float32 的数按 repr 写出，读回来逐位相同。

    【返回】写入的路径
    【例子】save_tinylm(model, "tiny.json", history=hist); load_tinylm("tiny.json")
    """
    check_model(model)
    meta = {"format": TINYLM_FORMAT, "version": FORMAT_VERSION, "config": model.config, "vocab": VOCAB,
            "dtype": model.params["tok"].dtype.name, "params": {k: v.tolist() for k, v in model.params.items()}}
    return save_history({} if history is None else history, path, metadata=meta)


def load_tinylm(path):
    """读回 save_tinylm 存的小 transformer；不是小 transformer 的文件、版本不对、形状不对，都报带文件名的 CheckpointError。"""
    ckpt = read_checkpoint(path)
    meta = ckpt.metadata

    def fail(problem):
        raise CheckpointError(f"文件 {ckpt.path} 读取失败：{problem}")

    if meta.get("format") != TINYLM_FORMAT:
        fail(f"这不是小 transformer 的文件（metadata 里的 'format' 应该是 {TINYLM_FORMAT!r}，收到 {meta.get('format')!r}）")
    if meta.get("version") != FORMAT_VERSION:
        fail(f"小 transformer 的文件版本是 {meta.get('version')!r}，这个 toyllm 只认识版本 {FORMAT_VERSION}")
    if meta.get("vocab") != VOCAB:
        fail(f"字表 {meta.get('vocab')!r} 和这个 toyllm 的字表 {VOCAB!r} 不同")
    try:
        model = TinyLM(**meta["config"], dtype=np.dtype(meta.get("dtype", "float32")).type)
    except (TypeError, ValueError, KeyError) as e:
        fail(f"'config' 不对（{e}）")
    params = meta.get("params")
    if not isinstance(params, dict) or set(params) != set(model.params):
        fail(f"'params' 必须恰好有这些参数：{'、'.join(model.params)}")
    for k, v in model.params.items():
        try:
            arr = np.asarray(params[k], dtype=v.dtype)
        except (TypeError, ValueError):
            fail(f"参数 {k!r} 必须是数的嵌套列表")
        if arr.shape != v.shape:
            fail(f"参数 {k!r} 的形状必须是 {v.shape}，收到 {arr.shape}")
        model.params[k] = arr
    return model


__all__ = ["CONTEXT_STRINGS", "Checkpoint", "CheckpointError", "FORMAT_VERSION", "HISTORY_FORMAT", "MODEL_FORMAT",
           "TINYLM_FORMAT", "context_string", "load_history", "load_model", "load_tinylm", "read_checkpoint", "save_history",
           "save_model", "save_tinylm"]
