"""
保存和读取玩具的可训练模型（TrainableLLM），用和小 transformer 一样的格式（toyllm.saving）：Δ 表是 safetensors 文件里
一个 (12, 3) 的数组，训练记录是旁边的 .history.json。维护者的工具（tools/train_cli.py --save 用它），不在学生的包里：
notebook 里的训练几秒钟就跑完，不用存。

【用法】把旧版（JSON）的模型文件转换成新格式：
    python tools/checkpoint.py 旧.json 新.safetensors
    旧文件是 {"format": "toyllm-model", "version": 1, "class": "TrainableLLM", "size", "name", "delta": {"add 0.0": [3 个数], …},
    "metadata": {...}, "history": {...}}；转换后 Δ 逐位相同，训练记录和 metadata 在 新.history.json 里。
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # python tools/checkpoint.py 时也能 import toyllm

from toyllm._checks import as_path  # noqa: E402
from toyllm.arithmetic import CONTEXTS  # noqa: E402
from toyllm.saving import bad_file, check_shapes, load_arrays, load_history, save_arrays  # noqa: E402
from toyllm.trainable import TrainableLLM  # noqa: E402

FORMAT = "toyllm-trainable"
"""文件头里的 "format"。"""
CONTEXT_STRINGS = {f"{op} {h:.1f}": (op, h) for op, h in CONTEXTS}
"""旧版 JSON 文件里 12 个情境的写法 → 情境，例如 "mul 2.2" → ("mul", 2.2)。"""


def save_model(model, path, history=None, metadata=None):
    """
    把 TrainableLLM 原子地存成 safetensors 文件（可选：训练记录存在旁边的 .history.json），返回文件的 sha256。

    【参数】history：rl.train 返回的 History，或 {列名: list}；metadata：{str: JSON 值}（不给时用 history.meta）
    【边界】Δ 里有 NaN / 无穷时报 ValueError，什么也不写。
    【例子】save_model(model, "grpo_1B.safetensors", history=hist); load_model("grpo_1B.safetensors")
    """
    if not isinstance(model, TrainableLLM):
        raise TypeError(f"model 必须是 TrainableLLM，收到 {type(model).__name__}")
    return save_arrays(path, {"delta": model.params},
                       {"format": FORMAT, "size": repr(float(model.size)), "name": str(model.name)}, history, metadata)


def load_model(path):
    """读回 save_model 存的 TrainableLLM（Δ 逐位相同）；坏文件报带文件名的 ValueError。【例子】load_model("m.safetensors")"""
    tensors, header = load_arrays(path, FORMAT)
    try:
        model = TrainableLLM(float(header["size"]), name=header["name"])
    except (KeyError, TypeError, ValueError):
        raise bad_file(path, f"的文件头里模型的设置不对：size 要是 > 0 的数、name 要是字符串，收到 size = "
                             f"{header.get('size')!r}、name = {header.get('name')!r}") from None
    check_shapes(path, tensors, {"delta": model.params})
    model.params[...] = tensors["delta"]
    return model


def convert(old, new):
    """把旧版 JSON 模型文件 old 转换成新格式 new（.safetensors 和 .history.json）。返回新模型。"""
    old, new = as_path("old", old), as_path("new", new)
    try:
        doc = json.loads(Path(old).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"旧的模型文件 {old} 不存在") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{old} 不是完整的 JSON 文件：{e}") from None
    if not isinstance(doc, dict) or doc.get("format") != "toyllm-model" or doc.get("class") != "TrainableLLM":
        raise ValueError(f"{old} 不是旧版 toyllm 的 TrainableLLM 模型文件（'format' 应该是 'toyllm-model'，"
                         f"'class' 应该是 'TrainableLLM'）")
    unknown = sorted(set(doc.get("delta", {})) - set(CONTEXT_STRINGS))
    if unknown:
        raise ValueError(f"{old} 的 'delta' 里有不认识的情境 {unknown}；可以用的是：{'、'.join(CONTEXT_STRINGS)}")
    model = TrainableLLM(float(doc["size"]), name=doc["name"],
                         delta={CONTEXT_STRINGS[k]: np.asarray(v, dtype=float) for k, v in doc["delta"].items()})
    save_model(model, new, history=doc.get("history", {}), metadata=doc.get("metadata", {}))
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python tools/checkpoint.py",
                                     description="把旧版（JSON）的模型文件转换成 safetensors + .history.json")
    parser.add_argument("old", help="旧版的 JSON 模型文件")
    parser.add_argument("new", help="新文件（.safetensors；训练记录写在旁边的 .history.json）")
    args = parser.parse_args(argv)
    convert(args.old, args.new)
    print(f"已转换：{args.new}（训练记录在 {Path(args.new).stem}.history.json）")
    return 0


__all__ = ["CONTEXT_STRINGS", "FORMAT", "convert", "load_history", "load_model", "save_model"]

if __name__ == "__main__":
    sys.exit(main())
