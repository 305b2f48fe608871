"""
从玩具到真实的运行：toyllm.peers.to_trl(config) / to_verl(config)，逐个选项查对照表 table.ROWS（第 6 讲 8.11 节）。

【思路】每个选项三种情况：有对应（换成对方的名字和值）；不起作用（ACTIVE 说它在这个配置里不影响算法，跳过）；
    没有对应（一起报一个 ValueError，写明选项、值和原因，并给出写好的 ignore=(...)）。RLConfig 自己不知道这张表。
"""

import dataclasses
import difflib

from .._checks import as_bool, as_choice, as_int
from ..rl.config import OPTION_BLOCKS, RLConfig
from .table import ACTIVE, ANY, PEERS, ROWS
from .rows import absent


def options(config):
    """config 的全部选项名：RLConfig 自己的，加上登记的真实系统的选项（按定义顺序）。"""
    return [f.name for f in dataclasses.fields(config)[:-1]] + [n for b in OPTION_BLOCKS for n in b.fields]


def _row(option, value):
    return next((r for r in ROWS if r.option == option and (r.value == ANY or value in r.value)), None)


def _check_ignore(config, ignore, method):
    if isinstance(ignore, (str, bytes)) or not hasattr(ignore, "__iter__"):
        raise TypeError(f"{method} 的 ignore 必须是选项名的元组，例如 ignore=(\"dynamic_sampling\",)，收到 {ignore!r}")
    ignore = tuple(ignore)
    names = options(config)
    for name in ignore:
        if name not in names:
            close = difflib.get_close_matches(str(name), names, n=1)
            hint = f"你是不是想写 {close[0]!r}？" if close else ""
            raise ValueError(f"{method} 的 ignore 里的 {name!r} 不是 RLConfig 的选项。{hint}可用的选项：{'、'.join(names)}")
    return ignore


def _seen(config, ignore):
    """判断别的选项起不起作用时再看一遍的配置：忽略的选项算作默认值（忽略 staleness，rollout 修正的选项也就不起作用）。
    一个选项在原配置和它上面都起作用才写出。"""
    defaults = {f.name: f.default for f in dataclasses.fields(config)[:-1]}
    defaults.update({n: f.default for b in OPTION_BLOCKS for n, f in b.fields.items()})
    try:
        return config.replace(**{o: defaults[o] for o in ignore})
    except (TypeError, ValueError):             # 换回默认值以后组合不成立：按原配置判断
        return config


def to_peer(config, peer, ignore=()):
    """
    把 RLConfig 换成一个对方的选项 {名字: 值}（to_trl、to_verl 调用它）。

    【参数】config：RLConfig；peer："trl" 或 "verl"[S531]；ignore：不转换的选项名（没有对应也不报错，结果里没有它们；
        判断别的选项起不起作用时，忽略的选项算作默认值：忽略 staleness，tis_cap、rollout_is 也不写出）
    【返回】dict，按 RLConfig 选项的顺序
    【边界】有对应不上的选项时报中文的 ValueError，一次列出全部（选项=值：原因），并给出写好的 ignore=(...)；
        忽略了会悄悄换成另一个算法的选项（Rule.ignorable=False，例如 cispo_clip）不放进 ignore 的提示，写进 ignore 也报错。
        ignore 里有不存在的选项名、peer 不是两个名字之一时报 ValueError，ignore 不是一组名字报 TypeError。
    【例子】to_peer(PRESETS["grpo"], "trl")["loss_type"] → "grpo"
    """
    method = f"to_{as_choice('peer', peer, tuple(PEERS))}"
    ignore = _check_ignore(config, ignore, method)
    seen = _seen(config, ignore)
    out, missing = {}, []
    for option in options(config):
        value, row = getattr(config, option), _row(option, getattr(config, option))
        active = ACTIVE.get(option, lambda c: True)
        if not (active(config) and active(seen)):
            continue
        rule = getattr(row, peer) if row else absent("对照表 ROWS 里还没有这个选项")
        result = rule.note if rule.convert is None else rule.convert(config)
        if option in ignore:
            if isinstance(result, str) and not rule.ignorable:
                raise ValueError(f"{method} 不能忽略 {option}={value!r}：{result}。忽略它，{PEERS[peer]} 会按自己的做法"
                                 "训练另一个算法，却不报错")
            continue
        if isinstance(result, str):
            missing.append((option, value, result, rule.ignorable))
            continue
        for key, v in result.items():
            if key in out and out[key] != v:
                raise RuntimeError(f"ROWS 自相矛盾：{key} 被设成 {out[key]!r} 和 {v!r}")
            out[key] = v
    if missing:
        lines = "\n".join(f"  - {o}={v!r}：{why}" for o, v, why, _ in missing)
        names = [f'"{o}"' for o, _, _, ok in missing if ok]
        hint = (f"确实不要它们的话，写 {method}(config, ignore=({', '.join(names)}{',' if len(names) == 1 else ''}))："
                "结果里不会有它们，对方按它自己的做法。") if names else ""
        fixed = [o for o, _, _, ok in missing if not ok]
        if fixed:
            hint += f"{'、'.join(fixed)} 不能忽略（忽略了就是另一个算法）：按上面的原因改配置。"
        raise ValueError(f"这些选项在 {PEERS[peer]} 里没有对应（{len(missing)} 个）：\n{lines}\n{hint}")
    return out


def hydra_value(value):
    """一个值在 Hydra 命令行上的写法：True → true，None → null，浮点数用 repr（0.0003、1e-06）。"""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else repr(value) if isinstance(value, float) else str(value)




def _config(config, method):
    if not isinstance(config, RLConfig):
        raise TypeError(f"{method} 的 config 必须是 RLConfig（例如 toyllm.rl.preset(\"grpo\")），收到 {type(config).__name__}")
    return config


def to_trl(config, ignore=(), max_completion_length=None):
    """
    同一个算法在 TRL 里的写法：trl.GRPOConfig 的关键字参数[S531]（TRL 提交 f2cd5771；对照表是 ROWS，讲义 8.11 节）。

    【思路】逐个选项查 ROWS：有对应的换成 TRL 的名字和值（group_size → num_generations，
        batch_problems × group_size → per_device_train_batch_size，iterations × mu → max_steps……）[S531]；
        在这个配置里不起作用的选项跳过（β = 0 时的 kl_estimator……）。
    【参数】config：RLConfig；ignore：不转换的选项名（元组）。它们没有对应也不报错，结果里也没有它们，TRL 用自己的默认值；
        max_completion_length：解答最多几个 token（给了就写出；TRL 的默认 512[S563]，比小网络的上下文长得多，
        而且 loss_agg="constant"（dr_grpo）用它作分母 L_max）
    【返回】dict {GRPOConfig 的字段: 值}；模型、数据、output_dir 由你自己补上
    【边界】TRL 没有对应的选项（动态采样、critic、过程奖励、陈旧采样……）[S545]一起报一个中文的 ValueError，
        每个写明选项、值和原因，并给出写好的 ignore=(...)；ignore 里不是选项名的报 ValueError。
        玩具的 lr = 2 和 optimizer="sgd" 照样换算（optim="sgd"），可它们是给 12 × 3 的表用的，一步就毁掉真网络：
        网络用 tinylm.tiny_config(预设名)（Adam、lr = 3e-4），toyllm.peers.trl.run_trl 就这样做。
    【例子】
        to_trl(PRESETS["grpo"])["loss_type"]                          # → "grpo"
        to_trl(PRESETS["dapo"])                                       # ValueError：dynamic_sampling=True ……
        kw = to_trl(tiny_config("dapo"), ignore=("dynamic_sampling", "gen_batch_scale"), max_completion_length=10)
        kw["loss_type"], kw["epsilon_high"], kw["learning_rate"]      # → ("dapo", 0.28, 0.0003)
        trl.GRPOConfig(output_dir="out", **kw)
    """
    out = to_peer(_config(config, "to_trl"), "trl", ignore)
    if max_completion_length is not None:
        out["max_completion_length"] = as_int("max_completion_length", max_completion_length, low=1)
    return out


def to_verl(config, ignore=(), as_dict=False):
    """
    同一个算法在 verl 里的写法：python -m verl.trainer.main_ppo[S525] 后面的 Hydra 覆盖项（verl 提交 b178a3cd）。

    【思路】和 to_trl 一样逐个选项查 ROWS，名字是 verl 配置里的完整路径（actor_rollout_ref.actor.clip_ratio_low……）[S524]。
    【参数】config：RLConfig；ignore：不转换的选项名（同 to_trl）；as_dict：True 时返回 {路径: 值}，否则返回 "路径=值" 的列表
    【返回】list of str（可以直接粘在命令后面）或 dict；模型、数据、micro batch 大小由你自己补上
    【边界】同 to_trl：verl 没有对应的选项（动态采样、scale_rewards="batch"、loss_agg="constant"……）[S529]一起报中文的 ValueError。
    【例子】
        to_verl(PRESETS["gspo"])[-3:]
        # → ['actor_rollout_ref.actor.policy_loss.loss_mode=gspo', 'actor_rollout_ref.actor.clip_ratio_low=0.0003',
        #    'actor_rollout_ref.actor.clip_ratio_high=0.0004']
        print("python -m verl.trainer.main_ppo", *to_verl(tiny_config("grpo")))   # 一整行命令[S516]
        # 网络用 tinylm.tiny_config 的 Adam、lr = 3e-4；玩具的 PRESETS["grpo"] 会写出 lr = 2 的 SGD，一步就毁掉网络
    """
    out = to_peer(_config(config, "to_verl"), "verl", ignore)
    return out if as_bool("as_dict", as_dict) else [f"{k}={hydra_value(v)}" for k, v in out.items()]


__all__ = ["hydra_value", "options", "to_peer", "to_trl", "to_verl"]
