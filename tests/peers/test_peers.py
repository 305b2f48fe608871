"""
toyllm.peers.to_trl(config) / to_verl(config) 和对照表 toyllm.peers.ROWS：
名字和出处对得上从固定提交取出的名字表（tests/peers/peer_names.json，tools/peer_names.py 生成）；
每个预设要么能转换、要么报错并写出每一个对应不上的选项；几个预设的关键值逐项核对。
装了 TRL / verl 时另有 tests/peers/test_peers_installed.py（make test-peers）。
"""

import dataclasses
import functools
import json
import re
from pathlib import Path

import pytest

from toyllm.peers import (ACTIVE, ANY, PRESET_PEERS, ROWS, TRANSFORMERS_VERSION, TRL_COMMIT, VERL_COMMIT, PeerOptions,
                          hydra_value, to_trl, to_verl)
from toyllm.peers.convert import _row, _seen, options
from toyllm.rl import PRESETS, RLConfig
from toyllm.rl.config import CISPO_CLIPS, POLICY_LOSSES

NAMES = json.loads((Path(__file__).parent / "peer_names.json").read_text(encoding="utf-8"))
KNOWN = {"trl": set(NAMES["trl"]["fields"]), "verl": set(NAMES["verl"]["keys"])}
FIELDS = {f.name: f for f in dataclasses.fields(RLConfig)[:-1] + dataclasses.fields(PeerOptions)}   # 自己的选项 + verl / TRL 的
assert list(FIELDS) == options(RLConfig())


def convert(cfg, peer):
    """to_trl / to_verl(as_dict=True)；报错时把报出的选项放进 ignore 再转一次。返回 (结果, 报出的选项)。"""
    method = functools.partial({"trl": to_trl, "verl": to_verl}[peer], cfg)
    kwargs = {"as_dict": True} if peer == "verl" else {}
    try:
        return method(**kwargs), ()
    except ValueError as e:
        named = tuple(re.findall(r"^  - ([a-z_]+)=", str(e), re.M))
        assert named, str(e)
        if "不能忽略" in str(e):                  # 忽略了就是另一个算法（cispo_clip）：没有结果
            return None, named
        return method(ignore=named, **kwargs), named


def test_the_names_table_is_from_the_pinned_commits():
    assert NAMES["trl"]["commit"] == TRL_COMMIT and NAMES["verl"]["commit"] == VERL_COMMIT
    assert {"num_generations", "loss_type", "epsilon_high", "per_device_train_batch_size", "max_steps"} <= KNOWN["trl"]
    assert {"actor_rollout_ref.actor.clip_ratio_low", "algorithm.adv_estimator"} <= KNOWN["verl"]
    assert "filter_groups" not in " ".join(KNOWN["verl"])          # main_ppo 的配置里没有动态采样


def test_the_transformers_version_of_the_sources_is_the_one_make_test_peers_installs():
    text = (Path(__file__).parents[2] / "tools" / "peers-requirements.txt").read_text(encoding="utf-8")
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
        assert rule.source in NAMES["lines"], f"{rule.source} 不在 tests/peers/peer_names.json 里：请运行 tools/peer_names.py"
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
        active = ACTIVE.get(option, lambda c: True)
        if not (active(cfg) and active(_seen(cfg, others))):
            continue                             # 它只在被忽略的选项打开时起作用（max_draws 跟着 dynamic_sampling）
        with pytest.raises(ValueError, match=rf"  - {option}="):
            {"trl": to_trl, "verl": to_verl}[peer](cfg, ignore=others)


def test_presets_that_convert_and_those_that_do_not():
    """哪些预设能直接转换、哪些要 ignore：写在这里，改了对照表就看得见。"""
    expect = {
        "trl": {"reinforce": ("advantage",), "rloo": ("advantage",),
                "dapo": ("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"),
                "ppo_critic": ("advantage", "gamma", "lam", "critic_lr", "vf_coef"),
                "reinforce_pp": ("advantage",), "grpo_async": ("staleness",),
                "reinforce_pp_no_baseline": ("advantage", "gamma"), "gmpo": ("policy_loss",),
                "gpg": ("advantage", "policy_loss"), "clip_cov": ("policy_loss", "clip_cov_ratio", "clip_cov_lb", "clip_cov_ub"),
                "kl_cov": ("policy_loss", "kl_cov_ratio", "ppo_kl_coef")},
        "verl": {"reinforce": ("advantage",), "dr_grpo": ("loss_agg",), "ppo": ("scale_rewards",),
                 "dapo": ("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"), "ppo_dual_clip": ("scale_rewards",),
                 "grpo_async": ("staleness",)},
    }
    for peer, bad in expect.items():
        assert {n: convert(c, peer)[1] for n, c in PRESETS.items() if convert(c, peer)[1]} == bad


def test_trl_values_of_some_presets():
    kw = to_trl(PRESETS["dapo"], ignore=("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"))
    assert (kw["loss_type"], kw["epsilon"], kw["epsilon_high"], kw["num_iterations"]) == ("dapo", 0.2, 0.28, 4)
    assert (kw["num_generations"], kw["per_device_train_batch_size"], kw["max_steps"]) == (8, 32 * 8, 200 * 4)
    assert kw["scale_rewards"] == "group" and kw["beta"] == 0.0 and "use_bias_correction_kl" not in kw
    kw = to_trl(PRESETS["gspo"])
    assert (kw["importance_sampling_level"], kw["loss_type"], kw["epsilon"], kw["epsilon_high"]) == \
        ("sequence", "grpo", 3e-4, 4e-4)
    kw = to_trl(PRESETS["dr_grpo"])
    assert (kw["loss_type"], kw["scale_rewards"]) == ("dr_grpo", "none")
    kw = to_trl(PRESETS["ppo"])
    assert (kw["beta"], kw["use_bias_correction_kl"], kw["scale_rewards"]) == (0.04, False, "batch")
    assert to_trl(PRESETS["ppo_dual_clip"])["delta"] == 3.0
    kw = to_trl(PRESETS["cispo"].replace(cispo_clip="trl", eps_high=5.0))
    assert (kw["loss_type"], kw["epsilon_high"]) == ("cispo", 5.0)
    assert to_trl(RLConfig(optimizer="adam", lr=1e-6))["optim"] == "adamw_torch"
    assert "learning_rate" not in to_trl(RLConfig(), ignore=("lr", "optimizer"))
    assert "optim" not in to_trl(RLConfig(), ignore=("lr", "optimizer"))


def test_verl_values_of_some_presets():
    a = "actor_rollout_ref.actor."
    d = to_verl(PRESETS["gspo"], as_dict=True)
    assert (d[a + "policy_loss.loss_mode"], d[a + "clip_ratio_low"], d[a + "clip_ratio_high"]) == ("gspo", 3e-4, 4e-4)
    assert d[a + "loss_agg_mode"] == "seq-mean-token-mean" and d["algorithm.adv_estimator"] == "grpo"
    assert "actor_rollout_ref.actor.policy_loss.loss_mode=gspo" in to_verl(PRESETS["gspo"])
    assert "actor_rollout_ref.actor.clip_ratio_low=0.0003" in to_verl(PRESETS["gspo"])
    d = to_verl(PRESETS["ppo_critic"], as_dict=True)
    assert (d["algorithm.adv_estimator"], d["algorithm.lam"], d["critic.optim.lr"]) == ("gae", 0.95, 0.1)
    assert (d[a + "use_kl_loss"], d[a + "kl_loss_coef"], d[a + "kl_loss_type"]) == (True, 0.04, "low_var_kl")
    d = to_verl(PRESETS["cispo"], as_dict=True)
    assert (d[a + "policy_loss.loss_mode"], d[a + "clip_ratio_low"], d[a + "clip_ratio_high"], d[a + "loss_agg_mode"]) == \
        ("cispo", 1.0, 0.2, "token-mean")        # MiniMax-M1 §3.1：没有下界（1 − 1 = 0），只调上界
    d = to_verl(PRESETS["cispo"].replace(cispo_clip="trl", eps_high=5.0), as_dict=True)
    assert (d[a + "clip_ratio_low"], d[a + "clip_ratio_high"]) == (10.0, 4.0)       # clip(ρ, −9, 5) = min(ρ, 5)
    d = to_verl(PRESETS["grpo_async"], ignore=("staleness",), as_dict=True)
    assert not [k for k in d if k.startswith("algorithm.rollout_correction.")]      # main_ppo 同步采样：不打开修正
    d = to_verl(PRESETS["rloo"], as_dict=True)
    assert (d["algorithm.adv_estimator"], d["actor_rollout_ref.rollout.n"], d["data.train_batch_size"]) == \
        ("rloo", 8, 32)
    assert to_verl(PRESETS["reinforce_pp"], as_dict=True)["algorithm.adv_estimator"] == "reinforce_plus_plus_baseline"
    assert to_verl(PRESETS["dr_grpo"], ignore=("loss_agg",), as_dict=True)["algorithm.norm_adv_by_std_in_grpo"] is False


def test_an_option_that_does_not_matter_is_skipped():
    """β = 0 时 kl_estimator 不起作用；policy_loss="gspo" 时 eps_low / eps_high 不起作用。"""
    assert to_trl(RLConfig(kl_estimator="k1")) == to_trl(RLConfig())
    with pytest.raises(ValueError, match=r"kl_estimator='k1'：TRL 只有 k3"):
        to_trl(RLConfig(kl_estimator="k1", beta=0.1))
    assert to_verl(PRESETS["gspo"].replace(eps_low=0.9)) == to_verl(PRESETS["gspo"])
    assert to_verl(RLConfig(max_draws=3)) == to_verl(RLConfig())


def test_conditional_counterparts():
    with pytest.raises(ValueError, match=r"clip_ratio_c=1\.1：TRL 的 delta 只在 clip_ratio_c > 1 \+ eps_high"):
        to_trl(RLConfig(clip_ratio_c=1.1))
    with pytest.raises(ValueError, match="entropy_coef=0.01"):
        to_trl(RLConfig(entropy_coef=0.01))                           # seq-mean：TRL 的熵按 token 平均
    assert to_trl(RLConfig(entropy_coef=0.01, loss_agg="token-mean"))["entropy_coef"] == 0.01
    with pytest.raises(ValueError, match="loss_agg='seq-mean'"):
        to_trl(RLConfig(policy_loss="cispo", cispo_clip="trl"))      # TRL 的 cispo 固定按 token 平均
    with pytest.raises(ValueError, match="loss_agg='token-mean'：verl 的 gspo"):
        to_verl(PRESETS["gspo"].replace(loss_agg="token-mean"))
    with pytest.raises(ValueError, match="std_eps=0.01"):
        to_verl(RLConfig(std_eps=0.01))
    assert to_verl(RLConfig(std_eps=1e-6)) == to_verl(RLConfig())  # verl 固定 1e-6，本包默认 1e-4 也照常转换
    with pytest.raises(ValueError, match="std_eps=1e-06"):
        to_trl(RLConfig(std_eps=1e-6))
    with pytest.raises(ValueError, match="vf_coef=0.5"):
        to_verl(PRESETS["ppo_critic"].replace(vf_coef=0.5))


def test_the_error_names_every_option_at_once_in_chinese():
    cfg = RLConfig(reward="process", clip=False, dynamic_sampling=True, staleness=1)
    with pytest.raises(ValueError) as e:
        to_trl(cfg)
    msg = str(e.value)
    for piece in ("clip=False", "dynamic_sampling=True", "max_draws=10", "reward='process'", "on_short='train'",
                  "staleness=1", "没有对应", "to_trl(config, ignore=("):
        assert piece in msg, piece
    ignore = re.search(r"ignore=(\(.*?\)\))", msg).group(1)[:-1]
    assert to_trl(cfg, ignore=eval(ignore))["num_generations"] == 8      # 照着报错里写好的 ignore 就能转换


@pytest.mark.parametrize("bad, error, match", [
    ("lr", TypeError, "ignore 必须是选项名的元组"),
    (("learning_rate",), ValueError, "'learning_rate' 不是 RLConfig 的选项"),
    (("dynamic_sampleing",), ValueError, "你是不是想写 'dynamic_sampling'"),
    (5, TypeError, "收到 5"),
])
def test_bad_ignore_is_rejected_in_chinese(bad, error, match):
    for method in (to_trl, to_verl):
        with pytest.raises(error, match=match):
            method(RLConfig(), ignore=bad)


def test_bad_peer_is_rejected():
    from toyllm.peers import to_peer
    with pytest.raises(ValueError, match="peer 必须是 'trl'、'verl' 之一"):
        to_peer(RLConfig(), "openrlhf")


def test_bad_as_dict_is_rejected():
    with pytest.raises(TypeError, match="as_dict 必须是 True 或 False"):
        to_verl(RLConfig(), as_dict="yes")


def test_hydra_values():
    assert [hydra_value(v) for v in (True, False, None, 3e-4, 1e-6, 8, "seq-mean-token-mean")] == \
        ["true", "false", "null", "0.0003", "1e-06", "8", "seq-mean-token-mean"]
    as_dict = to_verl(PRESETS["grpo"], as_dict=True)
    assert to_verl(PRESETS["grpo"]) == [f"{k}={hydra_value(v)}" for k, v in as_dict.items()]


def test_every_policy_loss_and_cispo_clip_converts_somewhere():
    """每个策略损失至少在一边能直接转换（聚合用那个损失在 TRL 里固定的聚合：cispo、vespo 按 token 平均）。"""
    for loss in POLICY_LOSSES:
        for clip in CISPO_CLIPS:
            cfg = RLConfig(policy_loss=loss, cispo_clip=clip,
                           loss_agg="token-mean" if loss in ("cispo", "vespo") else "seq-mean")
            assert any(not convert(cfg, peer)[1] for peer in ("trl", "verl")), (loss, clip)


def _claims(cell):
    """PRESET_PEERS 一格里写的 名字=值（括号里的说明不算；只写名字的不核对）。"""
    parts = (p.strip() for p in re.sub(r"（[^）]*）", "", cell).split(","))
    return dict(p.split("=", 1) for p in parts if "=" in p)


def _same(got, text):
    try:
        return float(text) == got
    except ValueError:
        return text in (str(got), hydra_value(got))


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_peers_agree_with_to_trl_and_to_verl(name):
    """讲义 8.4 节的表（PRESET_PEERS）：写出的 名字=值 就是 to_verl / to_trl 给的值；
    写 "—" 或别的 Trainer 的，正是 to_xxx 报出 advantage / policy_loss 没有对应的。"""
    for peer, cell in zip(("verl", "trl"), PRESET_PEERS[name]):
        out, named = convert(PRESETS[name], peer)
        assert bool({"advantage", "policy_loss"} & set(named)) == (cell.startswith("—") or "Trainer" in cell), \
            (peer, cell, named)
        for key, value in _claims(cell).items():
            hits = [k for k in out if k == key or k.endswith("." + key)]
            assert hits or named, f"{peer}：{key} 不在结果里，而结果没有报出对应不上的选项"
            assert all(_same(out[k], value) for k in hits), (peer, key, value, {k: out[k] for k in hits})


def test_values_of_the_peer_loss_presets():
    a, lm = "actor_rollout_ref.actor.", "actor_rollout_ref.actor.policy_loss.loss_mode"
    kw = to_trl(PRESETS["sapo"])
    assert (kw["loss_type"], kw["sapo_temperature_pos"], kw["sapo_temperature_neg"], kw["num_iterations"]) == \
        ("sapo", 1.0, 1.05, 4)
    assert "epsilon" not in kw and "epsilon_high" not in kw                   # SAPO 不裁剪
    d = to_verl(PRESETS["sapo"], as_dict=True)
    assert (d[lm], d[a + "tau_pos"], d[a + "tau_neg"], d[a + "loss_agg_mode"]) == ("sapo", 1.0, 1.05, "seq-mean-token-mean")
    with pytest.raises(ValueError, match="loss_agg='token-mean'：TRL 的 loss_type=\"sapo\""):
        to_trl(PRESETS["sapo"].replace(loss_agg="token-mean"))
    with pytest.raises(ValueError, match="loss_agg='token-mean'：verl 的 sapo"):
        to_verl(PRESETS["sapo"].replace(loss_agg="token-mean"))
    d = to_verl(PRESETS["clip_cov"], as_dict=True)
    assert (d[lm], d[a + "policy_loss.clip_cov_ratio"], d[a + "policy_loss.clip_cov_lb"], d[a + "policy_loss.clip_cov_ub"],
            d[a + "clip_ratio_low"], d[a + "clip_ratio_high"], d[a + "loss_agg_mode"]) == \
        ("clip_cov", 2e-4, 1.0, 5.0, 0.2, 0.2, "token-mean")
    d = to_verl(PRESETS["kl_cov"].replace(ppo_kl_coef=0.5), as_dict=True)
    assert (d[lm], d[a + "policy_loss.kl_cov_ratio"], d[a + "policy_loss.ppo_kl_coef"]) == ("kl_cov", 2e-4, 0.5)
    assert a + "clip_ratio_low" not in d and a + "policy_loss.clip_cov_ratio" not in d      # KL-Cov 不裁剪
    d = to_verl(PRESETS["gmpo"], as_dict=True)
    assert (d[lm], d[a + "clip_ratio_low"], d[a + "clip_ratio_high"]) == ("geo_mean", 0.4, 0.4)
    with pytest.raises(ValueError, match="verl 的 geo_mean 不看 loss_agg_mode"):
        to_verl(PRESETS["gmpo"].replace(loss_agg="token-mean"))
    d = to_verl(PRESETS["gpg"], as_dict=True)
    assert (d["algorithm.adv_estimator"], d[lm]) == ("gpg", "gpg") and a + "clip_ratio_low" not in d
    d = to_verl(PRESETS["reinforce_pp_no_baseline"].replace(gamma=0.9), as_dict=True)
    assert (d["algorithm.adv_estimator"], d["algorithm.gamma"]) == ("reinforce_plus_plus", 0.9)
    assert to_verl(RLConfig(advantage="opo"), as_dict=True)["algorithm.adv_estimator"] == "opo"
    assert "algorithm.gamma" not in to_verl(RLConfig(advantage="opo", gamma=0.9), as_dict=True)   # γ 只对折扣回报


def test_sequence_level_ratios_delta_and_luspo():
    a, lm = "actor_rollout_ref.actor.", "actor_rollout_ref.actor.policy_loss.loss_mode"
    seq = RLConfig(is_level="sequence", mu=4)                     # ppo + 序列级比率：TRL 的 GSPO = verl 的 gspo
    kw = to_trl(seq)
    assert (kw["importance_sampling_level"], kw["loss_type"], kw["epsilon"], kw["epsilon_high"]) == ("sequence", "grpo", 0.2, 0.2)
    d = to_verl(seq, as_dict=True)
    assert (d[lm], d[a + "clip_ratio_low"], d[a + "clip_ratio_high"], d[a + "loss_agg_mode"]) == \
        ("gspo", 0.2, 0.2, "seq-mean-token-mean")
    with pytest.raises(ValueError, match="verl 的 gspo 不看 loss_agg_mode"):
        to_verl(seq.replace(loss_agg="token-mean"))
    with pytest.raises(ValueError, match=r"clip_ratio_c=3\.0：verl 的 gspo（序列级比率）没有 dual-clip"):
        to_verl(seq.replace(clip_ratio_c=3.0))
    assert to_trl(seq.replace(clip_ratio_c=3.0))["delta"] == 3.0          # TRL 的 delta 也截序列级的比率
    for loss in ("cispo", "sapo"):
        with pytest.raises(ValueError, match=f"is_level='sequence'：verl 的 {loss} 只有逐步的比率"):
            to_verl(RLConfig(policy_loss=loss, is_level="sequence", loss_agg="seq-mean"))
    kw = to_trl(RLConfig(policy_loss="cispo", cispo_clip="trl", is_level="sequence", loss_agg="token-mean"))
    assert (kw["loss_type"], kw["importance_sampling_level"]) == ("cispo", "sequence")
    # delta 和 clip_ratio_c 是同一个 dual-clip：两边给出同样的设置；config 不让两个同时给，所以 TRL 的 delta 不会被设两次
    with pytest.raises(ValueError, match="delta = 3 只配"):
        RLConfig(delta=3.0, clip_ratio_c=3.0)
    for peer in (to_trl, to_verl):
        assert peer(RLConfig(delta=3.0)) == peer(RLConfig(clip_ratio_c=3.0))
    assert to_trl(RLConfig(delta=3.0))["delta"] == 3.0
    assert to_verl(RLConfig(delta=3.0), as_dict=True)[a + "clip_ratio_c"] == 3.0
    luspo = RLConfig(loss_agg="luspo", is_level="sequence")
    kw = to_trl(luspo)
    assert (kw["loss_type"], kw["importance_sampling_level"]) == ("luspo", "sequence")
    with pytest.raises(ValueError, match="loss_agg='luspo'：按长度加权的序列级损失要 gspo"):
        to_verl(luspo)


def test_vespo_and_the_loss_scale_factor():
    vespo = RLConfig(policy_loss="vespo", loss_agg="token-mean", vespo_k_pos=1.5)
    kw = to_trl(vespo)
    assert (kw["loss_type"], kw["vespo_k_pos"], kw["vespo_lambda_pos"], kw["vespo_k_neg"], kw["vespo_lambda_neg"]) == \
        ("vespo", 1.5, 3.0, 3.0, 2.0)
    with pytest.raises(ValueError, match="loss_agg='seq-mean'：TRL 的 loss_type=\"vespo\""):
        to_trl(vespo.replace(loss_agg="seq-mean"))
    assert convert(vespo, "verl")[1] == ("policy_loss", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg")
    norm = RLConfig(loss_agg="seq-mean-token-sum-norm", loss_scale_factor=512)
    assert to_verl(norm, as_dict=True)["actor_rollout_ref.actor.loss_scale_factor"] == 512
    assert "actor_rollout_ref.actor.loss_scale_factor" not in to_verl(norm.replace(loss_scale_factor=None), as_dict=True)
    assert convert(norm, "trl")[1] == ("loss_agg", "loss_scale_factor")


def _cell(option, value, peer, cfg):
    """对照表里 option=value 那一格对 cfg 的换算（rollout 修正的行只在 staleness > 0 时用得到，这里直接查格子）。"""
    rule = getattr(_row(option, value), peer)
    return rule.note if rule.convert is None else rule.convert(cfg)


def test_rollout_correction():
    rc = "algorithm.rollout_correction."
    cfg = RLConfig(staleness=1, rollout_is="sequence", rollout_rs="token_k1", rollout_rs_threshold=1.5, tis_cap=3.0)
    assert _cell("rollout_is", "sequence", "verl", cfg) == {rc + "rollout_is": "sequence"}
    assert _cell("tis_cap", 3.0, "verl", cfg) == {rc + "rollout_is_threshold": 3.0}
    assert _cell("rollout_rs", "token_k1", "verl", cfg) == {rc + "rollout_rs": "token_k1"}
    assert _cell("rollout_is", "sequence", "trl", cfg) == {"vllm_importance_sampling_mode": "sequence_truncate"}
    assert "rollout_is_threshold=null 是关掉 IS 权重" in _cell("tis_cap", None, "verl", cfg.replace(tis_cap=None))
    vespo = RLConfig(policy_loss="vespo", loss_agg="token-mean", staleness=1)
    assert "TRL 的 vespo 把 IS 比率并进" in _cell("rollout_is", "token", "trl", vespo)
    assert "verl 的 geo_mean 先把逐步的权重取几何平均" in _cell("rollout_is", "token", "verl", PRESETS["gmpo"].replace(staleness=1))
    assert convert(cfg, "trl")[1] == ("staleness", "rollout_rs", "rollout_rs_threshold")
    assert to_verl(RLConfig(rollout_is="sequence", rollout_rs="token_k1")) == to_verl(RLConfig())   # 同步采样时不起作用


@pytest.mark.parametrize("peer", ["trl", "verl"])
def test_ignoring_staleness_emits_no_rollout_correction(peer):
    """issue 39：忽略 staleness（对方同步采样）时，rollout 修正的选项也不写出；写出来 verl 就打开没人要的修正。"""
    cfg = RLConfig(staleness=1, rollout_is="sequence", rollout_rs="token_k1", rollout_rs_threshold=1.5, tis_cap=3.0)
    out = {"trl": to_trl, "verl": functools.partial(to_verl, as_dict=True)}[peer](cfg, ignore=("staleness",))
    assert not [k for k in out if "rollout_correction" in k or "importance_sampling" in k], out
    assert out == {"trl": to_trl, "verl": functools.partial(to_verl, as_dict=True)}[peer](RLConfig())
    with pytest.raises(ValueError, match="  - staleness=1"):
        to_verl(cfg)


def test_ignoring_dynamic_sampling_drops_its_options():
    """忽略 dynamic_sampling 时 max_draws、on_short 跟着不起作用，不用再列进 ignore。"""
    kw = to_trl(PRESETS["dapo"], ignore=("dynamic_sampling", "gen_batch_scale"))
    assert kw == to_trl(PRESETS["dapo"], ignore=("dynamic_sampling", "max_draws", "gen_batch_scale", "on_short"))


def test_clip_false_is_refused_for_every_loss_that_clips():
    """clip=False 的 cispo / geo_mean / clip_cov：两边都总是裁剪，报 clip，不写区间。"""
    for loss, agg in (("cispo", "token-mean"), ("geo_mean", "seq-mean"), ("clip_cov", "token-mean")):
        cfg = RLConfig(policy_loss=loss, clip=False, loss_agg=agg)
        assert "clip" in convert(cfg, "verl")[1]
        assert "actor_rollout_ref.actor.clip_ratio_high" not in to_verl(cfg, ignore=("clip",), as_dict=True)


def test_without_import_toyllm_peers_each_peer_name_asks_for_that_import():
    """没有 import toyllm.peers 时（新的进程）：核心不加载它；要它的预设、损失、优势、选项、to_trl 和旧的导入路径都报中文的错，
    说出要 import toyllm.peers（或新的位置）；import 以后同样的调用都能用。"""
    import subprocess
    import sys
    code = r'''
import sys
import toyllm, toyllm.rl, toyllm.imitation, toyllm.tinylm
from toyllm.rl import RLConfig, preset, presets_table, PRESETS
from toyllm.rl.losses import group_advantages
assert not [m for m in sys.modules if m.startswith("toyllm.peers")], "核心导入了 toyllm.peers"
assert "sapo" not in PRESETS and "sapo" not in presets_table()
calls = {"preset": lambda: preset("sapo"), "loss": lambda: RLConfig(policy_loss="gpg"),
         "advantage": lambda: RLConfig(advantage="opo"), "option": lambda: RLConfig(tau_pos=2.0),
         "group_advantages": lambda: group_advantages([1.0, 0.0], 2, "gpg"),
         "to_trl": lambda: RLConfig().to_trl(), "old_path": lambda: __import__("toyllm.rl.peers"),
         "old_cs336": lambda: __import__("toyllm.rl.cs336"), "PRESET_PEERS": lambda: toyllm.rl.PRESET_PEERS}
for name, call in calls.items():
    try:
        call()
    except (TypeError, ValueError, AttributeError, ImportError) as e:
        print(name, "|", e)
    else:
        print(name, "| 没有报错")
import toyllm.peers
assert preset("sapo").policy_loss == "sapo" and RLConfig(policy_loss="gpg", tau_pos=2.0).tau_pos == 2.0
assert "SAPO" in presets_table() and toyllm.peers.to_trl(RLConfig())["num_generations"] == 8
print("ok")
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" | ", 1) for line in out.stdout.splitlines() if " | " in line)
    assert out.stdout.splitlines()[-1] == "ok"
    assert len(lines) == 9
    for name, message in lines.items():
        assert "import toyllm.peers" in message or "toyllm.peers." in message, (name, message)
    assert "'gpg'" in lines["loss"] and "policy_loss" in lines["loss"]
    assert "'opo'" in lines["advantage"] and "tau_pos" in lines["option"] and "'sapo'" in lines["preset"]
    assert "toyllm.peers.to_trl(config)" in lines["to_trl"] and "toyllm.peers.cs336" in lines["old_cs336"]


def test_cispo_without_a_lower_bound_is_trls_cispo():
    """issue 39：eps_low ≥ 1（不设下界，MiniMax-M1）时 verl 的截法就是 TRL 的 cispo，epsilon_high = 1 + eps_high。"""
    kw = to_trl(PRESETS["cispo"])
    assert (kw["loss_type"], kw["epsilon_high"]) == ("cispo", 1 + PRESETS["cispo"].eps_high) and "epsilon" not in kw
    assert to_trl(PRESETS["cispo"].replace(cispo_clip="trl", eps_high=5.0))["epsilon_high"] == 5.0


def test_a_cispo_with_a_lower_bound_cannot_be_ignored_into_another_algorithm():
    """有下界的 CISPO 在 TRL 里没有对应；报错不再提示 ignore=("cispo_clip",)（那样 TRL 把比率截在 0.2，是另一个算法），
    写进 ignore 也报错。"""
    cfg = PRESETS["cispo"].replace(eps_low=0.2)
    with pytest.raises(ValueError) as e:
        to_trl(cfg)
    assert "cispo_clip='verl'" in str(e.value) and "ignore=(" not in str(e.value) and "不能忽略" in str(e.value)
    with pytest.raises(ValueError, match="不能忽略 cispo_clip='verl'"):
        to_trl(cfg, ignore=("cispo_clip",))
    with pytest.raises(ValueError) as e:                                  # 别的选项照样给出写好的 ignore
        to_trl(cfg.replace(dynamic_sampling=True))
    assert 'ignore=("dynamic_sampling", "max_draws", "on_short"))' in str(e.value) and "cispo_clip 不能忽略" in str(e.value)


def test_max_completion_length_is_an_optional_argument():
    assert "max_completion_length" not in to_trl(PRESETS["grpo"])
    assert to_trl(PRESETS["dr_grpo"], max_completion_length=10)["max_completion_length"] == 10
    with pytest.raises(ValueError, match="max_completion_length"):
        to_trl(PRESETS["grpo"], max_completion_length=0)


def test_verl_gradient_clipping_is_switched_off_on_both_workers():
    """issue 39：verl 有梯度裁剪的开关（新 worker 的 optim.clip_grad、旧 worker 的 actor.grad_clip，默认 1.0）；
    玩具和 TRL（max_grad_norm=0）不裁剪，to_verl 两个都写 ∞（写 0 会把梯度裁成 0）。"""
    for cfg in (PRESETS["grpo"], PRESETS["grpo"].replace(optimizer="adam", lr=1e-3)):
        d = to_verl(cfg, as_dict=True)
        assert d["actor_rollout_ref.actor.optim.clip_grad"] == d["actor_rollout_ref.actor.grad_clip"] == float("inf")
    assert "actor_rollout_ref.actor.optim.clip_grad=inf" in to_verl(PRESETS["grpo"])
    assert to_trl(PRESETS["grpo"])["max_grad_norm"] == 0.0
