"""
一个很小的 numpy transformer：从玩具到真网络（第 6 讲 §10.3「从玩具到真网络」，notebook 08）。

【思路】玩具模型只有 12 × 3 个参数，每个量都能精确算出。这里换成一个真正的语言模型：
        2 层、d = 64、4 个头、ReLU MLP 的 pre-LayerNorm 因果 transformer（约 10 万个参数），
        逐字符读写算式，例如 "12+35=" → "47$"（$ 是结束符）。只用 numpy，float32。一个文件一件事：
            text.py      题目怎样写成文字（字表、数的写法、Example）
            layers.py    各层：每一层的前向旁边就是它的反向
            model.py     模型、带 KV 缓存的生成（采样、贪心解码）
            policy.py    网络的策略接口：RL 循环（toyllm.rl.loop，和玩具同一个）要的采样、log π 和反向
            train.py     SFT，和 RL 的入口 rl_train（损失的每一块都来自 toyllm.rl.losses，和玩具用同一批函数）
            analysis.py  准确率、pass@k，网络在玩具的多步题上错在哪里
            pretraining.py 仓库里带的三种大小的预训练网络（safetensors 权重 + 清单），和训练它们的配方
    这里的名字都可以直接用：from toyllm import tinylm; tinylm.sft(...)，或 from toyllm.tinylm import TinyLM。
【边界】字表之外的字符、d 不能被头数整除、空数据、放不进上下文的题，都在入口报中文的 ValueError。
"""

from ..blas import one_blas_thread
from ..logits import log_softmax
from ..optim import Adam
from .analysis import accuracy, pass_at_k_curve, step_error_table, step_errors
from .layers import attention, attention_backward, backward, forward, layer_norm, layer_norm_backward, mlp, mlp_backward
from .model import TinyLM, generate, greedy
from .pretraining import PRETRAINED, load_weights, manifest, pretrained, save_weights
from .text import (END, OP_CHARS, VOCAB, WIDTH, Example, addition_examples, answer_of, decode, encode, problem_example,
                   read_number, step_values, write_number)
from .policy import batch_tokens, dlogits_from_dlogp, token_logprobs
from .train import RL_COLUMNS, TINY_DEFAULTS, rl_loss_grad, rl_train, sft, tiny_config

__all__ = ["Adam", "END", "Example", "OP_CHARS", "PRETRAINED", "RL_COLUMNS", "TINY_DEFAULTS", "TinyLM",
           "VOCAB", "accuracy", "addition_examples", "answer_of", "attention", "attention_backward", "backward",
           "batch_tokens", "decode", "dlogits_from_dlogp", "encode", "forward", "generate", "greedy", "layer_norm",
           "layer_norm_backward", "load_weights", "log_softmax", "manifest", "mlp", "mlp_backward", "one_blas_thread", "pass_at_k_curve", "pretrained",
           "problem_example", "read_number", "rl_loss_grad", "rl_train", "save_weights", "sft", "step_error_table",
           "step_errors", "step_values", "tiny_config", "token_logprobs", "WIDTH", "write_number"]
