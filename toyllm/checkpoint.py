"""
保存和读取模型、训练记录：小小的、人能看懂的 JSON 文件（绝不用 pickle）。

【思路】训练了半小时的模型不能因为 notebook 重启就丢了，所以要能存成文件、再读回来。
    文件就是普通的 JSON 文本，用记事本打开也看得懂，例如：

        {
          "format": "toyllm-model",
          "version": 1,
          "toyllm_version": "0.1.0",
          "class": "TrainableLLM",
          "size": 1000000000.0,
          "cot": true,
          "name": "1B",
          "delta": {
            "add 0.0": [0.0, 0.0, 0.0],
            ...
            "mul 2.2": [0.8125, -0.25, -0.5625]
          },
          "metadata": {"algorithm": "grpo", "seed": 0, "options": {"lr": 0.5}}
        }

    · "format" / "version"：文件格式和版本号（现在是 1）。以后格式变了，版本号加 1，老代码会明确地拒绝新文件。
    · "class"：TrainableLLM（有 Δ）或 ToyLLM（第 1 讲的模型，没有 Δ，可以没有思维链）。
    · "delta"：每个情境的 Δ = [Δ_correct, Δ_bug, Δ_careless]。情境写成"运算 难度"的字符串，
      难度保留一位小数："add 0.0"、"sub 2.4"、"mul 2.2"……一共 12 个，见 CONTEXT_STRINGS。
    · "metadata"：重现这次训练需要的信息（算法 algorithm、选项 options、随机种子 seed……），内容随你放；
      toyllm 的版本号自动写在 "toyllm_version" 里。
    · "history"（可选）：训练记录，{列名: [每一轮的值]}。

    浮点数按 Python 的 repr 写出（最短的、能精确还原的十进制写法），所以读回来的 Δ 和原来**逐位相同**，
    读回来的模型给出的概率也和原来完全一样。

【边界】
    · 写文件是"原子的"：先写到同一个文件夹里的临时文件，fsync 到磁盘，再用 os.replace 一步换上去。
      中途出任何错（磁盘满、Ctrl+C、程序崩溃），原来的文件原封不动，临时文件被删掉。
    · 读文件时先把**整个文件**检查一遍（格式、版本、缺的键、多余的键、未知情境、NaN、长度不对、类型不对……），
      全部通过才创建模型；任何问题都报 CheckpointError（ValueError 的子类），说明是哪个文件、哪里不对。
    · JSON 里不允许 NaN / Infinity（标准 JSON 没有它们）：模型的 Δ 必须是有限的数；训练记录里的 NaN / ±∞
      存成 null，读回来是 None（numpy 的 np.array(列, dtype=float) 会把 None 变回 nan）。
【Python 小知识】pickle 能存任何 Python 对象，但读一个 pickle 文件等于运行别人的代码，而且换个版本就读不出来；
    JSON 只有数、字符串、列表、字典，安全、通用、人能读。
"""

import json
import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arithmetic import CONTEXTS
from .toy_llm import ToyLLM
from .trainable import TrainableLLM

MODEL_FORMAT = "toyllm-model"
HISTORY_FORMAT = "toyllm-history"
FORMAT_VERSION = 1


def context_string(key):
    """情境 (运算, 难度) 在文件里的写法："运算 难度"，难度保留一位小数。【例子】("mul", 2.2) → "mul 2.2" """
    op, hardness = key
    return f"{op} {hardness:.1f}"


CONTEXT_STRINGS = {context_string(key): key for key in CONTEXTS}
"""文件里 12 个情境的写法 → 情境，例如 "mul 2.2" → ("mul", 2.2)。"""

_MODEL_KEYS = ("format", "version", "toyllm_version", "class", "size", "cot", "name", "delta", "metadata", "history")
_HISTORY_KEYS = ("format", "version", "toyllm_version", "metadata", "history")
_CLASSES = {"TrainableLLM": TrainableLLM, "ToyLLM": ToyLLM}


class CheckpointError(ValueError):
    """模型 / 训练记录文件读不出来（损坏、被截断、版本不对、手改出错……）。消息里有文件名和具体问题。"""


@dataclass(frozen=True)
class Checkpoint:
    """
    read_checkpoint 读出的全部内容。

    【属性】path：文件路径；format："toyllm-model" 或 "toyllm-history"；model：模型（训练记录文件为 None）；
        history：{列名: list}（没有时为 None）；metadata：dict；toyllm_version：写这个文件的 toyllm 版本
    """
    path: str
    format: str
    model: Any
    history: Any
    metadata: dict
    toyllm_version: str


# =============================================================================
# 保存
# =============================================================================
def save_model(model, path, history=None, metadata=None):
    """
    把模型（可选：连同训练记录）存成一个 JSON 文件。

    【思路】把模型的全部状态 —— 参数量 size、有没有思维链 cot、名字 name、每个情境的 Δ —— 写成文本；
        再加上格式版本号、toyllm 版本号，以及你给的 metadata（重现训练用：算法、选项、种子……）。
        写入是原子的：先写临时文件，再一步替换（见模块说明），所以不会留下写了一半的文件。
    【参数】model：TrainableLLM 或 ToyLLM；path：文件路径（str 或 pathlib.Path），所在文件夹必须已经存在；
        history：训练记录 {列名: list}，可选（toyllm.rl.train 返回的 History 可以直接传）；
        metadata：{str: 可以写成 JSON 的值}，可选；不给时，如果 history 有 .meta（History 就有：配置、种子……），就用它
    【返回】写入的路径（str）
    【边界】Δ 里有 NaN / 无穷时报 ValueError（这样的模型不值得存，也读不回来）；metadata 里不能有
        NaN / 无穷、不能有 JSON 表示不了的对象（numpy 的数和数组、tuple、dataclass 会自动转换）。
        TrainableLLM 的子类按 TrainableLLM 保存（子类重写的方法不会存进文件）。
    【例子】
        save_model(model, "grpo_1B.json", history=hist, metadata={"algorithm": "grpo", "seed": 0})
        model2 = load_model("grpo_1B.json")
    【Python 小知识】os.replace(临时文件, 目标) 在同一个文件系统里是原子操作：别的程序看到的要么是旧文件，
        要么是新文件，不会看到一半。
    """
    path = _as_path(path)
    meta = _clean_metadata(metadata) if metadata is not None else _history_meta(history)
    if isinstance(model, TrainableLLM):
        params = np.asarray(model.params, dtype=float)
        if params.shape != (len(CONTEXTS), 3):
            raise ValueError(f"model.params 的形状必须是 ({len(CONTEXTS)}, 3)，收到 {params.shape}")
        if not np.all(np.isfinite(params)):
            bad = [context_string(CONTEXTS[i]) for i in range(len(CONTEXTS)) if not np.all(np.isfinite(params[i]))]
            raise ValueError(f"模型的 Δ 里有 NaN 或无穷（情境 {'、'.join(bad)}），不能保存；训练可能发散了，"
                             "试试更小的学习率 lr")
        class_name = "TrainableLLM"
    elif isinstance(model, ToyLLM):
        params = None
        class_name = "ToyLLM"
    else:
        raise TypeError(f"model 必须是 TrainableLLM 或 ToyLLM，收到 {type(model).__name__}")
    if params is not None and not model.cot:
        raise ValueError("TrainableLLM 只支持有思维链的版本（cot=True），收到 cot=False")
    pieces = [("format", MODEL_FORMAT), ("version", FORMAT_VERSION), ("toyllm_version", _package_version()),
              ("class", class_name), ("size", float(model.size)), ("cot", bool(model.cot)), ("name", str(model.name))]
    text = _header(pieces)
    if params is not None:
        rows = [f'    {_dumps(context_string(key))}: {_dumps([float(x) for x in params[i]])}'
                for i, key in enumerate(CONTEXTS)]
        text += ',\n  "delta": {\n' + ",\n".join(rows) + "\n  }"
    text += ',\n  "metadata": ' + _render_value(meta, 2)
    if history is not None:
        text += ',\n  "history": ' + _render_history(_clean_history(history))
    text += "\n}\n"
    _atomic_write(path, text)
    return path


def save_history(history, path, metadata=None):
    """
    把训练记录存成 JSON 文件（不带模型）。

    【参数】history：{列名: list}（例如 {"iter": [0, 1, 2], "reward": [0.3, 0.4, 0.5]}）；path：文件路径；
        metadata：{str: 可以写成 JSON 的值}，可选（算法、选项、种子……）；不给时用 history.meta（如果有）
    【返回】写入的路径（str）
    【边界】列的值可以是数、布尔、字符串、None 或它们的列表；NaN / ±∞ 存成 null（读回来是 None）。
        写入是原子的（见 save_model）。
    【例子】save_history({"reward": [0.1, 0.2]}, "hist.json", metadata={"seed": 0}); load_history("hist.json")
    """
    path = _as_path(path)
    meta = _clean_metadata(metadata) if metadata is not None else _history_meta(history)
    text = _header([("format", HISTORY_FORMAT), ("version", FORMAT_VERSION), ("toyllm_version", _package_version())])
    text += ',\n  "metadata": ' + _render_value(meta, 2)
    text += ',\n  "history": ' + _render_history(_clean_history(history))
    text += "\n}\n"
    _atomic_write(path, text)
    return path


def _history_meta(history):
    # toyllm.rl.train 返回的 History 带着 .meta（配置、种子、算法……）：没给 metadata 时就用它。
    # 这不是用户亲手写的，所以里面万一有 NaN / 无穷也不让保存失败（存成 null），免得丢掉训练好的模型。
    meta = getattr(history, "meta", None)
    return _to_json(meta, "history.meta", "null") if isinstance(meta, Mapping) else {}


def _dumps(value, indent=None):
    return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent,
                      separators=(",", ": ") if indent is not None else (", ", ": "))


def _header(pieces):
    return "{\n" + ",\n".join(f"  {_dumps(k)}: {_dumps(v)}" for k, v in pieces)


def _render_value(value, depth):
    # 字典每项一行（嵌套的字典再缩进两格），列表和其他值写在一行里
    if not isinstance(value, dict) or not value:
        return _dumps(value)
    pad = " " * (depth + 2)
    rows = [f"{pad}{_dumps(k)}: {_render_value(v, depth + 2)}" for k, v in value.items()]
    return "{\n" + ",\n".join(rows) + "\n" + " " * depth + "}"


def _render_history(history):
    if not history:
        return "{}"
    rows = [f"    {_dumps(name)}: {_dumps(column)}" for name, column in history.items()]
    return "{\n" + ",\n".join(rows) + "\n  }"


def _package_version():
    from . import __version__          # 用到时才导入：toyllm/__init__.py 也会导入本模块，避免循环导入
    return __version__


def _as_path(path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path 必须是文件路径（str 或 pathlib.Path），收到 {path!r}（类型 {type(path).__name__}）")
    path = os.fspath(path)
    if not isinstance(path, str) or not path:
        raise ValueError(f"path 必须是非空的文件路径，收到 {path!r}")
    return path


def _to_json(value, where, nonfinite):
    """把 value 转成纯 JSON 值（dict / list / str / int / float / bool / None）。nonfinite："null" 或 "error"。"""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isfinite(value):
            return value
        if nonfinite == "null":
            return None
        raise ValueError(f"{where} 是 {value!r}；文件里不能存 NaN 或无穷（标准 JSON 没有它们），请换成有限的数或 None")
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        import dataclasses
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} 的键必须是字符串，收到 {k!r}（类型 {type(k).__name__}）")
            out[k] = _to_json(v, f"{where}[{k!r}]", nonfinite)
        return out
    if isinstance(value, (list, tuple)):
        return [_to_json(v, f"{where}[{i}]", nonfinite) for i, v in enumerate(value)]
    raise TypeError(f"{where} 是 {type(value).__name__} 类型的 {value!r}，不能写进 JSON；"
                    "可以用的是数、字符串、布尔、None，以及它们组成的 list / dict")


def _clean_metadata(metadata):
    if not isinstance(metadata, Mapping) and not hasattr(metadata, "__dataclass_fields__"):
        raise TypeError(f"metadata 必须是字典 {{str: 值}}，收到 {type(metadata).__name__}")
    return _to_json(metadata, "metadata", "error")


def _clean_history(history):
    if not isinstance(history, Mapping):
        raise TypeError(f"history 必须是 {{列名: list}} 形式的字典，收到 {type(history).__name__}")
    out = {}
    for name, column in history.items():
        if not isinstance(name, str):
            raise TypeError(f"history 的列名必须是字符串，收到 {name!r}")
        if isinstance(column, np.ndarray):
            column = column.tolist()
        if isinstance(column, (str, bytes, Mapping)) or not hasattr(column, "__iter__"):
            raise TypeError(f"history[{name!r}] 必须是一列值（list），收到 {type(column).__name__}")
        out[name] = _to_json(list(column), f"history[{name!r}]", "null")
    return out


def _atomic_write(path, text):
    """原子地把 text 写到 path：同一文件夹里的临时文件 → flush + fsync → os.replace；失败时删掉临时文件。"""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"保存失败：文件夹 {folder} 不存在；请先创建它（例如 os.makedirs({folder!r})）")
    if os.path.isdir(path):
        raise IsADirectoryError(f"保存失败：{path} 是一个文件夹，请给一个文件名，例如 {os.path.join(path, 'model.json')}")
    if os.path.exists(path):
        mode = os.stat(path).st_mode & 0o777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    except OSError as e:
        raise OSError(e.errno, f"保存 {path} 失败：不能在 {folder} 里创建临时文件（{e.strerror}）") from e
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for line in text.splitlines(keepends=True):
                f.write(line)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:          # 包括 Ctrl+C（KeyboardInterrupt）：先清理临时文件，再把错误抛出去
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):
            raise OSError(e.errno, f"保存 {path} 失败（{e.strerror or e}）；原来的文件（如果有）没有被改动") from e
        raise
    _fsync_folder(folder)


def _fsync_folder(folder):
    # 让"改名"这件事本身也落到磁盘上（POSIX）；Windows 不支持打开文件夹，跳过
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# =============================================================================
# 读取
# =============================================================================
def load_model(path):
    """
    读回 save_model 存的模型。

    【思路】先读整个文件、检查每一项（见模块说明的【边界】），全部通过后才创建模型，所以要么得到一个完好的模型，
        要么得到一个说明问题的错误，不会得到"读了一半"的模型。
    【参数】path：文件路径
    【返回】TrainableLLM（或 ToyLLM，看文件里的 "class"），概率和保存时的模型完全一样
    【边界】文件不存在：FileNotFoundError；文件坏了、被截断、版本不对、被手改错了：CheckpointError（ValueError 的子类），
        消息里写着文件名和哪里不对。训练记录文件（save_history 存的）也报 CheckpointError，请用 load_history。
    【例子】model = load_model("grpo_1B.json"); model.p_correct(("mul", 2.2))
    """
    ckpt = read_checkpoint(path)
    if ckpt.model is None:
        raise CheckpointError(f"模型文件 {ckpt.path} 读取失败：这是训练记录文件（format = {HISTORY_FORMAT!r}），"
                              "里面没有模型；请用 load_history 读它")
    return ckpt.model


def load_history(path):
    """
    读回训练记录：save_history 存的文件，或 save_model(..., history=...) 存的模型文件里的训练记录。

    【参数】path：文件路径
    【返回】dict {列名: list}
    【边界】文件里没有训练记录时报 CheckpointError；其余同 load_model。要 metadata 请用 read_checkpoint。
    【例子】hist = load_history("grpo_1B.json"); hist["reward"][-1]
    """
    ckpt = read_checkpoint(path)
    if ckpt.history is None:
        raise CheckpointError(f"文件 {ckpt.path} 里没有训练记录（history）；保存时用 save_model(..., history=...) "
                              "或 save_history 才会有")
    return ckpt.history


def read_checkpoint(path):
    """
    读一个 toyllm 文件的全部内容（模型、训练记录、metadata、版本）。

    【参数】path：文件路径
    【返回】Checkpoint(path, format, model, history, metadata, toyllm_version)
    【边界】同 load_model：所有检查都在创建模型之前做完。
    【例子】ckpt = read_checkpoint("grpo_1B.json"); ckpt.metadata["seed"]
    """
    path = _as_path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"找不到文件 {path}（当前文件夹是 {os.getcwd()}）") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path} 是一个文件夹，不是模型文件") from None
    try:
        return _parse(path, raw)
    except _Problem as p:
        raise CheckpointError(f"文件 {path} 读取失败：{p}") from None


class _Problem(Exception):
    """文件内容的问题（内部用；对外变成带文件名的 CheckpointError）。"""


def _parse(path, raw):
    if not raw.strip():
        raise _Problem("文件是空的（可能是写到一半时中断了）")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Problem(f"不是 UTF-8 文本（第 {e.start} 个字节附近）；这不是 toyllm 保存的文件，或者已经损坏") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise _Problem(f"不是合法的 JSON（第 {e.lineno} 行第 {e.colno} 列：{e.msg}）；"
                       "文件可能被截断了，或者手动修改时写错了（例如少了逗号、引号或括号）") from None
    except RecursionError:
        raise _Problem("JSON 嵌套太深") from None
    if not isinstance(doc, dict):
        raise _Problem(f"最外层必须是一个 JSON 对象 {{...}}，收到 {_json_type(doc)}")
    for key in ("format", "version"):
        if key not in doc:
            raise _Problem(f"缺少 {key!r}（这可能不是 toyllm 保存的文件，或者文件被手动删改过）")
    fmt = doc["format"]
    if fmt not in (MODEL_FORMAT, HISTORY_FORMAT):
        raise _Problem(f"\"format\" 必须是 {MODEL_FORMAT!r} 或 {HISTORY_FORMAT!r}，收到 {fmt!r}"
                       "（这可能不是 toyllm 保存的文件）")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise _Problem(f"\"version\" 必须是整数，收到 {version!r}")
    if version > FORMAT_VERSION:
        raise _Problem(f"文件格式版本是 {version}，比这个 toyllm（{_package_version()}）支持的版本 {FORMAT_VERSION} 新；"
                       "请升级 toyllm")
    if version != FORMAT_VERSION:
        raise _Problem(f"不认识的文件格式版本 {version}（支持的版本：{FORMAT_VERSION}）")
    _check_keys(doc, _MODEL_KEYS if fmt == MODEL_FORMAT else _HISTORY_KEYS,
                optional=("history", "delta") if fmt == MODEL_FORMAT else ())
    tv = doc["toyllm_version"]
    if not isinstance(tv, str):
        raise _Problem(f"\"toyllm_version\" 必须是字符串，收到 {tv!r}")
    metadata = doc["metadata"]
    if not isinstance(metadata, dict):
        raise _Problem(f"\"metadata\" 必须是 JSON 对象 {{...}}，收到 {_json_type(metadata)}")
    _check_plain(metadata, "metadata")
    history = doc.get("history")
    if fmt == HISTORY_FORMAT or history is not None:
        history = _check_history(history)
    model = _build_model(doc) if fmt == MODEL_FORMAT else None     # 全部检查通过以后才创建模型
    return Checkpoint(path, fmt, model, history, metadata, tv)


def _build_model(doc):
    cls = doc["class"]
    if cls not in _CLASSES:
        raise _Problem(f"\"class\" 必须是 'TrainableLLM' 或 'ToyLLM'，收到 {cls!r}")
    size = doc["size"]
    if isinstance(size, bool) or not isinstance(size, (int, float)):
        raise _Problem(f"\"size\"（参数量）必须是数，收到 {size!r}")
    size = _finite(size, "\"size\"（参数量）")
    if not size > 0:
        raise _Problem(f"\"size\"（参数量）必须 > 0，收到 {size!r}")
    cot = doc["cot"]
    if not isinstance(cot, bool):
        raise _Problem(f"\"cot\" 必须是 true 或 false，收到 {cot!r}")
    name = doc["name"]
    if not isinstance(name, str):
        raise _Problem(f"\"name\" 必须是字符串，收到 {name!r}")
    if cls == "ToyLLM":
        if "delta" in doc:
            raise _Problem("\"class\" 是 'ToyLLM'（没有 Δ），文件里却有 \"delta\"；要 Δ 请把 \"class\" 改成 'TrainableLLM'")
        return ToyLLM(size, cot=cot, name=name)
    if not cot:
        raise _Problem("TrainableLLM 只支持有思维链的版本，\"cot\" 必须是 true")
    if "delta" not in doc:
        raise _Problem("缺少 \"delta\"（TrainableLLM 每个情境的 Δ）")
    delta = _check_delta(doc["delta"])
    return TrainableLLM(size, delta=delta, name=name)


def _check_delta(delta):
    if not isinstance(delta, dict):
        raise _Problem(f"\"delta\" 必须是 JSON 对象 {{\"情境\": [3 个数]}}，收到 {_json_type(delta)}")
    accepted = "、".join(CONTEXT_STRINGS)
    unknown = [k for k in delta if k not in CONTEXT_STRINGS]
    if unknown:
        raise _Problem(f"\"delta\" 里有未知的情境 {'、'.join(repr(k) for k in unknown)}；情境必须写成"
                       f"\"运算 难度\"（难度一位小数），可以用的是：{accepted}")
    missing = [k for k in CONTEXT_STRINGS if k not in delta]
    if missing:
        raise _Problem(f"\"delta\" 缺少情境 {'、'.join(repr(k) for k in missing)}（12 个情境都要有，Δ 为 0 也要写 [0.0, 0.0, 0.0]）")
    out = {}
    for name, row in delta.items():
        where = f"\"delta\" 里情境 {name!r} 的 Δ"
        if not isinstance(row, list) or len(row) != 3:
            got = f"{len(row)} 个数的列表" if isinstance(row, list) else _json_type(row)
            raise _Problem(f"{where} 必须是 3 个数 [Δ_correct, Δ_bug, Δ_careless]，收到 {got}：{row!r}")
        values = []
        for j, x in enumerate(row):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise _Problem(f"{where} 的第 {j + 1} 个值必须是数，收到 {x!r}")
            values.append(_finite(x, where))
        out[CONTEXT_STRINGS[name]] = values
    return out


def _check_history(history):
    if not isinstance(history, dict):
        raise _Problem(f"\"history\" 必须是 JSON 对象 {{\"列名\": [...]}}，收到 {_json_type(history)}")
    for name, column in history.items():
        if not isinstance(column, list):
            raise _Problem(f"\"history\" 的列 {name!r} 必须是列表 [...]，收到 {_json_type(column)}")
        _check_plain(column, f"\"history\" 的列 {name!r}")
    return history


def _check_plain(value, where):
    """检查 JSON 值里没有溢出成无穷的数（例如 1e999）。"""
    if isinstance(value, float) and not math.isfinite(value):
        raise _Problem(f"{where} 里有超出浮点范围的数（变成了无穷）")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_plain(v, where)
    elif isinstance(value, list):
        for v in value:
            _check_plain(v, where)


def _check_keys(doc, keys, optional):
    missing = [k for k in keys if k not in doc and k not in optional]
    if missing:
        raise _Problem(f"缺少 {'、'.join(repr(k) for k in missing)}（文件可能被截断了或被手动删改过）")
    extra = [k for k in doc if k not in keys]
    if extra:
        raise _Problem(f"有不认识的项 {'、'.join(repr(k) for k in extra)}；可以有的项是 {'、'.join(keys)}"
                       "（是不是拼错了？）")


def _finite(x, where):
    try:
        x = float(x)
    except OverflowError:
        raise _Problem(f"{where} 里的数太大，超出了浮点数的范围") from None
    if not math.isfinite(x):
        raise _Problem(f"{where} 里有 NaN 或无穷，必须是有限的数")
    return x


def _reject_constant(name):
    raise _Problem(f"文件里有 {name}；模型文件里的数必须是有限的数（标准 JSON 也没有 NaN / Infinity）")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Problem(f"键 {k!r} 出现了两次（手动修改时复制多了？）")
        out[k] = v
    return out


def _json_type(value):
    return {dict: "对象 {...}", list: "列表 [...]", str: "字符串", bool: "true/false", int: "整数",
            float: "小数", type(None): "null"}.get(type(value), type(value).__name__) + f" {value!r}"[:80]


__all__ = ["CONTEXT_STRINGS", "Checkpoint", "CheckpointError", "FORMAT_VERSION", "HISTORY_FORMAT", "MODEL_FORMAT",
           "context_string", "load_history", "load_model", "read_checkpoint", "save_history", "save_model"]
