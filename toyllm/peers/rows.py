"""
对照表 peers.ROWS 的格式（Rule、Row 和造格子的几个函数），以及 verl / TRL 其他损失的选项的行[S528]（第 6 讲 8.10、8.11 节）。

【思路】peers.py 写玩具原来的选项（和它们的新取值：advantage="opo"、policy_loss="sapo"……），这里写 8.10 节新加的
    选项：rollout 修正、loss_scale_factor、is_level、delta、SAPO 的 τ、Clip-Cov / KL-Cov 的参数、VESPO 的参数。
    peers.ROWS = peers 里的行 + LOSS_ROWS；ACTIVE 也一样合起来。每一格的出处都是固定提交里的"文件:行"：
    TRL f2cd5771，verl b178a3cd[S531]（tests/peers/peer_names.json 存着那一行的原文，tests/peers/test_peers.py 核对）。
【例子】[r.verl.names for r in LOSS_ROWS if r.option == "tau_pos"]    # → [('actor_rollout_ref.actor.tau_pos',)]
"""

from typing import Callable, NamedTuple

TRL_COMMIT = "f2cd57710ae345ea6428ae95363267fcf38a3dc8"
VERL_COMMIT = "b178a3cd56f58b2d502255daba591e92833930a7"
TRANSFORMERS_VERSION = "5.25.0"
ANY = "*"
"""Row.value 是 ANY 时这一行管选项的每一个取值；否则 Row.value 是一组取值。"""

TRL_CONFIG, TRL_TRAINER = "trl/trainer/grpo_config.py", "trl/trainer/grpo_trainer.py"
VERL_ALGOS, VERL_CONFIG = "verl/trainer/ppo/core_algos.py", "verl/trainer/config/"
ACTOR, ROLLOUT_CORRECTION = "actor_rollout_ref.actor.", "algorithm.rollout_correction."


class Rule(NamedTuple):
    """
    表里的一格：一个选项（取值）在一个对方那里怎样换算。

    【参数】names：对方的名字（空：不用设任何东西）；convert：cfg → {名字: 值}，或者一句话（这个配置下没有对应的原因）；
        None 表示总是没有对应（原因是 note）；source："文件:行"（固定提交；transformers 的文件是 5.25.0 版）；
        note：讲义表格里的说明；ignorable：没有对应时能不能写进 ignore（False：忽略了对方会悄悄训练另一个算法）
    """
    names: tuple
    convert: Callable
    source: str
    note: str = ""
    ignorable: bool = True


class Row(NamedTuple):
    """ROWS 的一行：RLConfig 的选项 option、它管的取值 value（ANY 或一组取值）、TRL 一格、verl 一格[S531]。"""
    option: str
    value: object
    trl: Rule
    verl: Rule


def const(source, mapping, note=""):
    """总是设这几个名字、这几个值。"""
    return Rule(tuple(mapping), lambda c: dict(mapping), source, note)


def attr(source, name, option, note=""):
    """对方的 name 就是这个选项的值。"""
    return Rule((name,), lambda c: {name: getattr(c, option)}, source, note)


def absent(note, source=""):
    """对方没有对应（原因是 note）。"""
    return Rule((), None, source, note)


def fixed(option, peer_value, source, note):
    """对方把这个数写死了：值等于它（或者等于本包的默认值，差别写在 note 里）时不用设，否则没有对应。"""
    def convert(c):
        default = type(c).__dataclass_fields__[option].default
        return {} if getattr(c, option) in (peer_value, default) else f"对方固定用 {peer_value:g}"
    return Rule((), convert, source, note)


def _trl_is_mode(c):
    if c.policy_loss == "vespo":
        return "TRL 的 vespo 把 IS 比率并进序列级的 w（grpo_trainer.py:2973），不乘在每步的损失上（:3117）"
    return {"vllm_importance_sampling_mode": f"{c.rollout_is}_truncate"}


def _verl_is_level(c):
    if c.policy_loss == "geo_mean" and c.rollout_is == "token":
        return "verl 的 geo_mean 先把逐步的权重取几何平均（core_algos.py:1702），本包按聚合的权重取算术平均"
    return {ROLLOUT_CORRECTION + "rollout_is": c.rollout_is}


def _verl_is_cap(c):
    if c.tis_cap is None:
        return "verl 的 rollout_is_threshold=null 是关掉 IS 权重（rollout_corr_helper.py:784），没有不截断的 IS"
    return {ROLLOUT_CORRECTION + "rollout_is_threshold": c.tis_cap}


def _trl_is_cap(c):
    if c.tis_cap is None:
        return "TRL 的截断模式要一个上限"
    return {"vllm_importance_sampling_clip_max": c.tis_cap}


def _verl_level(c):
    if c.policy_loss in ("cispo", "sapo"):
        return f"verl 的 {c.policy_loss} 只有逐步的比率"
    return {}


_NO_CLIP_COV, _NO_KL_COV, _NO_VESPO = "TRL 没有 Clip-Cov", "TRL 没有 KL-Cov", "verl 没有 VESPO"
_RC_YAML = f"{VERL_CONFIG}algorithm/rollout_correction.yaml"
_ACTOR_YAML = f"{VERL_CONFIG}actor/actor.yaml"
LOSS_ROWS = (
    Row("tis_cap", ANY,
        Rule(("vllm_importance_sampling_clip_max",), _trl_is_cap, f"{TRL_CONFIG}:937"),
        Rule((ROLLOUT_CORRECTION + "rollout_is_threshold",), _verl_is_cap, f"{_RC_YAML}:9")),
    Row("rollout_is", ANY,
        Rule(("vllm_importance_sampling_mode",), _trl_is_mode, f"{TRL_CONFIG}:924",
             "token_truncate / sequence_truncate；只在 use_vllm=True 时起作用（修正 vLLM 和训练的概率之差）"),
        Rule((ROLLOUT_CORRECTION + "rollout_is",), _verl_is_level, f"{_RC_YAML}:6")),
    Row("rollout_rs", (None,), const("", {}), const("", {})),
    Row("rollout_rs", ("token_k1",),
        absent("TRL 的 token_mask 把比率出界的步的权重置 0，步还算在分母里，也不能和截断同时用", f"{TRL_TRAINER}:2617"),
        const(f"{_RC_YAML}:12", {ROLLOUT_CORRECTION + "rollout_rs": "token_k1"},
              "被拒绝的步从 response_mask 去掉（rollout_corr_helper.py:271）")),
    Row("rollout_rs_threshold", ANY, absent("TRL 没有按步拒绝（见 rollout_rs）"),
        attr(f"{_RC_YAML}:15", ROLLOUT_CORRECTION + "rollout_rs_threshold", "rollout_rs_threshold",
             "一个数 τ 时下界是 1/τ（rollout_corr_helper.py:125）")),
    Row("loss_scale_factor", (None,), const("", {}), const("", {})),
    Row("loss_scale_factor", ANY, absent("TRL 没有 seq-mean-token-sum-norm（见 loss_agg）"),
        attr(f"{_ACTOR_YAML}:86", ACTOR + "loss_scale_factor", "loss_scale_factor")),
    Row("is_level", ("token",), const(f"{TRL_CONFIG}:750", {}, "TRL 默认"), const("", {})),
    Row("is_level", ("sequence",),
        const(f"{TRL_TRAINER}:3057", {"importance_sampling_level": "sequence"}, "配 ppo 就是 TRL 的 GSPO"),
        Rule((), _verl_level, f"{VERL_ALGOS}:1253",
             "配 ppo 就是 verl 的 gspo（见 policy_loss=ppo 那一行）；verl 的 cispo、sapo 只有逐步的比率")),
    Row("delta", (None,), const("", {}), const("", {})),
    Row("delta", ANY, attr(f"{TRL_CONFIG}:687", "delta", "delta", "只配 ppo、逐步的比率；δ > 1 + eps_high"),
        attr(f"{_ACTOR_YAML}:79", ACTOR + "clip_ratio_c", "delta", "δ > 1 + eps_high 时 TRL 的 δ 就是 dual-clip 的 C")),
    Row("tau_pos", ANY, attr(f"{TRL_CONFIG}:712", "sapo_temperature_pos", "tau_pos"),
        attr(f"{_ACTOR_YAML}:46", ACTOR + "tau_pos", "tau_pos")),
    Row("tau_neg", ANY, attr(f"{TRL_CONFIG}:704", "sapo_temperature_neg", "tau_neg"),
        attr(f"{_ACTOR_YAML}:49", ACTOR + "tau_neg", "tau_neg")),
    Row("clip_cov_ratio", ANY, absent(_NO_CLIP_COV),
        attr(f"{_ACTOR_YAML}:64", ACTOR + "policy_loss.clip_cov_ratio", "clip_cov_ratio",
             "verl 用 torch.randperm 挑步，没有种子（core_algos.py:1530）")),
    Row("clip_cov_lb", ANY, absent(_NO_CLIP_COV),
        attr(f"{_ACTOR_YAML}:67", ACTOR + "policy_loss.clip_cov_lb", "clip_cov_lb")),
    Row("clip_cov_ub", ANY, absent(_NO_CLIP_COV),
        attr(f"{_ACTOR_YAML}:70", ACTOR + "policy_loss.clip_cov_ub", "clip_cov_ub")),
    Row("kl_cov_ratio", ANY, absent(_NO_KL_COV),
        attr(f"{_ACTOR_YAML}:73", ACTOR + "policy_loss.kl_cov_ratio", "kl_cov_ratio")),
    Row("ppo_kl_coef", ANY, absent(_NO_KL_COV),
        attr(f"{_ACTOR_YAML}:76", ACTOR + "policy_loss.ppo_kl_coef", "ppo_kl_coef")),
    *(Row(f"vespo_{p}", ANY, attr(f"{TRL_CONFIG}:{line}", f"vespo_{p}", f"vespo_{p}"), absent(_NO_VESPO))
      for p, line in (("k_pos", 720), ("lambda_pos", 727), ("k_neg", 735), ("lambda_neg", 742))),
)
"""8.10 节新选项的行（tis_cap 也在这里：它和 rollout_is 一起换算）。"""

LOSS_ACTIVE = {
    **dict.fromkeys(("tis_cap", "rollout_is", "rollout_rs"), lambda c: c.staleness > 0),
    "rollout_rs_threshold": lambda c: c.staleness > 0 and c.rollout_rs is not None,
    **dict.fromkeys(("tau_pos", "tau_neg"), lambda c: c.policy_loss == "sapo"),
    **dict.fromkeys(("clip_cov_ratio", "clip_cov_lb", "clip_cov_ub"), lambda c: c.policy_loss == "clip_cov"),
    **dict.fromkeys(("kl_cov_ratio", "ppo_kl_coef"), lambda c: c.policy_loss == "kl_cov"),
    **dict.fromkeys(("vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg"),
                    lambda c: c.policy_loss == "vespo"),
}
"""这些选项什么时候影响算法（peers.ACTIVE 合进它）。"""

__all__ = ["ACTOR", "ANY", "LOSS_ACTIVE", "LOSS_ROWS", "ROLLOUT_CORRECTION", "Row", "Rule", "TRANSFORMERS_VERSION",
           "TRL_COMMIT", "TRL_CONFIG", "TRL_TRAINER", "VERL_ALGOS", "VERL_COMMIT", "VERL_CONFIG", "absent", "attr",
           "const", "fixed"]
