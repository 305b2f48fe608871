"""
RLConfig.to_trl() / to_verl() 和对照表 toyllm.rl.peers.ROWS：
名字和出处对得上从固定提交取出的名字表（tests/peer_names.json，tools/peer_names.py 生成）；
每个预设要么能转换、要么报错并写出每一个对应不上的选项；几个预设的关键值逐项核对。
装了 TRL / verl 时另有 tests/test_peers_installed.py（make test-peers）。
"""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from toyllm.rl import PRESETS, RLConfig
from toyllm.rl.config import CISPO_CLIPS, POLICY_LOSSES
from toyllm.rl.peers import ACTIVE, ANY, ROWS, TRANSFORMERS_VERSION, TRL_COMMIT, VERL_COMMIT, hydra_value

NAMES = json.loads((Path(__file__).parent / "peer_names.json").read_text(encoding="utf-8"))
KNOWN = {"trl": set(NAMES["trl"]["fields"]), "verl": set(NAMES["verl"]["keys"])}
FIELDS = {f.name: f for f in dataclasses.fields(RLConfig)}


def convert(cfg, peer):
    """to_trl / to_verl(as_dict=True)；报错时把报出的选项放进 ignore 再转一次。返回 (结果, 报出的选项)。"""
    method = getattr(cfg, f"to_{peer}")
    kwargs = {"as_dict": True} if peer == "verl" else {}
    try:
        return method(**kwargs), ()
    except ValueError as e:
        named = tuple(re.findall(r"^  - ([a-z_]+)=", str(e), re.M))
        assert named, str(e)
        return method(ignore=named, **kwargs), named


def test_the_names_table_is_from_the_pinned_commits():
    assert NAMES["trl"]["commit"] == TRL_COMMIT and NAMES["verl"]["commit"] == VERL_COMMIT
    assert {"num_generations", "loss_type", "epsilon_high", "per_device_train_batch_size", "max_steps"} <= KNOWN["trl"]
    assert {"actor_rollout_ref.actor.clip_ratio_low", "algorithm.adv_estimator"} <= KNOWN["verl"]
    assert "filter_groups" not in " ".join(KNOWN["verl"])          # main_ppo 的配置里没有动态采样


def test_the_transformers_version_of_the_sources_is_the_one_make_test_peers_installs():
    text = (Path(__file__).parent.parent / "tools" / "peers-requirements.txt").read_text(encoding="utf-8")
    assert f"transformers=={TRANSFORMERS_VERSION}\n" in text and NAMES["trl"]["transformers"] == TRANSFORMERS_VERSION


def test_every_option_and_every_choice_has_a_row():
    for name, f in FIELDS.items():
        rows = [r for r in ROWS if r.option == name]
        assert rows, f"peers.ROWS 里没有选项 {name}"
        if f.metadata["choices"] is not None or f.type is bool:
            values = f.metadata["choices"] or (True, False)
            for v in values:
                assert any(r.value == ANY or v in r.value for r in rows), f"{name}={v!r} 没有对应的行"
    assert set(ACTIVE) <= set(FIELDS)


@pytest.mark.parametrize("peer", ["trl", "verl"])
def test_every_name_in_the_table_exists_at_the_pinned_commit_and_every_source_says_it(peer):
    for row in ROWS:
        rule = getattr(row, peer)
        assert set(rule.names) <= KNOWN[peer], f"{row.option}：{set(rule.names) - KNOWN[peer]} 不是 {peer} 的名字"
        assert rule.convert is not None or rule.note, f"{row.option} 没有对应，却没写原因"
        if not rule.source:
            continue
        assert rule.source in NAMES["lines"], f"{rule.source} 不在 tests/peer_names.json 里：请运行 tools/peer_names.py"
        line = NAMES["lines"][rule.source]
        words = [n.rsplit(".", 1)[-1] for n in rule.names]
        try:                                     # 写死的值（_const）也可以是出处里写着的那个词
            words += [v for v in rule.convert(None).values() if isinstance(v, str)]
        except (AttributeError, TypeError):
            pass
        assert not words or any(w in line for w in words), f"{rule.source} 那一行没有 {words}：{line!r}"


@pytest.mark.parametrize("peer", ["trl", "verl"])
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_converts_or_names_each_option_it_cannot(peer, name):
    cfg = PRESETS[name]
    out, named = convert(cfg, peer)
    assert set(out) <= KNOWN[peer]
    allowed = {n for r in ROWS for n in getattr(r, peer).names}
    assert set(out) <= allowed, "结果里的名字都写在对照表里（讲义的表由同一张表生成）"
    for option in named:                     # 报出的选项确实没有对应：单独忽略它以外的选项时，它还在报错里
        others = tuple(o for o in named if o != option)
        with pytest.raises(ValueError, match=rf"  - {option}="):
            getattr(cfg, f"to_{peer}")(ignore=others)


def test_presets_that_convert_and_those_that_do_not():
    """哪些预设能直接转换、哪些要 ignore：写在这里，改了对照表就看得见。"""
    expect = {
        "trl": {"reinforce": ("advantage",), "rloo": ("advantage",),
                "dapo": ("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"),
                "ppo_critic": ("advantage", "gamma", "lam", "critic_lr", "vf_coef"), "cispo": ("cispo_clip",),
                "reinforce_pp": ("advantage",), "grpo_async": ("staleness",)},
        "verl": {"reinforce": ("advantage",), "dr_grpo": ("loss_agg",), "ppo": ("scale_rewards",),
                 "dapo": ("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"), "ppo_dual_clip": ("scale_rewards",),
                 "grpo_async": ("staleness",)},
    }
    for peer, bad in expect.items():
        assert {n: convert(c, peer)[1] for n, c in PRESETS.items() if convert(c, peer)[1]} == bad


def test_trl_values_of_some_presets():
    kw = PRESETS["dapo"].to_trl(ignore=("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"))
    assert (kw["loss_type"], kw["epsilon"], kw["epsilon_high"], kw["num_iterations"]) == ("dapo", 0.2, 0.28, 4)
    assert (kw["num_generations"], kw["per_device_train_batch_size"], kw["max_steps"]) == (8, 32 * 8, 200 * 4)
    assert kw["scale_rewards"] == "group" and kw["beta"] == 0.0 and "use_bias_correction_kl" not in kw
    kw = PRESETS["gspo"].to_trl()
    assert (kw["importance_sampling_level"], kw["loss_type"], kw["epsilon"], kw["epsilon_high"]) == \
        ("sequence", "grpo", 3e-4, 4e-4)
    kw = PRESETS["dr_grpo"].to_trl()
    assert (kw["loss_type"], kw["scale_rewards"]) == ("dr_grpo", "none")
    kw = PRESETS["ppo"].to_trl()
    assert (kw["beta"], kw["use_bias_correction_kl"], kw["scale_rewards"]) == (0.04, False, "batch")
    assert PRESETS["ppo_dual_clip"].to_trl()["delta"] == 3.0
    kw = PRESETS["cispo"].replace(cispo_clip="trl", eps_high=5.0).to_trl()
    assert (kw["loss_type"], kw["epsilon_high"]) == ("cispo", 5.0)
    assert RLConfig(optimizer="adam", lr=1e-6).to_trl()["optim"] == "adamw_torch"
    assert "learning_rate" not in RLConfig().to_trl(ignore=("lr", "optimizer"))
    assert "optim" not in RLConfig().to_trl(ignore=("lr", "optimizer"))


def test_verl_values_of_some_presets():
    a = "actor_rollout_ref.actor."
    d = PRESETS["gspo"].to_verl(as_dict=True)
    assert (d[a + "policy_loss.loss_mode"], d[a + "clip_ratio_low"], d[a + "clip_ratio_high"]) == ("gspo", 3e-4, 4e-4)
    assert d[a + "loss_agg_mode"] == "seq-mean-token-mean" and d["algorithm.adv_estimator"] == "grpo"
    assert "actor_rollout_ref.actor.policy_loss.loss_mode=gspo" in PRESETS["gspo"].to_verl()
    assert "actor_rollout_ref.actor.clip_ratio_low=0.0003" in PRESETS["gspo"].to_verl()
    d = PRESETS["ppo_critic"].to_verl(as_dict=True)
    assert (d["algorithm.adv_estimator"], d["algorithm.lam"], d["critic.optim.lr"]) == ("gae", 0.95, 0.1)
    assert (d[a + "use_kl_loss"], d[a + "kl_loss_coef"], d[a + "kl_loss_type"]) == (True, 0.04, "low_var_kl")
    d = PRESETS["cispo"].to_verl(as_dict=True)
    assert (d[a + "policy_loss.loss_mode"], d[a + "clip_ratio_high"], d[a + "loss_agg_mode"]) == \
        ("cispo", 0.28, "token-mean")
    d = PRESETS["cispo"].replace(cispo_clip="trl", eps_high=5.0).to_verl(as_dict=True)
    assert (d[a + "clip_ratio_low"], d[a + "clip_ratio_high"]) == (10.0, 4.0)       # clip(ρ, −9, 5) = min(ρ, 5)
    d = PRESETS["grpo_async"].to_verl(ignore=("staleness",), as_dict=True)
    assert (d["algorithm.rollout_correction.rollout_is"], d["algorithm.rollout_correction.rollout_is_threshold"]) == \
        ("token", 2.0)
    d = PRESETS["rloo"].to_verl(as_dict=True)
    assert (d["algorithm.adv_estimator"], d["actor_rollout_ref.rollout.n"], d["data.train_batch_size"]) == \
        ("rloo", 8, 32)
    assert PRESETS["reinforce_pp"].to_verl(as_dict=True)["algorithm.adv_estimator"] == "reinforce_plus_plus_baseline"
    assert PRESETS["dr_grpo"].to_verl(ignore=("loss_agg",), as_dict=True)["algorithm.norm_adv_by_std_in_grpo"] is False


def test_an_option_that_does_not_matter_is_skipped():
    """β = 0 时 kl_estimator 不起作用；policy_loss="gspo" 时 eps_low / eps_high 不起作用。"""
    assert RLConfig(kl_estimator="k1").to_trl() == RLConfig().to_trl()
    with pytest.raises(ValueError, match=r"kl_estimator='k1'：TRL 只有 k3"):
        RLConfig(kl_estimator="k1", beta=0.1).to_trl()
    assert PRESETS["gspo"].replace(eps_low=0.9).to_verl() == PRESETS["gspo"].to_verl()
    assert RLConfig(max_draws=3).to_verl() == RLConfig().to_verl()


def test_conditional_counterparts():
    with pytest.raises(ValueError, match=r"clip_ratio_c=1\.1：TRL 的 delta 只在 c > 1 \+ eps_high"):
        RLConfig(clip_ratio_c=1.1).to_trl()
    with pytest.raises(ValueError, match="entropy_coef=0.01"):
        RLConfig(entropy_coef=0.01).to_trl()                           # seq-mean：TRL 的熵按 token 平均
    assert RLConfig(entropy_coef=0.01, loss_agg="token-mean").to_trl()["entropy_coef"] == 0.01
    with pytest.raises(ValueError, match="loss_agg='seq-mean'"):
        RLConfig(policy_loss="cispo", cispo_clip="trl").to_trl()      # TRL 的 cispo 固定按 token 平均
    with pytest.raises(ValueError, match="loss_agg='token-mean'：verl 的 gspo"):
        PRESETS["gspo"].replace(loss_agg="token-mean").to_verl()
    with pytest.raises(ValueError, match="std_eps=0.01"):
        RLConfig(std_eps=0.01).to_verl()
    assert RLConfig(std_eps=1e-6).to_verl() == RLConfig().to_verl()  # verl 固定 1e-6，本包默认 1e-4 也照常转换
    with pytest.raises(ValueError, match="std_eps=1e-06"):
        RLConfig(std_eps=1e-6).to_trl()
    with pytest.raises(ValueError, match="vf_coef=0.5"):
        PRESETS["ppo_critic"].replace(vf_coef=0.5).to_verl()


def test_the_error_names_every_option_at_once_in_chinese():
    cfg = RLConfig(reward="process", clip=False, dynamic_sampling=True, staleness=1)
    with pytest.raises(ValueError) as e:
        cfg.to_trl()
    msg = str(e.value)
    for piece in ("clip=False", "dynamic_sampling=True", "max_draws=10", "reward='process'", "on_short='train'",
                  "staleness=1", "没有对应", "to_trl(ignore=("):
        assert piece in msg, piece
    ignore = re.search(r"ignore=(\(.*?\)\))", msg).group(1)[:-1]
    assert cfg.to_trl(ignore=eval(ignore))["num_generations"] == 8      # 照着报错里写好的 ignore 就能转换


@pytest.mark.parametrize("bad, error, match", [
    ("lr", TypeError, "ignore 必须是选项名的元组"),
    (("learning_rate",), ValueError, "'learning_rate' 不是 RLConfig 的选项"),
    (("dynamic_sampleing",), ValueError, "你是不是想写 'dynamic_sampling'"),
    (5, TypeError, "收到 5"),
])
def test_bad_ignore_is_rejected_in_chinese(bad, error, match):
    for method in (RLConfig().to_trl, RLConfig().to_verl):
        with pytest.raises(error, match=match):
            method(ignore=bad)


def test_bad_peer_is_rejected():
    from toyllm.rl.peers import to_peer
    with pytest.raises(ValueError, match="peer 必须是 'trl'、'verl' 之一"):
        to_peer(RLConfig(), "openrlhf")


def test_bad_as_dict_is_rejected():
    with pytest.raises(TypeError, match="as_dict 必须是 True 或 False"):
        RLConfig().to_verl(as_dict="yes")


def test_hydra_values():
    assert [hydra_value(v) for v in (True, False, None, 3e-4, 1e-6, 8, "seq-mean-token-mean")] == \
        ["true", "false", "null", "0.0003", "1e-06", "8", "seq-mean-token-mean"]
    as_dict = PRESETS["grpo"].to_verl(as_dict=True)
    assert PRESETS["grpo"].to_verl() == [f"{k}={hydra_value(v)}" for k, v in as_dict.items()]


def test_every_policy_loss_and_cispo_clip_converts_somewhere():
    """每个策略损失至少在一边能转换（必要时换成那一边的 CISPO 截法）。"""
    for loss in POLICY_LOSSES:
        for clip in CISPO_CLIPS:
            cfg = RLConfig(policy_loss=loss, cispo_clip=clip, loss_agg="token-mean" if loss == "cispo" else "seq-mean")
            assert cfg.to_verl() and (clip == "verl" and loss == "cispo" or cfg.to_trl())
