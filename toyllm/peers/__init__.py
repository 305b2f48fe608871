"""
真实系统的那一层（toyllm.peers）：课上不讲、为真实系统准备的东西（第 6 讲 8.10–8.11 节）。学生的包 toyllm 从不导入它。

【思路】import toyllm.peers 把这里的东西登记进 toyllm.rl 的登记表，之后它们就和课上的选项一样用：
        losses.py      SAPO、GMPO（geo_mean）、GPG、Clip-Cov、KL-Cov、VESPO 和 rollout 修正 → RLConfig.policy_loss
        advantages.py  REINFORCE++ 不带基线、OPO、GPG 的优势 → RLConfig.advantage
        options.py     17 个选项（is_level、delta、tau_pos……、rollout_is）→ RLConfig(tau_pos=2.0)；6 个预设
        table.py       对照表 ROWS（每个选项在 TRL / verl 里的名字和出处[S531]）、PRESET_PEERS（讲义 8.4 节的表）
        rows.py        对照表的格式（Rule、Row）和 options.py 那些选项的行
        convert.py     to_trl(config)、to_verl(config)
        cs336.py       CS336 作业 5 的函数[S500]
        hf.py          小网络导出成 GPT2LMHeadModel 和逐字符的分词器（to_hf），训练完读回 TinyLM（from_hf）；要 torch
        trl.py         run_trl：同一个实验用 GRPOTrainer 训练（make trl、python -m toyllm.peers.trl）[S154]；要 torch 和 TRL
    hf.py、trl.py 不在 import toyllm.peers 时导入（torch 不在学生的安装里）：用到时写 from toyllm.peers import trl。
【例子】
    import toyllm.peers
    from toyllm.rl import preset
    toyllm.peers.to_trl(preset("gspo"))["importance_sampling_level"]     # → "sequence"
    preset("clip_cov", clip_cov_ratio=0.05)                              # 没有 import toyllm.peers 时报错，提示这一句
"""

from . import advantages, cs336, losses, options
from .convert import hydra_value, to_peer, to_trl, to_verl
from .options import PeerOptions
from .table import ACTIVE, ANY, PEERS, PRESET_PEERS, ROWS, TRANSFORMERS_VERSION, TRL_COMMIT, VERL_COMMIT, Row, Rule

__all__ = ["ACTIVE", "ANY", "PEERS", "PRESET_PEERS", "PeerOptions", "ROWS", "Row", "Rule", "TRANSFORMERS_VERSION",
           "TRL_COMMIT", "VERL_COMMIT", "advantages", "cs336", "hydra_value", "losses", "options", "to_peer", "to_trl",
           "to_verl"]
