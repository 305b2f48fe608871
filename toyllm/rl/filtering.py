"""旧的位置（只保留这一版）：奖励和分组（step_rewards、concat_rollouts、draw_size……）已经改名为 toyllm.rl.groups。"""

from .._moved import renamed
from . import groups

__getattr__ = renamed("toyllm.rl.filtering", groups)
