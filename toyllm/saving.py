"""
保存和读取模型：两个模型一种格式。权重是 safetensors 文件（玩具的 Δ 表、小 transformer 的参数），训练记录是旁边的 JSON。

【思路】safetensors 只存数组和一个 {str: str} 的文件头，不能藏代码（不像 pickle），读的时候先检查整个文件再建模型。
    文件头的 "format" 说明是哪一种模型：
        "toyllm-tinylm"      TinyLM：每个参数一个数组；文件头里有网络的构造参数 config（tinylm.save_weights / load_weights；
                             仓库里带的预训练网络就是这种文件）
        "toyllm-trainable"   TrainableLLM：一个 (12, 3) 的数组 "delta"；文件头里有 size、name（tools/checkpoint.py）
    训练记录（History 或 {列名: list}）写在同名的 .history.json 里：{"metadata": {...}, "history": {列名: [...]}}，
    NaN 和无穷存成 null。写文件都是原子的（files.atomic_write）：中途出错，旧文件原封不动。
【边界】旧版 tools/checkpoint.py 写的 JSON 模型文件不再直接读：报错并说明怎样转换（python tools/checkpoint.py 旧.json 新.safetensors）。
"""

import hashlib
import json
import math
from pathlib import Path

import numpy as np

from ._checks import as_path
from .files import atomic_write

def history_path(path):
    """模型文件旁边的训练记录文件。【例子】history_path("m.safetensors") → Path("m.history.json")"""
    path = Path(path)
    return path.with_name(path.stem + ".history.json")


def save_arrays(path, tensors, header, history=None, metadata=None):
    """
    把数组 {名字: 数组} 和文件头 {str: str} 原子地存成 safetensors 文件；给了 history（或 metadata）时，
    训练记录存在旁边的 .history.json 里。先全部检查、编码好，再写文件。

    【参数】header 里要有 "format"（哪一种模型）；history：rl.train 返回的 History，或 {列名: list}；
        metadata：{str: JSON 值}，写进训练记录（不给时用 history.meta）
    【返回】权重文件的 sha256（仓库里预训练网络的清单记着它）
    """
    from safetensors.numpy import save
    path = as_path("path", path)
    for name, array in tensors.items():
        if not np.isfinite(array).all():
            raise ValueError(f"参数 {name} 里有 NaN 或无穷，不能保存；训练可能发散了，试试更小的学习率 lr")
    text = None if history is None and metadata is None else _history_json({} if history is None else history, metadata)
    data = _same_order(save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, metadata=header))
    atomic_write(path, data)
    if text is not None:
        atomic_write(history_path(path), text)
    return hashlib.sha256(data).hexdigest()


def _same_order(data):
    """
    safetensors（Rust）按随机的顺序写文件头里的 metadata：同一个模型两次保存，字节（和 sha256）可能不同。
    这里把 metadata 按键排好重写文件头（长度不变，后面的数组原样不动），同一个模型总是同样的字节。
    """
    n = int.from_bytes(data[:8], "little")
    head = json.loads(data[8:8 + n])
    head["__metadata__"] = dict(sorted(head.get("__metadata__", {}).items()))
    text = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode()
    if len(text) > n or data[8 + len(text):8 + n].strip(b" "):
        raise RuntimeError("重写 safetensors 的文件头时长度变了；请报告这个问题")
    return data[:8] + text.ljust(n) + data[8 + n:]


def load_arrays(path, fmt, sha256=None):
    """
    读 save_arrays 写的文件：(数组 {名字: 数组}, 文件头 {str: str})。文件头的 "format" 必须是 fmt；
    sha256 给了时先核对。

    【边界】不存在：FileNotFoundError；旧版的 JSON 模型文件、不是 safetensors、被截断、format 不对、有 NaN、
        sha256 不符：ValueError，都写出文件名（旧的 JSON 文件还说明怎样转换）。
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load
    path = Path(as_path("path", path))
    if not path.is_file():
        raise FileNotFoundError(f"模型文件 {path} 不存在" + ("（它是一个文件夹）" if path.is_dir() else ""))
    data = path.read_bytes()
    if data.lstrip()[:1] == b"{":
        raise bad_file(path, "是旧版的 JSON 模型文件；转换成 safetensors：python tools/checkpoint.py "
                             f"{path} {path.with_suffix('.safetensors')}")
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise bad_file(path, "的 sha256 和清单里的不一样：文件被改过、或者没有下载完整（git lfs / 复制中断）")
    try:
        tensors = load(data)
        header = json.loads(data[8:8 + int.from_bytes(data[:8], "little")]).get("__metadata__") or {}
    except (SafetensorError, ValueError, UnicodeDecodeError) as e:
        raise bad_file(path, f"不是完整的 safetensors 文件（可能被截断了）：{e}") from None
    if header.get("format") != fmt:
        raise bad_file(path, f"不是这种模型的文件（文件头的 format 应该是 {fmt!r}，收到 {header.get('format')!r}）")
    for name, array in tensors.items():
        if not np.isfinite(array).all():
            raise bad_file(path, f"的参数 {name} 里有 NaN 或无穷")
    return tensors, header


def check_shapes(path, tensors, expected):
    """读到的数组和模型要的 {名字: 数组} 名字、形状、类型都一样；不一样时报带文件名的 ValueError。"""
    if set(tensors) != set(expected):
        missing, extra = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
        raise bad_file(path, f"的参数名不对：缺 {missing}，多了 {extra}")
    for name, want in expected.items():
        got = tensors[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise bad_file(path, f"的参数 {name} 是 {got.dtype} {got.shape}，应该是 {want.dtype} {want.shape}")


def bad_file(path, what):
    """读文件出错：带文件名的 ValueError。"""
    return ValueError(f"模型文件 {path} {what}")


def load_history(path):
    """读模型文件旁边的训练记录：{"metadata": {...}, "history": {列名: list}}。path 是模型文件或 .history.json 本身。"""
    path = Path(as_path("path", path))
    file = path if path.name.endswith(".history.json") else history_path(path)
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"训练记录 {file} 不存在；保存时用 save_model(..., history=...)") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"训练记录 {file} 不是完整的 JSON（可能被截断了）：{e}") from None
    if not (isinstance(doc, dict) and isinstance(doc.get("history"), dict) and isinstance(doc.get("metadata"), dict)):
        raise ValueError(f"训练记录 {file} 必须是 {{\"metadata\": {{...}}, \"history\": {{列名: [...]}}}}")
    return doc


def _history_json(history, metadata):
    """训练记录写成的 JSON 文本（numpy 的数、tuple 转成 JSON 的；NaN、无穷写成 null）。"""
    if not hasattr(history, "items"):
        raise TypeError(f"history 必须是 History 或 {{列名: list}}，收到 {type(history).__name__}")
    if metadata is not None and not hasattr(metadata, "items"):
        raise TypeError(f"metadata 必须是字典 {{str: 值}}，收到 {type(metadata).__name__}")
    meta = getattr(history, "meta", {}) if metadata is None else metadata
    doc = {"metadata": _plain(meta, "metadata"), "history": _plain({k: list(v) for k, v in history.items()}, "history")}
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=1) + "\n"


def _plain(value, where):
    """转成纯 JSON 值；转不了的报中文的 TypeError（指出位置）。"""
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"{where} 的键必须是字符串，收到 {list(value)!r}"[:200])
        return {k: _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise TypeError(f"{where} 是 {type(value).__name__} 类型的 {value!r}，不能写进 JSON"[:200])


__all__ = ["bad_file", "check_shapes", "history_path", "load_arrays", "load_history", "save_arrays"]
