"""
小 transformer 换成 Hugging Face 的模型：GPT2LMHeadModel 加一个逐字符的分词器，存进一个文件夹（第 6 讲 8.11 节）。

【思路】tinylm 的网络和 GPT-2 是同一种结构：pre-LayerNorm、学到的位置表、Q K V 合在一个矩阵里、ReLU 的 MLP、
    单独的输出头（不和嵌入共用）。所以权重一个一个抄过去就行：GPT-2 的 Conv1D 和 numpy 一样算 x @ W，
    不用转置；tinylm 没有的偏置（注意力的 Q K V 和输出）写 0；输出头是 torch 的 Linear，要转置。
    分词器是 tokenizers 的 WordLevel：字表 VOCAB 里每个字一个号（和 tinylm 的编号相同），每个字单独切开，
    解码时直接拼起来；结束符 "$" 同时是 eos 和 pad。
    反过来，from_hf 把（make trl 训练过的）文件夹读回 TinyLM：只用 safetensors 的 numpy 接口，不用 torch。
【边界】torch、transformers 只在 toyllm.peers 里、调用时才导入（学生的安装里没有它们）；没装时报中文的 ImportError，
    说出 make trl 会装。文件夹里不是这样导出的模型时报带文件夹名的 ValueError。
"""

import json
from pathlib import Path

import numpy as np

from ..tinylm.model import TinyLM, check_model
from ..tinylm.text import END, VOCAB

_NEEDS = "需要 torch 和 transformers（make trl 或 make test-peers 把它们装进 .venv-peers；见 tools/peers-requirements.txt）"


def need_torch():
    """导入 torch 和 transformers；没装时报中文的 ImportError。返回 (torch, transformers)。"""
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportError(f"{_NEEDS}：{e}") from None
    return torch, transformers


def char_tokenizer():
    """
    toy 的字表 VOCAB 上的逐字符分词器（transformers 的 PreTrainedTokenizerFast）。

    【返回】分词器：encode("12+") → [1, 2, 10]（和 tinylm.encode 相同）；decode 把字直接拼起来；eos = pad = "$"
    【边界】字表之外的字符编码成不存在的号会出错，所以先用 tinylm.encode 检查（run_trl 的题都在字表里）。
    """
    _, transformers = need_torch()
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    tok = Tokenizer(models.WordLevel({ch: i for i, ch in enumerate(VOCAB)}, unk_token=END))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=END, pad_token=END,
                                                padding_side="left", model_max_length=10 ** 6)


def _names(model):
    """tinylm 的参数名 → GPT-2 的参数名（输出头要转置：torch 的 Linear 存的是 W 的转置）。"""
    out = {"tok": "transformer.wte.weight", "pos": "transformer.wpe.weight", "lnf.g": "transformer.ln_f.weight",
           "lnf.b": "transformer.ln_f.bias", "head": "lm_head.weight"}
    for i in range(model.layers):
        s, h = f"l{i}.", f"transformer.h.{i}."
        out.update({s + a: h + b for a, b in (
            ("ln1.g", "ln_1.weight"), ("ln1.b", "ln_1.bias"), ("attn.wqkv", "attn.c_attn.weight"),
            ("attn.wo", "attn.c_proj.weight"), ("ln2.g", "ln_2.weight"), ("ln2.b", "ln_2.bias"),
            ("mlp.w1", "mlp.c_fc.weight"), ("mlp.b1", "mlp.c_fc.bias"), ("mlp.w2", "mlp.c_proj.weight"),
            ("mlp.b2", "mlp.c_proj.bias"))})
    return out


def _weights(model):
    """GPT-2 的参数 {名字: float32 数组}：tinylm 的参数，加上 tinylm 没有的注意力偏置（0）。"""
    out = {h: (model.params[k].T if k == "head" else model.params[k]) for k, h in _names(model).items()}
    for i in range(model.layers):
        out[f"transformer.h.{i}.attn.c_attn.bias"] = np.zeros(3 * model.d)
        out[f"transformer.h.{i}.attn.c_proj.bias"] = np.zeros(model.d)
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def to_hf(model, folder=None):
    """
    把 TinyLM 换成 transformers 的 GPT2LMHeadModel（float32、dropout 全为 0），给了 folder 就连同分词器存进去。

    【参数】model：TinyLM；folder：文件夹（None：只在内存里）
    【返回】(hf_model, tokenizer)
    【例子】hf, tok = to_hf(tinylm.pretrained(), "out/base")；然后 GPT2LMHeadModel.from_pretrained("out/base")
    """
    check_model(model)
    torch, transformers = need_torch()
    from tokenizers import Tokenizer  # noqa: F401  （transformers 的依赖；分词器要它）
    end = VOCAB.index(END)
    config = transformers.GPT2Config(
        vocab_size=len(VOCAB), n_positions=model.context, n_embd=model.d, n_layer=model.layers, n_head=model.heads,
        n_inner=4 * model.d, activation_function="relu", layer_norm_epsilon=1e-5, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, tie_word_embeddings=False, bos_token_id=end, eos_token_id=end, pad_token_id=end)
    hf = transformers.GPT2LMHeadModel(config).to(torch.float32)
    state = {k: torch.from_numpy(v) for k, v in _weights(model).items()}
    missing, unexpected = hf.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("attn.bias") and not k.endswith("masked_bias")]
    if missing or unexpected:
        raise RuntimeError(f"GPT-2 的参数对不上：缺 {missing}，多 {unexpected}")
    hf.eval()
    tok = char_tokenizer()
    if folder is not None:
        folder = Path(folder)
        hf.save_pretrained(folder)
        tok.save_pretrained(folder)
        hf.config._name_or_path = str(folder)
    return hf, tok


def from_hf(folder):
    """
    to_hf 存的文件夹（或 make trl 训练后存的同样的文件夹）读回 TinyLM，用课程自己的工具评估。只用 numpy，不要 torch。

    【参数】folder：有 config.json 和 model.safetensors 的文件夹
    【返回】TinyLM（float32）
    【边界】文件夹里不是 GPT-2、结构不是 tinylm 能表示的（有注意力偏置、激活不是 ReLU……）时报带文件夹名的 ValueError。
    """
    from safetensors.numpy import load_file
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tensors = load_file(folder / "model.safetensors")
    except (OSError, ValueError) as e:
        raise ValueError(f"{folder} 不是 to_hf 存的模型文件夹（要有 config.json 和 model.safetensors）：{e}") from None
    if config.get("model_type") != "gpt2" or config.get("activation_function") != "relu" or \
            config.get("vocab_size") != len(VOCAB):
        raise ValueError(f"{folder} 里的模型不是 to_hf 导出的 GPT-2（要 model_type=gpt2、activation_function=relu、"
                         f"vocab_size={len(VOCAB)}），收到 {config.get('model_type')!r}、"
                         f"{config.get('activation_function')!r}、{config.get('vocab_size')!r}")
    model = TinyLM(d=config["n_embd"], heads=config["n_head"], layers=config["n_layer"], context=config["n_positions"])
    for name, value in _weights(model).items():
        got = tensors.get(name, tensors.get(name.removeprefix("transformer.")))
        if got is None or got.shape != value.shape:
            raise ValueError(f"{folder} 里缺参数 {name} 或形状不对（要 {value.shape}）")
        if name.endswith(("c_attn.bias", "attn.c_proj.bias")) and np.abs(got).max() > 0:
            raise ValueError(f"{folder} 的 {name} 不是 0：tinylm 的注意力没有偏置，读回来会丢掉它")
    for key, name in _names(model).items():
        got = tensors.get(name, tensors.get(name.removeprefix("transformer.")))
        model.params[key] = (got.T if key == "head" else got).astype(np.float32).copy()
    return model


def fix_positions(hf_model):
    """
    给 GPT-2 装一个前向的预处理钩子：没给 position_ids 时按 attention_mask 算（左边补齐的位置不占号）。

    【思路】TRL 把长短不一的题面在左边补齐；它算 log π 的那次前向不给 GPT-2 position_ids[S560]，GPT-2 就从 0 开始
        数位置（补齐的字也占号），题面短的那些行每个字的位置都错了，log π 差到十几 nats。位置 = attention_mask 的
        累加和 − 1（补齐的位置记 0），带 KV 缓存生成时只取最后几列。已经给了 position_ids 时不动。
    【返回】钩子的 handle（handle.remove() 拆掉）
    """
    torch, _ = need_torch()

    def hook(module, args, kwargs):
        mask = kwargs.get("attention_mask")
        ids = kwargs.get("input_ids", args[0] if args else None)
        if kwargs.get("position_ids") is None and mask is not None and ids is not None:
            pos = (mask.long().cumsum(-1) - 1).clamp(min=0)
            kwargs["position_ids"] = pos[:, -ids.shape[1]:]
        return args, kwargs
    return hf_model.register_forward_pre_hook(hook, with_kwargs=True)


__all__ = ["char_tokenizer", "fix_positions", "from_hf", "need_torch", "to_hf"]
