"""
同一个实验放到真的训练框架上：课程的预训练网络由 TRL 的 GRPOTrainer 训练[S154]，一条命令（第 6 讲 8.11 节）。

【思路】run_trl(预设, 步数) 做五件事：
        1. 配置：tinylm.tiny_config(预设)（Adam、lr = 3e-4、每次 16 道题 × 8 份），to_trl 换成 GRPOConfig 的参数[S531]；
           没有对应的选项要写进 ignore，开始时打印忽略了哪些；max_completion_length = 上下文 25 − 最长的题面。
        2. 模型：hf.to_hf 把预训练网络存成文件夹，再从文件夹读成 GPT2LMHeadModel。TRL 在 β > 0 时按
           config._name_or_path 重新读一份参考模型[S561]，只在内存里的模型没有这个名字；装上 hf.fix_positions 的钩子
           （TRL 算 log π 时不给 position_ids[S560]）。
        3. 奖励：最终答案对不对。TRL 解码解答时去掉特殊字（"$" 是 eos）[S562]，answer_of 认不出写完了：
           所以奖励从 completion_ids 自己解码。
        4. 训练：GRPOTrainer.train()，CPU；每一步的奖励、损失、KL、熵、裁剪比例记下来。
        5. 对照：同一个预设、同一个种子在 numpy 上跑 tinylm.rl_train，两条曲线逐次迭代并排打印；训练好的文件夹
           用 hf.from_hf 读回 tinylm，用课程自己的 accuracy 量留出题。两边的曲线只在分布上一致：torch 用自己的
           随机数发生器采样，CPU 的算子在不同机器上也不逐位相同。
    多卡：accelerate launch --num_processes N -m toyllm.peers.trl ...，每卡的批大小自动除以 N。
【边界】torch / transformers / trl 只在这里导入，没装时报中文的 ImportError（make trl 会装）。
"""

import argparse
import json
import math
import os
import random
import sys
import time
import warnings
from pathlib import Path

from .._checks import as_choice, as_int
from ..arithmetic import make_problem_set
from ..tinylm import accuracy, answer_of, decode, pretrained, problem_example, rl_train, tiny_config
from ..tinylm.pretraining import PRETRAINED, heldout_problems
from .convert import to_trl
from .hf import fix_positions, from_hf, need_torch, to_hf

PRESETS = ("grpo", "dr_grpo", "ppo", "ppo_dual_clip", "gspo", "sapo", "cispo", "dapo")
"""run_trl 跑得了的预设（dapo 要 ignore=("dynamic_sampling", "gen_batch_scale")）。"""
PROBLEMS = {"seed": 3, "count": 2000, "min_steps": 1, "max_steps": 2}
"""RL 的训练题：notebook 09 的那一批（1~2 步题，写成思维链）。"""
COLUMNS = {"reward": ("reward", "reward"), "loss": ("loss", "loss"), "kl": ("kl", "kl_est"),
           "entropy": ("entropy", "entropy"), "clip_low": ("clip_ratio/low_mean", "clip_low"),
           "clip_high": ("clip_ratio/high_mean", "clip_high"), "zero_std": ("frac_reward_zero_std", "zero_std")}
"""打印的列：{列名: (GRPOTrainer 记录的名字[S565], tinylm.rl_train 的 History 的列)}。"""


def training_examples():
    """PROBLEMS 的题写成 tinylm 的 Example（个位在前的思维链）。"""
    rng = random.Random(PROBLEMS["seed"])
    return [problem_example(p) for p in make_problem_set(rng, PROBLEMS["count"], PROBLEMS["min_steps"], PROBLEMS["max_steps"])]


def reward(completion_ids, answer, **kwargs):
    """
    GRPOTrainer 的奖励函数：从 completion_ids 自己解码（它给的 completions 去掉了 "$"[S562]），最终答案对就是 1，否则 0。

    【参数】completion_ids：每份解答的字号（到 eos 为止）；answer：数据集的 answer 列（正确答案）
    【返回】list of float
    """
    return [float(answer_of(decode(ids), True) == a) for ids, a in zip(completion_ids, answer)]


def trl_settings(preset="grpo", steps=20, ignore=(), seed=0, world=1, context=25, **overrides):
    """
    run_trl 用的两份配置：(cfg, kwargs)。cfg 是 tiny_config(preset, iterations=steps, seed=seed, **overrides)
    （numpy 那边的 rl_train 用它）；kwargs 是 GRPOConfig 的参数：to_trl(cfg, ignore, max_completion_length)，
    每卡的批大小除以进程数 world。

    【边界】preset 不在 PRESETS、steps < 1、optimizer 不是 adam（玩具的 SGD、lr = 2 一步就毁掉网络）、
        每卡的批大小除不尽时报中文的 ValueError；没有对应的选项照 to_trl 报错，写明要 ignore 哪些。
    """
    preset = as_choice("preset", preset, PRESETS)
    cfg = tiny_config(preset, iterations=as_int("steps", steps, low=1), seed=as_int("seed", seed, low=0), **overrides)
    if cfg.optimizer != "adam" or cfg.reward != "outcome":           # 和 tinylm.rl_train 同样的要求
        raise ValueError(f"optimizer 在小 transformer 上必须是 'adam'、reward 必须是 'outcome'，收到 {cfg.optimizer!r}、"
                         f"{cfg.reward!r}：玩具的 SGD 配 lr = 2 一步就毁掉网络，tiny_config 给的是 Adam、lr = 3e-4")
    longest = max(len(e.prompt) for e in training_examples())
    kwargs = to_trl(cfg, ignore=ignore, max_completion_length=context - longest)
    world = as_int("world（进程数）", world, low=1)
    per_device, rest = divmod(kwargs["per_device_train_batch_size"], world)
    if rest or per_device < 1:
        raise ValueError(f"每步 {kwargs['per_device_train_batch_size']} 份解答（batch_problems × group_size）分不到 "
                         f"{world} 个进程上：进程数要能整除它，收到 world = {world}")
    return cfg, {**kwargs, "per_device_train_batch_size": per_device}


def _by_iteration(logs, mu, steps):
    """GRPOTrainer 每个优化器步一条记录 → 每次迭代一行（μ 步的平均；奖励等只在生成那一步记）。"""
    rows = []
    for it in range(1, steps + 1):
        mine = [log for log in logs if (log["step"] - 1) // mu + 1 == it]
        row = {"iteration": it}
        for col, (name, _) in COLUMNS.items():
            vals = [log[name] for log in mine if name in log and log[name] is not None]
            row[col] = float(sum(vals) / len(vals)) if vals else None          # 没记（β = 0 时的 KL）：JSON 的 null
        rows.append(row)
    return rows


def _notes(cfg):
    """GRPOTrainer 的记录和 toy 的记录意思不同的地方[S564][S565]。"""
    notes = []
    if cfg.scale_rewards == "batch":
        notes.append("zero_std：TRL 的 frac_reward_zero_std 在 scale_rewards=\"batch\" 时看整批奖励的标准差，"
                     "整批都一样才是 1；toy 数的是奖励全相同的组占几成")
    if cfg.beta == 0:
        notes.append("kl：β = 0 时 TRL 不算参考模型，不记 KL（NaN）；numpy 那边记的是采样时的 k3 估计")
    if cfg.policy_loss in ("sapo", "cispo"):
        notes.append(f"clip：{cfg.policy_loss} 在 TRL 里不记 clip_ratio/low_mean、high_mean（cispo 记 cispo_clip_ratio），这两列是 NaN")
    if cfg.policy_loss == "gspo" or cfg.is_level == "sequence":
        notes.append("clip：序列级的比率，TRL 数的是被裁的解答 / 解答数，toy 的 gspo 数的是这些解答里的步 / 全部的步")
    return notes


def build_trainer(folder, kwargs, prompts, answers, seed=0):
    """
    GRPOTrainer：模型从 folder / "start"（to_hf 存的）读，奖励是 reward，数据是 prompts 和 answers，参数是 kwargs
    （trl_settings 的结果）；模型和参考模型都装上 fix_positions。返回 (trainer, records)：records 收集每一步的记录。
    """
    torch, transformers = need_torch()
    import datasets
    import trl
    torch.manual_seed(seed)
    hf = transformers.GPT2LMHeadModel.from_pretrained(Path(folder) / "start")
    for name, p in hf.named_parameters():           # tinylm 的注意力没有偏置：它们留在 0，训练完才能读回 tinylm
        if name.endswith(("attn.c_attn.bias", "attn.c_proj.bias")):
            p.requires_grad_(False)
    tok = transformers.AutoTokenizer.from_pretrained(Path(folder) / "start")
    records = []

    class Record(transformers.TrainerCallback):
        def on_log(self, args, st, control, logs=None, **kw):
            records.append({"step": st.global_step, **(logs or {})})

    args = trl.GRPOConfig(output_dir=str(folder), report_to="none", use_cpu=not torch.cuda.is_available(), bf16=False,
                          logging_steps=1,
                          save_strategy="no", disable_tqdm=True, **kwargs)
    data = datasets.Dataset.from_dict({"prompt": list(prompts), "answer": list(answers)})
    trainer = trl.GRPOTrainer(model=hf, reward_funcs=reward, args=args, train_dataset=data, processing_class=tok,
                              callbacks=[Record()])
    trainer.remove_callback(transformers.PrinterCallback)          # 每一步的记录由 run_trl 自己排成表
    for m in (trainer.model, trainer.ref_model):
        if m is not None:
            fix_positions(trainer.accelerator.unwrap_model(m))
    return trainer, records


def run_trl(preset="grpo", steps=20, model="base", *, ignore=(), seed=0, output_dir=None, compare=True, record=None,
            echo=print, **overrides):
    """
    用 GRPOTrainer 在 CPU 上训练课程的预训练网络，和 numpy 上同一个预设、同一个种子的 rl_train 并排比较。

    【参数】preset：PRESETS 之一；steps：迭代次数（GRPOConfig 的 max_steps = steps × μ[S531]）；model：预训练网络的名字
        （"small"、"base"、"large"）；ignore：TRL 没有对应、确实不要的选项（dapo 要 ("dynamic_sampling",
        "gen_batch_scale")；max_draws、on_short 跟着 dynamic_sampling 不起作用）；seed：两边的种子（TRL 的 GRPOConfig.seed、torch.manual_seed，numpy 的
        RLConfig.seed）；output_dir：文件夹（默认 out/trl-<预设>；start/ 是导出的起点，final/ 是训练完的）；
        compare：是否也跑 numpy 那边；record：给了路径就把配方、版本、两条曲线和用时写成 JSON（讲义的图读它）；
        echo：打印用的函数；overrides：改 tiny_config 的选项（lr=1e-4……）
    【返回】dict：recipe、versions、trl（每次迭代一行）、numpy、seconds、greedy（留出题贪心准确率：起点、TRL、numpy）
    【边界】见 trl_settings；多进程时（accelerate launch）只有主进程打印、跑 numpy、写 record。
    【例子】run_trl("grpo", 20)；run_trl("dapo", 5, ignore=("dynamic_sampling", "gen_batch_scale"))
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch, transformers = need_torch()
    transformers.utils.logging.disable_progress_bar()
    from accelerate import PartialState

    model = as_choice("model", model, PRETRAINED)
    state = PartialState(cpu=not torch.cuda.is_available())       # 没有 GPU 时几个进程在 CPU 上（gloo）
    if not torch.cuda.is_available():          # 和 numpy 那边一样一个线程：这么小的网络多线程不快，机器一忙反而慢好几倍
        torch.set_num_threads(1)
    cfg, kwargs = trl_settings(preset, steps, ignore, seed, state.num_processes, **overrides)
    out = Path(output_dir or Path("out") / f"trl-{preset}")
    say = echo if state.is_main_process else (lambda *a, **k: None)
    say(f">>> TRL GRPOTrainer：预设 {preset}，{steps} 次迭代（{kwargs['max_steps']} 个优化器步），网络 {model}，种子 {seed}，"
        f"{state.num_processes} 个进程")
    if ignore:
        say("    忽略（TRL 没有对应，按 TRL 自己的做法）：" + "、".join(f"{o}={getattr(cfg, o)!r}" for o in ignore))
    say("    GRPOConfig：" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()))
    examples, start_net = training_examples(), pretrained(model)
    with state.main_process_first():
        if state.is_main_process:
            to_hf(start_net, out / "start")
    trainer, records = build_trainer(out, kwargs, [e.prompt for e in examples], [e.answer for e in examples], seed)
    t0 = time.perf_counter()
    trainer.train()
    seconds = {"trl": time.perf_counter() - t0}
    trainer.save_model(str(out / "final"))
    if not state.is_main_process:
        return None
    heldout = [problem_example(p) for p in heldout_problems()[:200]]
    result = {"recipe": {"preset": preset, "steps": steps, "model": model, "seed": seed, "ignore": list(ignore),
                         "overrides": overrides, "problems": PROBLEMS, "grpo_config": kwargs},
              "versions": {p: __import__(p).__version__ for p in ("torch", "transformers", "trl")},
              "trl": _by_iteration(records, cfg.mu, steps), "seconds": seconds,
              "greedy": {"start": accuracy(start_net, heldout), "trl": accuracy(from_hf(out / "final"), heldout)}}
    if compare:
        net = pretrained(model)
        t0 = time.perf_counter()
        hist = rl_train(net, examples, cfg)
        seconds["numpy"] = time.perf_counter() - t0
        result["numpy"] = [{"iteration": int(hist["iteration"][i]), **{c: float(hist[n][i]) for c, (_, n) in COLUMNS.items()}}
                           for i in range(hist.n_rows)]
        result["greedy"]["numpy"] = accuracy(net, heldout)
    _print(result, cfg, say)
    if record is not None:
        Path(record).parent.mkdir(parents=True, exist_ok=True)
        Path(record).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        say(f"    记录写在 {record}")
    return result


def _num(x):
    return math.nan if x is None else x


def _print(result, cfg, say):
    """两条曲线逐次迭代并排（GRPOTrainer / numpy），再打印用时和留出题的贪心准确率。"""
    numpy_rows = result.get("numpy") or [{}] * len(result["trl"])
    say("迭代  " + "  ".join(f"{c:>17}" for c in COLUMNS) + "\n      " + "  ".join(f"{'TRL / numpy':>17}" for _ in COLUMNS))
    for a, b in zip(result["trl"], numpy_rows):
        say(f"{a['iteration']:4d}  " + "  ".join(f"{_num(a[c]):8.4f}/{_num(b.get(c)):8.4f}" for c in COLUMNS))
    for note in _notes(cfg):
        say("    注：" + note)
    say("    两边只在分布上一致：TRL 用 torch 的随机数发生器采样、选题，CPU 的算子在不同机器上也不逐位相同。")
    s, g = result["seconds"], result["greedy"]
    say(f"    用时：TRL {s['trl']:.1f} s" + (f"，numpy {s['numpy']:.1f} s" if "numpy" in s else ""))
    say("    留出题（前 200 道）贪心准确率：" + "，".join(f"{k} {v:.3f}" for k, v in g.items()))


def main(argv=None):
    """python -m toyllm.peers.trl --preset grpo --steps 20 [--ignore a,b] [--set lr=1e-4] [--record 路径]"""
    p = argparse.ArgumentParser(prog="python -m toyllm.peers.trl", description="用 TRL 的 GRPOTrainer 训练课程的网络，和 numpy 并排比较")
    p.add_argument("--preset", default="grpo", help="、".join(PRESETS))
    p.add_argument("--steps", type=int, default=20, help="迭代次数")
    p.add_argument("--model", default="base", help="、".join(PRETRAINED))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ignore", default="", help="逗号分开的选项名（TRL 没有对应、确实不要的）")
    p.add_argument("--set", action="append", default=[], metavar="选项=值", help="改 tiny_config 的选项，例如 lr=1e-4")
    p.add_argument("--output-dir", default=None)
    p.add_argument("--record", default=None, help="把配方、版本、两条曲线和用时写成 JSON")
    p.add_argument("--no-compare", action="store_true", help="不跑 numpy 那边")
    a = p.parse_args(argv)
    overrides = {}
    for item in a.set:
        key, sep, value = item.partition("=")
        if not sep:
            p.error(f"--set 要写成 选项=值，收到 {item!r}")
        try:
            overrides[key] = json.loads(value)
        except ValueError:
            overrides[key] = value
    ignore = tuple(x for x in a.ignore.split(",") if x)
    warnings.filterwarnings("ignore", category=FutureWarning)      # transformers 5 的改名提示，和这个实验无关
    run_trl(a.preset, a.steps, a.model, ignore=ignore, seed=a.seed, output_dir=a.output_dir, record=a.record,
            compare=not a.no_compare, **overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
