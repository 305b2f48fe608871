"""
CS336 作业 5 自己的快照测试，经过适配器跑在 toyllm.rl.cs336（和 losses）上。

快照（tests/peers/data/cs336_a5/*.npz）取自 stanford-cs336/assignment5-alignment，commit eb2c562e，tests/_snapshots/。
它们的输入由 torch.manual_seed(42) 之后的 torch.rand / torch.randn 生成（tests/conftest.py）；这里没有 torch，
TorchCPU 用 numpy 的 MT19937（和 torch CPU 生成器同一个梅森旋转，同样的 init_genrand 播种）重现它们：
rand 取 32 位输出的低 24 位 × 2^-24，randn 是 torch 的 normal_fill（每 16 个数一组的 Box-Muller）。
CS336 的比较容差是 rtol = 1e-4、atol = 1e-2；这里用 atol = 1e-5（float32 的输入）。
"""

import hashlib
from pathlib import Path

import numpy as np
import pytest

from toyllm.peers import cs336
from toyllm.rl import losses

SNAP = Path(__file__).parent / "data" / "cs336_a5"


class TorchCPU:
    """torch.manual_seed(seed) 之后 CPU 上 float32 的 torch.rand / torch.randn。"""

    def __init__(self, seed=42):
        self.bits = np.random.MT19937(0)
        self.bits._legacy_seeding(seed)

    def _uniform(self, n):
        x = self.bits.random_raw(n).astype(np.uint64)
        return (x & ((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)

    def rand(self, *shape):
        return self._uniform(int(np.prod(shape))).reshape(shape)

    def randn(self, *shape):
        n = int(np.prod(shape))
        data = self._uniform(n)

        def fill16(a):
            u1, u2 = np.float32(1) - a[:8], a[8:16].copy()
            radius, theta = np.sqrt(np.float32(-2) * np.log(u1)), np.float32(2 * np.pi) * u2
            a[:8], a[8:16] = radius * np.cos(theta), radius * np.sin(theta)
        for i in range(0, n - 15, 16):
            fill16(data[i:i + 16])
        if n % 16:                                     # 不满 16 的尾巴：重新采最后 16 个数
            tail = self._uniform(16)
            fill16(tail)
            data[n - 16:] = tail
        return data.reshape(shape)


# ---- CS336 tests/conftest.py 的 fixture ----
def raw_rewards():
    return TorchCPU().rand(2, 1)


def policy_log_probs():
    return TorchCPU().randn(2, 10)


def old_log_probs():
    return policy_log_probs() + TorchCPU().randn(2, 10)       # 同一个种子：randn_like 给出同样的数


def advantages():
    r = raw_rewards()
    return r - r.mean(axis=0)


def response_mask():
    return TorchCPU().rand(2, 10) > 0.5


def tensor():
    return TorchCPU().randn(2, 10, 100)


def mask():
    return TorchCPU().rand(2, 10, 100) > 0.5


def snapshot(name):
    with np.load(SNAP / f"{name}.npz") as data:
        return {k: data[k] for k in data}


def close(actual, expected):
    actual = np.asarray(actual, float)
    assert actual.shape == np.shape(expected) and np.array_equal(np.isnan(actual), np.isnan(expected))
    assert np.nan_to_num(np.abs(actual - expected)).max() < 1e-5


def test_torch_generator_is_reproduced():
    """torch.manual_seed(42); torch.rand(2) 是 [0.8823, 0.9150]（torch 文档和无数教程里的数）。"""
    assert np.allclose(TorchCPU().rand(2), [0.88226926, 0.91500396], atol=1e-8)


# ---- 适配器（CS336 tests/adapters.py 的 run_*）----
def test_compute_naive_policy_gradient_loss():
    out = cs336.naive_policy_gradient_loss(raw_rewards(), policy_log_probs())
    close(out.loss, snapshot("test_compute_naive_policy_gradient_loss")["array"])


@pytest.mark.parametrize("name, cliprange", [("large", 10.0), ("small", 0.1)])
def test_compute_grpo_clip_loss(name, cliprange):
    out = cs336.policy_gradient_loss(policy_log_probs(), "grpo_clip", advantages=advantages(),
                                     old_log_probs=old_log_probs(), cliprange=cliprange)
    close(out.loss, snapshot(f"test_compute_grpo_clip_loss_{name}_cliprange")["array"])


@pytest.mark.parametrize("loss_type", ["no_baseline", "reinforce_with_baseline", "grpo_clip"])
def test_compute_policy_gradient_loss(loss_type):
    out = cs336.policy_gradient_loss(policy_log_probs(), loss_type, raw_rewards(), advantages(), old_log_probs(), 0.5)
    close(out.loss, snapshot(f"test_compute_policy_gradient_loss_{loss_type}")["array"])


@pytest.mark.parametrize("dim, name", [(0, "dim0"), (1, "dim1"), (-1, "dimlast"), (None, "dimNone")])
def test_masked_mean(dim, name):
    """CS336 的快照里，整列被 mask 掉的平均是 NaN（0 / 0）：适配器用 empty="nan"；本包默认的 "zero" 在那里给 0。"""
    expected = snapshot(f"test_masked_mean_{name}")["array"]
    close(cs336.masked_mean(tensor(), mask(), dim, empty="nan"), expected)
    ours = cs336.masked_mean(tensor(), mask(), dim)
    assert np.array_equal(np.asarray(ours)[np.isnan(expected)], np.zeros(np.isnan(expected).sum()))


@pytest.mark.parametrize("dim, name", [(0, "dim0"), (1, "dim1"), (-1, "dimlast"), (None, "dimNone")])
def test_masked_normalize(dim, name):
    close(cs336.masked_normalize(tensor(), mask(), 42.0, dim), snapshot(f"test_masked_normalize_{name}")["array"])


@pytest.mark.parametrize("name, constant", [("", 1.0), ("_normalize", 42.0)])
def test_sft_microbatch_train_step(name, constant):
    lp = policy_log_probs()
    step = cs336.microbatch_train_step(cs336.sft_loss(lp), response_mask(), 2, normalize_constant=constant)
    snap = snapshot(f"test_sft_microbatch_train_step{name}")
    close(step.loss, snap["loss"])
    close(step.dloss_dlogp, snap["policy_log_probs_grad"])


def _grpo_step(grad=None):
    per_token = cs336.policy_gradient_loss(policy_log_probs(), "grpo_clip", raw_rewards(), advantages(),
                                           old_log_probs(), 0.1)
    return cs336.microbatch_train_step(per_token, response_mask(), 2, grad=grad)


def test_grpo_microbatch_train_step():
    step = _grpo_step()
    snap = snapshot("test_grpo_microbatch_train_step_grpo_clip")
    close(step.loss, snap["loss"])
    close(step.dloss_dlogp, snap["policy_log_probs_grad"])


def test_microbatch_steps_accumulate_like_torch_grad():
    """10 次调用：torch 的 .grad 一直累加，CS336 把同一个 .grad 张量存了 10 次，所以快照是 10 份累加到最后的梯度。"""
    grad = np.zeros((2, 10))
    steps = [_grpo_step(grad) for _ in range(10)]
    snap = snapshot("test_grpo_microbatch_train_step_grpo_clip_10_steps")
    close([s.loss for s in steps], snap["loss"])
    close(np.stack([grad] * 10), snap["policy_log_probs_grad"])
    grad = np.zeros((2, 10))
    steps = [cs336.microbatch_train_step(cs336.sft_loss(policy_log_probs()), response_mask(), 2, 1.0, grad)
             for _ in range(10)]
    snap = snapshot("test_sft_microbatch_train_step_10_steps")
    close([s.loss for s in steps], snap["loss"])
    close(np.stack([grad] * 10), snap["policy_log_probs_grad"])


def _dummy_rewards():
    """CS336 的 dummy_reward_fn：SHA-256 → (hash % 10) / 10。"""
    return np.array([(int(hashlib.sha256(f"hmm I think ths answer is {i}".encode()).hexdigest(), 16) % 10) / 10
                     for i in range(8)])


@pytest.mark.parametrize("by_std", [True, False])
def test_compute_group_normalized_rewards(by_std):
    r = _dummy_rewards()
    adv = losses.group_advantages(r, 4, "grpo" if by_std else "mean", eps=1e-6)
    snap = snapshot(f"test_compute_group_normalized_rewards_{'normalize_by_std' if by_std else 'no_normalize_by_std'}")
    close(r, snap["raw_rewards"])
    close(adv, snap["normalized_rewards"])


def test_compute_entropy():
    z = TorchCPU().randn(2, 10, 100).astype(float)
    logp = z - z.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    close(losses.entropy(np.exp(logp), logp).value, snapshot("test_compute_entropy")["array"])


# ---- CS336 没有快照的部分：导数、全空的行、任意正数的 normalize_constant ----
def test_fully_masked_rows_nan_in_cs336_zero_here():
    x, m = np.array([[1.0, 3.0], [5.0, 7.0]]), np.array([[1, 1], [0, 0]])
    assert cs336.masked_mean(x, m, axis=1).tolist() == [2.0, 0.0]
    out = cs336.masked_mean(x, m, axis=1, empty="nan")
    assert out[0] == 2.0 and np.isnan(out[1])
    step = cs336.microbatch_train_step(cs336.sft_loss(np.log([[0.5, 0.5], [0.5, 0.5]])), m, 1)
    assert np.isfinite(step.loss) and not step.dloss_dlogp[1].any()


@pytest.mark.parametrize("constant", [None, 0.37, 3.0, 1e4])
@pytest.mark.parametrize("loss_type", ["sft", "no_baseline", "grpo_clip"])
def test_microbatch_gradient_matches_finite_differences(constant, loss_type):
    rng = np.random.default_rng(0)
    lp0, old = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    m = rng.random((3, 5)) > 0.3
    adv = rng.normal(size=(3, 1))

    def per_token(lp):
        if loss_type == "sft":
            return cs336.sft_loss(lp)
        return cs336.policy_gradient_loss(lp, loss_type, adv, adv, old, 0.2)
    step = cs336.microbatch_train_step(per_token(lp0), m, 3, constant)
    h, fd = 1e-6, np.zeros_like(lp0)
    for i in np.ndindex(lp0.shape):
        up, down = lp0.copy(), lp0.copy()
        up[i] += h
        down[i] -= h
        fd[i] = (cs336.microbatch_train_step(per_token(up), m, 3, constant).loss
                 - cs336.microbatch_train_step(per_token(down), m, 3, constant).loss) / (2 * h)
    assert np.abs(step.dloss_dlogp - fd).max() < 1e-7


def test_cs336_functions_refuse_bad_inputs_in_chinese():
    with pytest.raises(ValueError, match="loss_type='grpo_clip' 需要 old_log_probs"):
        cs336.policy_gradient_loss(np.zeros((1, 2)), "grpo_clip", advantages=np.ones((1, 1)))
    with pytest.raises(ValueError, match="normalize_constant 必须 > 0"):
        cs336.masked_normalize(np.zeros(2), np.ones(2), 0)
    with pytest.raises(ValueError, match="empty"):
        cs336.masked_mean(np.zeros(2), np.ones(2), empty="inf")
    with pytest.raises(ValueError, match="policy_log_probs 必须都是有限的实数"):
        cs336.sft_loss([np.nan])
    with pytest.raises(ValueError, match="gradient_accumulation_steps 必须 >= 1"):
        cs336.microbatch_train_step(cs336.sft_loss(np.zeros((1, 1))), np.ones((1, 1)), 0)


ON_RL_LOSSES = {"test_compute_group_normalized_rewards_normalize_by_std",
                "test_compute_group_normalized_rewards_no_normalize_by_std", "test_compute_entropy"}
"""直接跑在 toyllm.rl.losses 上的快照（test_compute_group_normalized_rewards、test_compute_entropy）；其余经过 toyllm.peers.cs336。"""


def test_the_lecture_counts_the_snapshots_as_they_are_used():
    """讲义 8.10 节写的快照个数就是这里的个数（issue 40：原来写"22 个都跑在适配器上"，其实 3 个跑在 rl.losses 上）。"""
    names = {p.stem for p in SNAP.glob("*.npz")}
    assert ON_RL_LOSSES <= names
    n, k = len(names), len(ON_RL_LOSSES)
    lecture = (Path(__file__).resolve().parents[2] / "lectures" / "lecture06_scaling_rl.md").read_text(encoding="utf-8")
    assert (f"{n} 个快照核对：{n - k} 个经过适配器跑在 `toyllm.peers.cs336` 上，{k} 个（组内标准化的奖励 2 个、熵 1 个）"
            "直接跑在 `toyllm.rl.losses` 上") in lecture
