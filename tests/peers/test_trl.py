"""
真的 TRL（make test-peers 的 .venv-peers）：课程的网络导出成 GPT-2、GRPOTrainer 训练它，损失和讲义的 rl_objective 一样（issue 39）。

【核对什么】
    · 导出：logits 和 numpy 的网络差 < 1e-4，留出题上贪心解码逐字相同，存的文件夹读回 tinylm 逐位相同；
    · 同一个目标：一批固定的数据（比率 0.3–5、长短不一、有奖励全相同的组、float64、两边同一个 L_max）交给 TRL 的
      _compute_loss 和 rl_objective，每个预设的损失和 ∂loss/∂log π 相差 < 1e-6；
    · 每个预设真的用 GRPOTrainer 训练 2 次迭代，记录都是有限的数、奖励不是 0；
    · issue 39 的五个绕行（requests、参考模型要从文件夹读、奖励要自己解码、位置编号、max_completion_length）各有一个测试。
没有装 torch / TRL 时整个文件跳过（make test 的 .venv 里就是这样）。
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from toyllm import tinylm as tl  # noqa: E402
from toyllm.peers import trl as runner  # noqa: E402
from toyllm.peers.hf import fix_positions, from_hf, to_hf  # noqa: E402
from toyllm.rl.losses import group_advantages  # noqa: E402
from toyllm.rl.objective import rl_objective  # noqa: E402
from toyllm.tinylm.pretraining import heldout_problems  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning", "ignore::UserWarning")
ROOT = Path(__file__).resolve().parents[2]
IGNORE = {"dapo": ("dynamic_sampling", "gen_batch_scale")}
SMALL = {"batch_problems": 4}          # 测试里每步 4 道题 × 8 份，省时间


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """base 网络导出到 <tmp>/start（GRPOTrainer 从这里读）。"""
    folder = tmp_path_factory.mktemp("trl")
    net = tl.pretrained()
    to_hf(net, folder / "start")
    return folder, net


def test_trl_imports_with_the_pinned_requirements():
    """绕行 1：TRL 导入 requests，却只把它列在 extra 里：peers-requirements.txt 要写上它。"""
    text = (ROOT / "tools" / "peers-requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^requests==\S+$", text, re.M)
    from trl import GRPOTrainer  # noqa: F401


def test_export_gives_the_same_logits_and_the_same_greedy_answers(start):
    folder, net = start
    import transformers
    hf = transformers.GPT2LMHeadModel.from_pretrained(folder / "start")
    tok = transformers.AutoTokenizer.from_pretrained(folder / "start")
    examples = [tl.problem_example(p) for p in heldout_problems()]
    x, _, _ = tl.batch_tokens(net, [e.prompt for e in examples[:200]], [e.target for e in examples[:200]])
    with torch.no_grad():
        got = hf(torch.from_numpy(x)).logits.numpy()
    assert np.abs(got - net.logits(x)).max() < 1e-4
    assert tok("12+3=$")["input_ids"] == list(tl.encode("12+3=$")) and tok.decode(tl.encode("4440;2090$")) == "4440;2090$"
    prompts = [e.prompt for e in examples]                           # 1 步和 2 步的题：左边补齐
    fix_positions(hf)
    enc = tok(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = hf.generate(**enc, max_new_tokens=net.context - enc["input_ids"].shape[1], do_sample=False)
    texts = [tok.decode(o[enc["input_ids"].shape[1]:]) for o in out]
    texts = [t[:t.index("$") + 1] if "$" in t else t for t in texts]
    assert texts == tl.greedy(net, prompts)                          # 留出题的 1,000 道全部相同
    back = from_hf(folder / "start")
    assert all(np.array_equal(back.params[k], net.params[k]) for k in net.params)


def test_from_hf_refuses_a_folder_it_cannot_read(tmp_path):
    with pytest.raises(ValueError, match="不是 to_hf 存的模型文件夹"):
        from_hf(tmp_path)


def _trainer(folder, preset, **overrides):
    cfg, kwargs = runner.trl_settings(preset, 1, IGNORE.get(preset, ()), **{**SMALL, **overrides})
    examples = runner.training_examples()[:64]
    trainer, _ = runner.build_trainer(folder, kwargs, [e.prompt for e in examples], [e.answer for e in examples])
    return cfg, kwargs, trainer


def test_the_scoring_pass_gets_position_ids_from_the_attention_mask(start):
    """绕行 4：长短不一的题面左边补齐，TRL 算 log π 的那次前向不给 position_ids；钩子按 attention_mask 算。
    模型和参考模型（β > 0 的 ppo 预设）都要和 numpy 的网络一样。"""
    folder, net = start
    _, _, trainer = _trainer(folder, "ppo")
    examples = [tl.problem_example(p) for p in heldout_problems()[:16]]
    assert len({len(e.prompt) for e in examples}) > 1
    tok = trainer.processing_class
    prompt = tok([e.prompt for e in examples], return_tensors="pt", padding=True)
    completion = tok([e.target for e in examples], return_tensors="pt", padding=True, padding_side="right")
    ids = torch.cat([prompt["input_ids"], completion["input_ids"]], 1)
    mask = torch.cat([prompt["attention_mask"], completion["attention_mask"]], 1)
    x, y, m = tl.batch_tokens(net, [e.prompt for e in examples], [e.target for e in examples])
    want = tl.token_logprobs(net, x, y)[0]
    cm = completion["attention_mask"].numpy().astype(bool)
    want = np.stack([np.pad(row[mi], (0, cm.shape[1] - mi.sum())) for row, mi in zip(want, m)])
    for model in (trainer.model, trainer.ref_model):
        with torch.no_grad():
            got = trainer._get_per_token_logps_and_entropies(model, ids, mask, completion["input_ids"].shape[1])[0]
        assert np.abs(got.numpy()[cm] - want[cm]).max() < 1e-4


def test_max_completion_length_fits_the_context(start):
    """绕行 5：TRL 默认 512，网络只有 25 个位置；25 − 最长的题面 = 10，一份不写 "$" 的解答也放得下。"""
    folder, net = start
    _, kwargs = runner.trl_settings("grpo", 1)
    longest = max(len(e.prompt) for e in runner.training_examples())
    assert kwargs["max_completion_length"] == net.context - longest == 10
    import transformers
    hf = transformers.GPT2LMHeadModel.from_pretrained(folder / "start")
    prompt = torch.from_numpy(tl.encode("7300*2100+8540="))[None]
    out = hf.generate(prompt, max_new_tokens=kwargs["max_completion_length"], do_sample=False,
                      suppress_tokens=[tl.VOCAB.index("$")])
    assert out.shape[1] == net.context
    with pytest.raises(IndexError):
        hf.generate(prompt, max_new_tokens=512, do_sample=False, suppress_tokens=[tl.VOCAB.index("$")])


def test_the_reward_decodes_completion_ids():
    """绕行 3：TRL 给奖励函数的 completions 去掉了 "$"（eos 是特殊字），answer_of 认为没写完；reward 自己解码 completion_ids。"""
    ids = [list(tl.encode("4440;2090$")), list(tl.encode("4440;2091$")), list(tl.encode("4440;2090"))]
    assert runner.reward(completion_ids=ids, answer=[902, 902, 902], completions=["4440;2090"] * 3) == [1.0, 0.0, 0.0]


def test_network_runs_use_tiny_configs_lr_and_optimizer():
    """to_trl 的第 3 个问题：玩具的 lr = 2 配 SGD 一步就毁掉网络。run_trl 用 tiny_config（Adam、3e-4），拒绝 SGD。"""
    _, kwargs = runner.trl_settings("grpo", 3)
    assert (kwargs["learning_rate"], kwargs["optim"], kwargs["max_steps"]) == (3e-4, "adamw_torch", 3)
    with pytest.raises(ValueError, match="optimizer 在小 transformer 上必须是 'adam'"):
        runner.trl_settings("grpo", 3, optimizer="sgd", lr=2.0)
    with pytest.raises(ValueError, match="preset"):
        runner.trl_settings("rloo", 3)
    with pytest.raises(ValueError, match="分不到 3 个进程上"):
        runner.trl_settings("grpo", 3, world=3)


def _fixed_batch(G=4, groups=4, L=8, seed=0):
    """一批固定的数据：比率 0.3–5（有几份解答比率正好是 1），长度 3–8，第 2、4 组奖励全相同。float64。"""
    rng = np.random.default_rng(seed)
    B = G * groups
    lengths = rng.integers(3, L + 1, B)
    lengths[0] = L
    mask = np.arange(L)[None, :] < lengths[:, None]
    logp = np.log(rng.uniform(0.05, 0.95, (B, L)))
    log_ratio = rng.uniform(math.log(0.3), math.log(5.0), (B, L))
    log_ratio[[1, 6]] = 0.0
    old = logp - log_ratio
    ref = logp + rng.normal(0, 0.3, (B, L))
    rewards = rng.integers(0, 2, B).astype(float)
    rewards[G:2 * G], rewards[3 * G:] = 1.0, 0.0
    return logp, old, ref, mask, rewards


@pytest.mark.parametrize("preset", runner.PRESETS)
def test_trl_loss_and_its_gradient_equal_rl_objective(preset, start):
    """TRL 的 _compute_loss（每个预设的 GRPOConfig = to_trl(tiny_config(预设))）和讲义的 rl_objective：损失和 ∂loss/∂log π < 1e-6。"""
    folder, _ = start
    logp, old, ref, mask, rewards = _fixed_batch()
    L = mask.shape[1]
    cfg, kwargs, trainer = _trainer(folder, preset, group_size=4, context=15 + L)
    assert trainer.max_completion_length == L                         # dr_grpo 的分母：两边同一个 L_max
    adv = group_advantages(rewards, 4, cfg.advantage, cfg.scale_rewards, cfg.std_eps)
    want = rl_objective(logp, old, adv, mask, cfg, ref_logp=ref, max_len=L)
    x = torch.tensor(logp, dtype=torch.float64, requires_grad=True)
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (x, torch.zeros_like(x), None)
    trainer.current_gradient_accumulation_steps = 1
    trainer.model.train()
    m = torch.tensor(mask, dtype=torch.float64)
    inputs = {"prompt_ids": torch.zeros((len(rewards), 1), dtype=torch.long), "prompt_mask": torch.ones((len(rewards), 1)),
              "completion_ids": torch.zeros(mask.shape, dtype=torch.long), "completion_mask": m,
              "advantages": torch.tensor(adv), "old_per_token_logps": torch.tensor(old),
              "ref_per_token_logps": torch.tensor(ref), "num_items_in_batch": m.sum()}
    loss = trainer._compute_loss(trainer.model, inputs)
    (grad,) = torch.autograd.grad(loss, x)
    assert abs(loss.item() - want.loss) < 1e-6, (loss.item(), want.loss)
    assert np.abs(grad.numpy() * mask - want.dloss_dlogp).max() < 1e-6
    assert np.abs(want.dloss_dlogp).max() > 1e-3                      # 梯度不是全 0（比率离 1 很远，还有没被裁掉的）


@pytest.mark.parametrize("preset", runner.PRESETS)
def test_two_real_grpo_trainer_steps_per_preset(preset, tmp_path):
    """每个预设真的训练 2 次迭代：记录都是有限的数，奖励不是 0（绕行 3），β > 0 的 ppo 能建参考模型（绕行 2），
    训练完的文件夹读回 tinylm（注意力的偏置留在 0）。"""
    printed, record = [], tmp_path / "record.json"
    out = runner.run_trl(preset, 2, ignore=IGNORE.get(preset, ()), output_dir=tmp_path, compare=preset == "dapo",
                         record=record, echo=printed.append, **SMALL)
    text = "\n".join(printed)
    assert "TRL / numpy" in text and "只在分布上一致" in text
    if preset == "dapo":                 # 开始时说出忽略了什么；numpy 那边也跑了；记录里有配方和版本
        assert "忽略（TRL 没有对应" in text and "dynamic_sampling=True" in text and "numpy" in out["seconds"]
        rec = json.loads(record.read_text(encoding="utf-8"))
        assert rec["recipe"]["preset"] == "dapo" and rec["versions"]["trl"] == "1.10.0" and len(rec["numpy"]) == 2
    for row in out["trl"]:
        assert all(math.isfinite(row[c]) for c in ("reward", "loss", "entropy", "zero_std")), row
        assert (row["kl"] is None) == (out["recipe"]["grpo_config"]["beta"] == 0) or math.isfinite(row["kl"])
        assert row["reward"] > 0
    assert out["greedy"]["trl"] > 0.5
    assert (out["recipe"]["grpo_config"]["beta"] > 0) == (preset in ("ppo", "ppo_dual_clip"))


def test_the_reference_model_is_read_from_the_exported_folder(start):
    """绕行 2：β > 0 时 TRL 按 config._name_or_path 重新读参考模型；模型从 start/ 读，名字就是这个文件夹。"""
    folder, net = start
    _, _, trainer = _trainer(folder, "ppo")
    assert trainer.ref_model is not None
    assert Path(trainer.ref_model.config._name_or_path) == folder / "start"
    w = trainer.ref_model.transformer.wte.weight.detach().numpy()
    assert np.array_equal(w, net.params["tok"])


def test_accelerate_launch_with_two_cpu_processes(tmp_path):
    """多卡的写法在 CPU 上试（也就是 python -m toyllm.peers.trl 的命令行）：两个进程（torchrun + gloo），每个进程的批大小减半，
    只有主进程打印。
    accelerate 1.16 的 --cpu 配 --num_processes 2 要 MPI（mpirun 的 hostfile），没有时只起一个进程；没有 GPU 的机器上
    --multi_gpu 起两个进程，run_trl 的 PartialState(cpu=True) 让它们在 CPU 上。"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    launcher = Path(sys.executable).with_name("accelerate")
    out = subprocess.run([str(launcher), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
                          "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "toyllm.peers.trl",
                          "--preset", "grpo", "--steps", "1", "--no-compare", "--set", "batch_problems=4",
                          "--output-dir", str(tmp_path / "o")], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "2 个进程" in out.stdout and "per_device_train_batch_size=16" in out.stdout
    assert out.stdout.count(">>> TRL GRPOTrainer") == 1                 # 只有主进程打印
    assert from_hf(tmp_path / "o" / "final").n_params == tl.pretrained().n_params
