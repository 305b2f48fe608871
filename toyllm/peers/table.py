"""
从玩具到真实的运行：RLConfig 的每个选项在 TRL 和 verl 里叫什么[S531]（第 6 讲 8.11 节）。

【思路】在玩具上找到合适的预设以后，下一步是在真实模型上跑同一个算法。ROWS 是一张表：每一行是 RLConfig 的一个选项
    （或者选项的一个取值），写着它在 TRL 的 GRPOConfig 和 verl 的 PPO 训练器（python -m verl.trainer.main_ppo 的
    Hydra 配置）里叫什么、值怎样换算、出处（固定提交里的"文件:行"）[S525]。toyllm.peers.to_trl / to_verl 只是逐行查这张表；
    讲义 8.11 节的对照表也由它生成（tools/make_lecture_figures.py），所以两者不会对不上。
    固定的提交：TRL f2cd5771（GRPOConfig 从 transformers 的 TrainingArguments 继承的字段：transformers 5.25.0），
    verl b178a3cd[S531]。tests/peer_names.json 存着从这两个提交取出的名字和被引用的行，tools/peer_names.py 重新生成它。
    表的格式（Rule、Row）和 8.10 节新加的选项（is_level、delta、τ、Clip-Cov / KL-Cov / VESPO 的参数、rollout 修正）
    的行在 rows.py；这里是玩具原来的选项，连同它们的新取值（advantage="opo"、policy_loss="sapo"……）。
【每个选项的三种情况】
    1. 有对应：换算成对方的名字和值。
    2. 不起作用：这个配置里它不影响算法（ACTIVE：β = 0 时的 kl_estimator、不开动态采样时的 max_draws……），跳过。
    3. 没有对应：对方没有同一个公式（TRL 没有动态采样和 critic，两边都没有过程奖励……）[S545]。所有这样的选项一起报一个
       ValueError，逐个写出选项、值和原因；确实不要它们时把名字放进 ignore，结果里就没有它们（对方按它自己的做法）。
    玩具自己的设定也照样换算（optimizer="sgd"、lr = 2：两边都能用 torch 的 SGD），可它们是给 12 × 3 的表用的；
    网络用 tinylm.tiny_config(预设名)（Adam、lr = 3e-4）。
【对方的默认值和玩具不同】有开关的一并写出：TRL lr_scheduler_type="constant"（默认线性衰减到 0）、
    max_grad_norm=0（默认按梯度范数 1.0 裁剪）、β > 0 时 use_bias_correction_kl=False（f2cd5771 的默认是 False [S132]，PyPI 上的 TRL 1.10.0 改成了 True [S559]；写出来，换了版本结果也一样）；
    verl 的 weight_decay = 0（默认 0.01）[S556]、不按梯度范数裁剪（默认 1.0：新的 worker 是 optim.clip_grad，旧的是
    actor.grad_clip，两个都写 ∞）[S566]。没有开关的写在表的说明里：vanilla 损失总带 dual-clip（c 默认 3）、critic 裁剪价值（cliprange_value = 0.5）[S556]。
    批大小按单卡写；多卡时 TRL 的每卡批大小要除以卡数[S531]。
【例子】
    to_trl(PRESETS["grpo"])["num_generations"]                     # → 8
    to_verl(PRESETS["gspo"], as_dict=True)["actor_rollout_ref.actor.policy_loss.loss_mode"]   # → "gspo"
    [r.verl.names for r in ROWS if r.option == "mu"]                # → [('actor_rollout_ref.actor.ppo_epochs',)]
"""

import types

from ..rl.losses import AGGREGATION_TABLE
from .rows import (ACTOR, ANY, LOSS_ACTIVE, LOSS_ROWS, ROLLOUT_CORRECTION, TRANSFORMERS_VERSION, TRL_COMMIT,
                        TRL_CONFIG, TRL_TRAINER, VERL_ALGOS, VERL_COMMIT, VERL_CONFIG, Row, Rule, absent, attr, const,
                        fixed)

PEERS = {"trl": "TRL（GRPOConfig）", "verl": "verl（main_ppo）"}
_CFG, _TR, _TA = TRL_CONFIG, TRL_TRAINER, "transformers/training_args.py"
_ALG, _VC = VERL_ALGOS, VERL_CONFIG
_ACT, _ROLL, _ALGO = ACTOR, "actor_rollout_ref.rollout.", "algorithm."
_LM = _ACT + "policy_loss.loss_mode"


def _kind(c):
    return AGGREGATION_TABLE[c.loss_agg].kind


_TRL_OWN_AGG = {"cispo": ("dapo", "token-mean"), "vespo": ("dapo", "token-mean"), "sapo": ("grpo", "seq-mean")}
"""TRL 的这几个损失自己就是一种 loss_type，聚合跟着它（grpo_trainer.py:3124、3139）[S534]：(同样聚合的 loss_type, 本包的名字)。"""
_VERL_OWN_AGG = {"gspo": 1313, "sapo": 1396, "geo_mean": 1707}
"""verl 的这几个 loss_mode 不看 loss_agg_mode，按解答平均[S516]（core_algos.py 的行号）。"""


def _trl_agg(loss_type):
    def convert(c):
        if c.policy_loss in _TRL_OWN_AGG:
            own, alias = _TRL_OWN_AGG[c.policy_loss]
            return {} if loss_type == own else \
                f"TRL 的 loss_type=\"{c.policy_loss}\" 自己决定聚合，和 \"{own}\" 一样（= loss_agg=\"{alias}\"）"
        return {"loss_type": loss_type}
    line = {"grpo": 3124, "dapo": 3139, "bnpo": 3129, "dr_grpo": 3134, "luspo": 3143}[loss_type]
    return Rule(("loss_type",), convert, f"{_TR}:{line}")


def _verl_loss_mode(c):
    """verl 的 policy_loss.loss_mode：ppo 配序列级比率（is_level="sequence"）就是 verl 的 gspo[S516]。"""
    if c.policy_loss == "ppo":
        return "gspo" if c.is_level == "sequence" else "vanilla"
    return c.policy_loss


def _verl_agg(mode, source):
    def convert(c):
        loss_mode = _verl_loss_mode(c)
        if loss_mode in _VERL_OWN_AGG and mode != "seq-mean-token-mean":
            return f"verl 的 {loss_mode} 不看 loss_agg_mode，固定按解答平均（core_algos.py:{_VERL_OWN_AGG[loss_mode]}）"
        return {_ACT + "loss_agg_mode": mode}
    return Rule((_ACT + "loss_agg_mode",), convert, source)


def _trl_delta(c):
    if c.clip_ratio_c > 1 + c.eps_high:
        return {"delta": c.clip_ratio_c}
    return f"TRL 的 delta 只在 clip_ratio_c > 1 + eps_high = {1 + c.eps_high:g} 时等于 dual-clip 的界 C"


def _trl_entropy(c):
    if c.entropy_coef and _kind(c) != "token":
        return "TRL 的熵奖励总是按 token 平均，玩具按 loss_agg 的权重；loss_agg 是按步平均的名字时才一样"
    return {"entropy_coef": c.entropy_coef}


def _verl_dual_clip(c):
    if c.is_level == "sequence":
        return "verl 的 gspo（序列级比率）没有 dual-clip"
    return {_ACT + "clip_ratio_c": c.clip_ratio_c}


def _verl_eps_high(c):
    if c.policy_loss == "cispo" and c.cispo_clip == "trl":     # verl 的上界是 1 + clip_ratio_high，TRL 的是 eps_high 本身
        return {_ACT + "clip_ratio_high": c.eps_high - 1}
    return {_ACT + "clip_ratio_high": c.eps_high}


def _trl_eps_high(c):
    if c.policy_loss == "cispo" and c.cispo_clip == "verl":  # TRL 的 cispo：min(ρ, epsilon_high)，verl：clip(ρ, …, 1 + ε_high)
        return {"epsilon_high": 1 + c.eps_high}
    return {"epsilon_high": c.eps_high}


def _trl_cispo_verl(c):
    if c.eps_low >= 1:                                     # 下界 1 − eps_low ≤ 0：ρ > 0 总在界内，只剩上界
        return {}
    return (f"TRL 的 cispo 只从上面截（min(ρ, epsilon_high)），没有下界 1 − eps_low = {1 - c.eps_low:g}：把 eps_low 设为 1"
            "（MiniMax-M1 就不设下界），或者换成 cispo_clip=\"trl\"")


_SEQ = ("seq-mean", "seq-mean-token-mean", "grpo")
_OPT = _ACT + "optim."
_WD = {_OPT + "weight_decay": 0.0}
_NO_CLIP = {_OPT + "clip_grad": float("inf"), _ACT + "grad_clip": float("inf")}
_NO_CLIP_NOTE = ("不裁剪梯度（∞），和玩具、TRL 的 max_grad_norm=0 一样：新的 worker 读 optim.clip_grad（optim/fsdp.yaml:30），"
                 "旧的读 actor.grad_clip（actor/dp_actor.yaml:29），用哪个看 trainer.use_legacy_worker_impl；写 0 会把梯度裁成 0")
ROWS = (
    Row("iterations", ANY,
        Rule(("max_steps",), lambda c: {"max_steps": c.iterations * c.mu}, f"{_TA}:779",
             "TRL 数的是优化器的步数，一批生成用 num_iterations 次（grpo_trainer.py:1268）：max_steps = iterations × mu"),
        attr(f"{_VC}ppo_trainer.yaml:132", "trainer.total_training_steps", "iterations")),
    Row("batch_problems", ANY,
        Rule(("per_device_train_batch_size",),
             lambda c: {"per_device_train_batch_size": c.batch_problems * c.group_size}, f"{_TA}:777",
             "TRL 数的是解答（grpo_trainer.py:1253 的图）：batch_problems × group_size（单卡；多卡时除以卡数）"),
        Rule(("data.train_batch_size", _ACT + "ppo_mini_batch_size"),
             lambda c: {"data.train_batch_size": c.batch_problems, _ACT + "ppo_mini_batch_size": c.batch_problems},
             f"{_VC}data/legacy_data.yaml:42", "verl 数的是题（fsdp_workers.py:241 再乘 rollout.n）；小批 = 整批，每个 epoch 更新一次")),
    Row("group_size", ANY, attr(f"{_CFG}:474", "num_generations", "group_size"),
        attr(f"{_VC}rollout/rollout.yaml:108", _ROLL + "n", "group_size")),
    Row("lr", ANY,
        Rule(("learning_rate", "lr_scheduler_type"), lambda c: {"learning_rate": c.lr, "lr_scheduler_type": "constant"},
             f"{_CFG}:418", "学习率不变（TRL 默认线性衰减）"),
        attr(f"{_VC}actor/actor.yaml:140", _OPT + "lr", "lr")),
    Row("advantage", ("none",), absent("GRPOTrainer 总是减去组平均", f"{_TR}:2705"),
        absent("verl 没有 A = r 的估计（reinforce_plus_plus 是折扣回报再白化：advantage=\"reinforce_pp_no_baseline\"）",
               f"{_ALG}:582")),
    Row("advantage", ("mean",), const(f"{_TR}:2706", {"scale_rewards": "none"}),
        const(f"{_VC}ppo_trainer.yaml:84",
               {_ALGO + "adv_estimator": "grpo", _ALGO + "norm_adv_by_std_in_grpo": False})),
    Row("advantage", ("rloo",), absent("GRPOTrainer 没有；TRL 另有 RLOOTrainer（RLOOConfig）", "trl/trainer/rloo_config.py:23"),
        const(f"{_ALG}:476", {_ALGO + "adv_estimator": "rloo"})),
    Row("advantage", ("grpo",), const(f"{_TR}:2707", {}, "GRPOTrainer 本来就是；除不除标准差见 scale_rewards"),
        const(f"{_ALG}:266", {_ALGO + "adv_estimator": "grpo"})),
    Row("advantage", ("reinforce_pp",),
        absent("GRPOTrainer 减去组平均，再按 scale_rewards 除以组或整批奖励的标准差（或不除），不再白化；"
               "normalize_then_sum（grpo_trainer.py:2710）"
               "在整批上白化，可它先把每个奖励函数的奖励在组内标准化。TRL 的文档让 REINFORCE++ 用 RLOOTrainer："
               "RLOOConfig(normalize_advantages=True)，to_trl 不转换到它",
               "trl/trainer/rloo_config.py:523"),
        const(f"{_ALG}:424", {_ALGO + "adv_estimator": "reinforce_plus_plus_baseline"})),
    Row("advantage", ("reinforce_pp_no_baseline",), absent("GRPOTrainer 总是减去组平均", f"{_TR}:2705"),
        const(f"{_ALG}:582", {_ALGO + "adv_estimator": "reinforce_plus_plus"}, "折扣用 algorithm.gamma（core_algos.py:604）")),
    Row("advantage", ("opo",), absent("GRPOTrainer 的基线是组平均，不按长度加权", f"{_TR}:2705"),
        const(f"{_ALG}:528", {_ALGO + "adv_estimator": "opo"})),
    Row("advantage", ("gpg",), absent("GRPOTrainer 没有 α = B / 奖励非零的份数 这个系数", f"{_TR}:2705"),
        const(f"{_ALG}:657", {_ALGO + "adv_estimator": "gpg"})),
    Row("advantage", ("gae",), absent("GRPOConfig 没有 critic"), const(f"{_ALG}:214", {_ALGO + "adv_estimator": "gae"})),
    Row("scale_rewards", ("group",), const(f"{_TR}:2687", {"scale_rewards": "group"}),
        const(f"{_VC}ppo_trainer.yaml:84", {_ALGO + "norm_adv_by_std_in_grpo": True})),
    Row("scale_rewards", ("batch",), const(f"{_TR}:2694", {"scale_rewards": "batch"}),
        absent("verl 的 GRPO 没有除以整批标准差的做法（reinforce_plus_plus_baseline 是另一回事）")),
    Row("scale_rewards", ("none",), const(f"{_TR}:2706", {"scale_rewards": "none"}),
        const(f"{_VC}ppo_trainer.yaml:84", {_ALGO + "norm_adv_by_std_in_grpo": False})),
    Row("std_eps", ANY, fixed("std_eps", 1e-4, f"{_TR}:2707", "TRL 固定 1e-4"),
        fixed("std_eps", 1e-6, f"{_ALG}:271", "verl 固定 1e-6；本包默认 1e-4 时照常转换（只差分母里的小数）")),
    Row("loss_agg", _SEQ, _trl_agg("grpo"), _verl_agg("seq-mean-token-mean", f"{_ALG}:1065")),
    Row("loss_agg", ("token-mean", "dapo"), _trl_agg("dapo"), _verl_agg("token-mean", f"{_ALG}:1055")),
    Row("loss_agg", ("bnpo",), _trl_agg("bnpo"), _verl_agg("token-mean", f"{_ALG}:1055")),
    Row("loss_agg", ("constant", "dr_grpo"), _trl_agg("dr_grpo"),
        absent("seq-mean-token-sum-norm 不除以 B，在每个 micro-batch 上除以补齐后的长度 L（dp_actor.py:578 再乘 1 / 梯度累积步数），"
               "合起来是 dr_grpo 的 m · L_max / L 倍（m = 每卡 micro-batch 的份数）", f"{_ALG}:1072")),
    Row("loss_agg", ("seq-mean-token-sum",), absent("TRL 没有先按每份解答求和、再平均的 loss_type"),
        _verl_agg("seq-mean-token-sum", f"{_ALG}:1059")),
    Row("loss_agg", ("seq-mean-token-sum-norm",), absent("TRL 的 dr_grpo 还要除以 B"),
        _verl_agg("seq-mean-token-sum-norm", f"{_ALG}:1072")),
    Row("loss_agg", ("luspo",), _trl_agg("luspo"),
        absent("按长度加权的序列级损失要 gspo，verl 的 gspo 固定按 seq-mean-token-mean 聚合", f"{_ALG}:1313")),
    Row("mu", ANY, attr(f"{_CFG}:679", "num_iterations", "mu"),
        attr(f"{_VC}actor/actor.yaml:111", _ACT + "ppo_epochs", "mu")),
    Row("clip", (True,), const(f"{_TR}:3084", {}), const(f"{_ALG}:1221", {})),
    Row("clip", (False,), absent("TRL 总是裁剪（cispo 总截在 epsilon_high）", f"{_TR}:3084"),
        absent("verl 的 vanilla、cispo、geo_mean、clip_cov 总是裁剪", f"{_ALG}:1221")),
    Row("eps_low", ANY, Rule(("epsilon",), lambda c: {} if c.policy_loss == "cispo" else {"epsilon": c.eps_low},
                             f"{_CFG}:683", "cispo 不用它（TRL 的 cispo 没有下界）"),
        attr(f"{_VC}actor/actor.yaml:39", _ACT + "clip_ratio_low", "eps_low")),
    Row("eps_high", ANY, Rule(("epsilon_high",), _trl_eps_high, f"{_CFG}:695",
                              "cispo 配 cispo_clip=\"verl\" 时写 1 + eps_high（TRL 截在 epsilon_high 本身）"),
        Rule((_ACT + "clip_ratio_high",), _verl_eps_high, f"{_VC}actor/actor.yaml:42",
             "cispo_clip=\"trl\" 时写 eps_high − 1（verl 的上界是 1 + clip_ratio_high）")),
    Row("beta", ANY,
        Rule(("beta", "use_bias_correction_kl"),
             lambda c: {"beta": c.beta, **({"use_bias_correction_kl": False} if c.beta else {})}, f"{_CFG}:671",
             "β > 0 时关掉 KL 的重要性采样修正（固定提交默认关，PyPI 上的 TRL 1.10.0 起默认开）"),
        Rule((_ACT + "use_kl_loss", _ACT + "kl_loss_coef"),
             lambda c: {_ACT + "use_kl_loss": c.beta > 0, **({_ACT + "kl_loss_coef": c.beta} if c.beta else {})},
             f"{_VC}actor/actor.yaml:95")),
    Row("kl_estimator", ("k1",), absent("TRL 只有 k3", f"{_TR}:3072"),
        const(f"{_ALG}:1879", {_ACT + "kl_loss_type": "kl"})),
    Row("kl_estimator", ("k2",), absent("TRL 只有 k3", f"{_TR}:3072"),
        const(f"{_ALG}:1885", {_ACT + "kl_loss_type": "mse"})),
    Row("kl_estimator", ("k3",), const(f"{_TR}:3072", {}, "TRL 固定用 k3"),
        const(f"{_ALG}:1890", {_ACT + "kl_loss_type": "low_var_kl"})),
    Row("dynamic_sampling", (False,), const("", {}), const("", {})),
    Row("dynamic_sampling", (True,), absent("GRPOConfig 没有动态采样"),
        absent("main_ppo 不过滤组：algorithm.filter_groups 只有 DAPO recipe 用", "verl/trainer/config/algorithm.py:611")),
    Row("max_draws", ANY, absent("只对动态采样有用"), absent("只对动态采样有用")),
    Row("gen_batch_scale", (1,), const("", {}), const("", {})),
    Row("gen_batch_scale", ANY, absent("GRPOConfig 每一步采样的题就是训练的题"),
        absent("main_ppo 的配置里没有 data.gen_batch_size（DAPO recipe 的键；ray_trainer.py:350 用 .get 读它）",
              "verl/trainer/ppo/ray_trainer.py:350")),
    Row("reward", ("outcome",), const("", {}, "奖励函数自己写（reward_funcs）"), const("", {}, "奖励函数自己写")),
    Row("reward", ("process", "procedure"), absent("TRL 的奖励是每份解答一个数", f"{_TR}:1614"),
        absent("verl 的 GRPO 先把每个 token 的奖励加成一个数", f"{_ALG}:303")),
    Row("entropy_coef", ANY, Rule(("entropy_coef",), _trl_entropy, f"{_CFG}:866", "总是按 token 平均（grpo_trainer.py:3171）"),
        attr(f"{_VC}actor/actor.yaml:89", _ACT + "entropy_coeff", "entropy_coef")),
    Row("temperature", ANY, attr(f"{_CFG}:522", "temperature", "temperature"),
        attr(f"{_VC}rollout/rollout.yaml:11", _ROLL + "temperature", "temperature")),
    Row("optimizer", ("sgd",), const(f"{_TA}:127", {"optim": "sgd", "max_grad_norm": 0.0}, "不裁剪梯度，和玩具一样"),
        const(f"{_VC}optim/fsdp.yaml:5", {_OPT + "optimizer": "SGD", **_WD, **_NO_CLIP}, _NO_CLIP_NOTE)),
    Row("optimizer", ("adam",), const(f"{_TA}:118", {"optim": "adamw_torch", "max_grad_norm": 0.0},
                                       "weight_decay 默认 0，就是 Adam；不裁剪梯度"),
        const(f"{_VC}optim/fsdp.yaml:5", {_OPT + "optimizer": "AdamW", **_WD, **_NO_CLIP},
              "weight_decay = 0，就是 Adam；" + _NO_CLIP_NOTE)),
    Row("seed", ANY, attr(f"{_TA}:1293", "seed", "seed"),
        attr(f"{_VC}data/legacy_data.yaml:65", "data.seed", "seed", "选题的顺序")),
    Row("policy_loss", ("ppo",), const(f"{_TR}:3083", {}, "loss_type 由 loss_agg 决定"),
        Rule((_LM,), lambda c: {_LM: _verl_loss_mode(c)}, f"{_VC}actor/actor.yaml:61",
             "is_level=\"sequence\" 时写 gspo（core_algos.py:1253，同一个公式；区间是 eps_low / eps_high）")),
    Row("policy_loss", ("gspo",), const(f"{_TR}:3057", {"importance_sampling_level": "sequence"}),
        const(f"{_ALG}:1253", {_LM: "gspo"})),
    Row("policy_loss", ("cispo",), const(f"{_TR}:3080", {"loss_type": "cispo"}), const(f"{_ALG}:1721", {_LM: "cispo"})),
    Row("policy_loss", ("sapo",), const(f"{_TR}:3092", {"loss_type": "sapo"}, "按解答平均（同 grpo）"),
        const(f"{_ALG}:1329", {_LM: "sapo"}, "固定按 seq-mean-token-mean 聚合")),
    Row("policy_loss", ("geo_mean",), absent("GRPOConfig 没有；TRL 另有实验性的 GMPOTrainer（epsilon 是 log 空间的界）",
                                                     "trl/experimental/gmpo/gmpo_config.py:21"),
        const(f"{_ALG}:1635", {_LM: "geo_mean"}, "不看 loss_agg_mode，对 B 份解答平均（core_algos.py:1707）")),
    Row("policy_loss", ("gpg",), absent("TRL 没有 GPG"), const(f"{_ALG}:1414", {_LM: "gpg"})),
    Row("policy_loss", ("clip_cov",), absent("TRL 没有 Clip-Cov"), const(f"{_ALG}:1450", {_LM: "clip_cov"})),
    Row("policy_loss", ("kl_cov",), absent("TRL 没有 KL-Cov"), const(f"{_ALG}:1555", {_LM: "kl_cov"})),
    Row("policy_loss", ("vespo",), const(f"{_TR}:3096", {"loss_type": "vespo"}, "按全局的 token 数平均（同 dapo）"),
        absent("verl 没有 VESPO")),
    Row("seq_eps_low", ANY, attr(f"{_CFG}:683", "epsilon", "seq_eps_low"),
        attr(f"{_VC}actor/actor.yaml:39", _ACT + "clip_ratio_low", "seq_eps_low")),
    Row("seq_eps_high", ANY, attr(f"{_CFG}:695", "epsilon_high", "seq_eps_high"),
        attr(f"{_VC}actor/actor.yaml:42", _ACT + "clip_ratio_high", "seq_eps_high")),
    Row("cispo_clip", ("verl",), Rule((), _trl_cispo_verl, f"{_TR}:3081",
                                      "eps_low ≥ 1（没有下界）时就是 TRL 的 cispo，epsilon_high = 1 + eps_high", False),
        const(f"{_ALG}:1753", {})),
    Row("cispo_clip", ("trl",), const(f"{_TR}:3081", {}),
        const("examples/cispo_trainer/run_cispo_qwen2_5_0_5b_gsm8k.sh:13", {_ACT + "clip_ratio_low": 10.0},
               "下界 1 − 10 < 0，等于不设下界（verl 的 CISPO 示例就这样写）")),
    Row("clip_ratio_c", (None,), const("", {}),
        const(f"{_ALG}:1229", {}, "没有开关：verl 的 vanilla 总带 dual-clip（c 默认 3；ρ < 3 时不起作用；gspo 没有）")),
    Row("clip_ratio_c", ANY, Rule(("delta",), _trl_delta, f"{_TR}:3087", "c > 1 + eps_high 时 TRL 的 delta 就是 c"),
        Rule((_ACT + "clip_ratio_c",), _verl_dual_clip, f"{_VC}actor/actor.yaml:79")),
    Row("gamma", ANY, absent("GRPOConfig 没有折扣回报（没有 critic，也没有 REINFORCE++）"), attr(f"{_VC}ppo_trainer.yaml:75", _ALGO + "gamma", "gamma")),
    Row("lam", ANY, absent("GRPOConfig 没有 critic"), attr(f"{_VC}ppo_trainer.yaml:78", _ALGO + "lam", "lam")),
    Row("critic_lr", ANY, absent("GRPOConfig 没有 critic"),
        Rule(("critic.optim.lr", "critic.optim.weight_decay"),
             lambda c: {"critic.optim.lr": c.critic_lr, "critic.optim.weight_decay": 0.0},
             f"{_VC}critic/critic.yaml:19",
             "verl 的 critic 还会裁剪价值（critic.yaml:80，cliprange_value = 0.5），没有开关")),
    Row("vf_coef", ANY, absent("GRPOConfig 没有 critic"),
        Rule((), lambda c: {} if c.vf_coef == 1 else "verl 的 critic 是单独的模型，价值损失没有系数", "",
             "系数 1 时一样")),
    Row("on_short", ANY, absent("只对动态采样有用"), absent("只对动态采样有用（DAPO recipe 凑不满时报错）")),
    Row("staleness", (0,), const("", {}), const("", {})),
    Row("staleness", ANY, absent("GRPOTrainer 每批用当前的策略采样（异步在 trl/experimental/async_grpo）"),
        absent("main_ppo 同步采样（异步在 verl/experimental/fully_async_policy）")),
    *LOSS_ROWS,
)
"""每个 RLConfig 选项（或取值）→ TRL 一格、verl 一格[S531]。同一个选项有几行时，第一行管到的取值算数。"""

_CLIPPED = ("ppo", "cispo", "geo_mean", "clip_cov")
"""用 eps_low / eps_high 裁剪的损失（clip=False 时不裁剪）。"""
ACTIVE = {
    "scale_rewards": lambda c: c.advantage == "grpo",
    "std_eps": lambda c: c.advantage == "grpo" and c.scale_rewards != "none",
    "clip": lambda c: c.policy_loss in _CLIPPED,
    "clip_ratio_c": lambda c: c.policy_loss == "ppo",
    "eps_low": lambda c: c.clip and c.policy_loss in _CLIPPED and (c.policy_loss != "cispo" or c.cispo_clip == "verl"),
    "eps_high": lambda c: c.clip and c.policy_loss in _CLIPPED,
    "seq_eps_low": lambda c: c.policy_loss == "gspo",
    "seq_eps_high": lambda c: c.policy_loss == "gspo",
    "cispo_clip": lambda c: c.policy_loss == "cispo",
    "kl_estimator": lambda c: c.beta > 0,
    "max_draws": lambda c: c.dynamic_sampling,
    "on_short": lambda c: c.dynamic_sampling,
    "gamma": lambda c: c.advantage in ("gae", "reinforce_pp_no_baseline"),
    **dict.fromkeys(("lam", "critic_lr", "vf_coef"), lambda c: c.advantage == "gae"),
    **LOSS_ACTIVE,
}
"""选项什么时候影响算法（不在表里的选项总是影响）。不影响时 to_trl / to_verl 跳过它。"""


PRESET_PEERS = types.MappingProxyType({
    "reinforce": ("—", "—（CS336 作业 5 的 no_baseline）"),
    "rloo": ("adv_estimator=rloo", "RLOOTrainer"),
    "grpo": ("adv_estimator=grpo, loss_agg_mode=seq-mean-token-mean", "loss_type=grpo"),
    "dr_grpo": ("norm_adv_by_std_in_grpo=False, loss_agg_mode=seq-mean-token-sum-norm（差一个倍数，见 8.7 节）",
                "loss_type=dr_grpo, scale_rewards=none"),
    "ppo": ("ppo_epochs=4, use_kl_loss, loss_agg_mode=token-mean", "scale_rewards=batch, num_iterations=4, beta=0.04"),
    "dapo": ("filter_groups.enable, clip_ratio_high=0.28, token-mean", "loss_type=dapo, epsilon_high=0.28（无动态采样）"),
    "ppo_critic": ("adv_estimator=gae", "PPOTrainer"),
    "ppo_dual_clip": ("clip_ratio_c=3（vanilla 默认）", "delta=3"),
    "gspo": ("loss_mode=gspo", "importance_sampling_level=sequence, loss_type=grpo"),
    "cispo": ("loss_mode=cispo", "loss_type=cispo, epsilon_high=1.2（只截上界）"),
    "reinforce_pp": ("adv_estimator=reinforce_plus_plus_baseline", "RLOOTrainer, normalize_advantages=True（TRL 文档的近似）"),
    "grpo_async": ("rollout_is=token, rollout_is_threshold=2",
                   "vllm_importance_sampling_mode=token_truncate, vllm_importance_sampling_clip_max=2（只修正 vLLM 的概率差）"),
    "reinforce_pp_no_baseline": ("adv_estimator=reinforce_plus_plus", "—"),
    "sapo": ("loss_mode=sapo", "loss_type=sapo"),
    "gmpo": ("loss_mode=geo_mean, clip_ratio_low=0.4, clip_ratio_high=0.4", "GMPOTrainer（实验性）"),
    "gpg": ("adv_estimator=gpg, loss_mode=gpg", "—"),
    "clip_cov": ("loss_mode=clip_cov", "—"),
    "kl_cov": ("loss_mode=kl_cov", "—"),
})
"""每个预设在 verl（b178a3cd[S515]，core_algos.py 的 loss_mode / adv_estimator）和 TRL（f2cd5771，GRPOConfig）里最接近的设置。"""


__all__ = ["ACTIVE", "ANY", "PEERS", "PRESET_PEERS", "ROWS", "Row", "Rule", "TRANSFORMERS_VERSION", "TRL_COMMIT", "VERL_COMMIT"]
