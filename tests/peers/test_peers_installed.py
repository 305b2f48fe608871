"""
装了 TRL / verl 时（make test-peers 的 .venv-peers），用真的包核对 toyllm.peers.to_trl(config) / to_verl(config)：
trl.GRPOConfig(**to_trl()) 接受每一个参数、值原样留下；to_verl() 的每一条覆盖项在 verl 自带的 Hydra 配置里
能合成（键不存在时 Hydra 报错），合成后的值就是写进去的值。没有装时整个文件跳过（make test 的 .venv 里就是这样）。
版本：trl 1.10.0（离固定提交 f2cd5771 最近的发布）、verl 0.8.0（离 b178a3cd 最近的发布），见 tools/peers-requirements.txt、peers-nodeps.txt。
"""

import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

import functools

from toyllm.peers import hydra_value, to_trl, to_verl
from toyllm.rl import PRESETS, RLConfig

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning", "ignore::UserWarning")

TOOLS = Path(__file__).resolve().parents[2] / "tools"      # 仓库根目录的 tools/（这个文件在 tests/peers/）
PINS = {name: version for f in ("peers-requirements.txt", "peers-nodeps.txt")
        for name, version in re.findall(r"^([a-z-]+)==(\S+)", (TOOLS / f).read_text(encoding="utf-8"), re.M)}
EXTRA = [RLConfig(optimizer="adam", lr=1e-6, entropy_coef=0.01, loss_agg="token-mean", beta=0.1, kl_estimator="k3"),
         RLConfig(policy_loss="cispo", cispo_clip="trl", eps_high=5.0, loss_agg="token-mean"),
         RLConfig(clip_ratio_c=3.0, mu=2), RLConfig(staleness=1, tis_cap=2.0),
         RLConfig(is_level="sequence", mu=2), RLConfig(loss_agg="luspo", is_level="sequence", clip_ratio_c=3.0),
         RLConfig(delta=3.0, mu=2), RLConfig(policy_loss="vespo", loss_agg="token-mean", vespo_k_pos=1.5),
         RLConfig(policy_loss="sapo", tau_pos=0.5, tau_neg=2.0),
         RLConfig(staleness=1, rollout_is="sequence", rollout_rs="token_k1", rollout_rs_threshold=1.5),
         RLConfig(loss_agg="seq-mean-token-sum-norm", loss_scale_factor=512)]


def configs(peer):
    """每个预设和几个别的配置，没有对应的选项放进 ignore：[(名字, 结果)]。"""
    out = []
    for name, cfg in [*PRESETS.items(), *((f"extra{i}", c) for i, c in enumerate(EXTRA))]:
        method = functools.partial({"trl": to_trl, "verl": to_verl}[peer], cfg)
        kwargs = {"as_dict": True} if peer == "verl" else {}
        try:
            out.append((name, method(**kwargs)))
        except ValueError as e:
            out.append((name, method(ignore=tuple(re.findall(r"^  - ([a-z_]+)=", str(e), re.M)), **kwargs)))
    return out


def test_the_installed_versions_are_the_pinned_ones():
    for package in ("trl", "verl", "transformers"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"没有装 {package}（make test-peers 会装）")
        assert importlib.metadata.version(package) == PINS[package], package


@pytest.mark.parametrize("name, kwargs", configs("trl"), ids=[n for n, _ in configs("trl")])
def test_grpo_config_accepts_every_keyword(name, kwargs, tmp_path):
    trl = pytest.importorskip("trl")
    cfg = trl.GRPOConfig(output_dir=str(tmp_path), report_to="none", use_cpu=True, bf16=False, **kwargs)
    for key, value in kwargs.items():
        got = getattr(cfg, key)
        assert (got.value if hasattr(got, "value") else got) == value, f"{name}：{key} = {got!r}，写的是 {value!r}"
    assert cfg.generation_batch_size == kwargs["per_device_train_batch_size"]       # 单卡：一批生成 = 一次更新


@pytest.fixture(scope="module")
def compose():
    """用装好的 verl 包里的 Hydra 配置（verl/trainer/config/ppo_trainer.yaml）合成配置；不 import verl 本身（它要 GPU 的依赖）。"""
    spec = importlib.util.find_spec("verl")
    hydra = pytest.importorskip("hydra")
    if spec is None:
        pytest.skip("没有装 verl（make test-peers 会装）")
    config_dir = Path(spec.origin).parent / "trainer" / "config"

    def run(overrides):
        with hydra.initialize_config_dir(config_dir=str(config_dir), version_base=None):
            return hydra.compose(config_name="ppo_trainer", overrides=overrides)
    return run


def test_an_unknown_key_is_refused_by_hydra(compose):
    """合成真的会检查键：写错的键报错（所以上一个测试通过就说明每个键都存在）。"""
    with pytest.raises(Exception, match="clip_ratio_lowest"):
        compose(["actor_rollout_ref.actor.clip_ratio_lowest=0.2"])


class _Absent(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """verl 在包的顶层导入 ray、tensordict 等（要 GPU 集群的依赖，--no-deps 没装）；配置的 dataclass 和登记表用不到它们。
    这里给这几个名字放空模块，只为能 import verl 自己的校验代码。"""
    ROOTS = {"ray", "tensordict", "codetiming", "wandb", "flash_attn"}

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.ROOTS:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []

        def anything(attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return type(attr, (), {"__init__": lambda self, *a, **k: None,
                                   "__call__": lambda self, *a, **k: a[0] if a else None})
        module.__getattr__ = anything
        return module

    def exec_module(self, module):
        pass


@pytest.fixture(scope="module")
def verl_checks(compose):
    """verl 自己的校验：配置的 dataclass（omega_conf_to_dataclass 建 FSDPActorConfig、AlgoConfig……，__post_init__ 检查取值）
    和损失、优势的登记表（core_algos.get_policy_loss_fn / get_adv_estimator_fn）。"""
    absent = [r for r in _Absent.ROOTS if importlib.util.find_spec(r) is None]
    finder = _Absent()
    finder.ROOTS = set(absent)
    sys.meta_path.append(finder)
    try:
        from verl.trainer.ppo import core_algos
        from verl.utils.config import omega_conf_to_dataclass
    finally:
        sys.meta_path.remove(finder)
    return core_algos, omega_conf_to_dataclass


USER = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4", "critic.ppo_micro_batch_size_per_gpu=4"]
"""to_verl 不写、用户自己补的：micro batch 大小（verl 的 FSDPActorConfig 要求至少给一个）。"""


@pytest.mark.parametrize("name, overrides", configs("verl"), ids=[n for n, _ in configs("verl")])
def test_verl_composes_and_validates_every_override(name, overrides, compose, verl_checks):
    """to_verl() 的每一条覆盖项 Hydra 都能合成，合成后的值就是写进去的值；而且过得了 verl 自己的校验
    （issue 39：dataclass 的 __post_init__、validate，和损失、优势的登记表）。USER 是用户自己补的 micro batch 大小。"""
    from omegaconf import OmegaConf
    core_algos, to_dataclass = verl_checks
    cfg = compose([f"{k}={hydra_value(v)}" for k, v in overrides.items()] + USER)     # 就是 to_verl() 的列表
    for key, value in overrides.items():
        assert OmegaConf.select(cfg, key) == value, f"{name}：{key} = {OmegaConf.select(cfg, key)!r}，写的是 {value!r}"
    actor = to_dataclass(cfg.actor_rollout_ref.actor)
    actor.validate(n_gpus=1, train_batch_size=cfg.data.train_batch_size)
    to_dataclass(cfg.algorithm)
    to_dataclass(cfg.actor_rollout_ref.actor.optim)
    assert core_algos.get_policy_loss_fn(actor.policy_loss.loss_mode)
    assert core_algos.get_adv_estimator_fn(cfg.algorithm.adv_estimator)
    if cfg.algorithm.adv_estimator == "gae":            # critic 的 dataclass 要读模型文件夹（用户自己补）：只校验它的优化器
        to_dataclass(cfg.critic.optim)
    assert actor.optim.clip_grad == actor.grad_clip == float("inf")          # 不裁剪梯度：新旧两种 worker 都关掉


def test_verl_validation_can_fail(compose, verl_checks):
    """校验真的会失败：不存在的损失名、负的裁剪比例。"""
    core_algos, to_dataclass = verl_checks
    with pytest.raises(Exception, match="bogus"):
        core_algos.get_policy_loss_fn("bogus")
    cfg = compose(["actor_rollout_ref.actor.loss_agg_mode=bogus-mean"] + USER)
    with pytest.raises(Exception):
        to_dataclass(cfg.actor_rollout_ref.actor).validate(n_gpus=1, train_batch_size=cfg.data.train_batch_size)
