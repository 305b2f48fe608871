"""
训练记录 History：每次迭代一行的表，外加元数据（第 6 讲里每条训练曲线背后的数据）。

【思路】RL（rl.train）和模仿学习（imitation）返回同一种记录：{列名: 每行一个值的 list}。
    它是只读的 Mapping，所以画图、保存、打印表格都把它当字典用；to_table 排成中文表格。
"""

import contextlib
from collections.abc import Mapping

from ._checks import as_int, as_list
from .tables import Table, display_width, format_cell, pad


class UnknownColumnError(KeyError):
    """History 里没有这一列（KeyError 的子类，消息是中文）。"""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


COLUMN_NAMES = {
    "iteration": "迭代", "round": "轮次", "reward": "平均奖励", "pass1_exact": "路径pass@1",
    "pass1_sampled": "采样pass@1", "entropy": "熵", "kl_est": "KL估计", "kl_exact": "KL精确",
    "clip_low": "裁剪·低", "clip_high": "裁剪·高", "zero_std": "零方差组", "groups": "训练组数",
    "grad_norm": "梯度范数", "loss": "损失", "samples": "已采样", "kept": "保留", "rationalized": "提示后做对",
}
"""history 每一列的中文表头。"""

class History(Mapping):
    """
    训练记录：{列名: 每次迭代一个值的 list}，外加元数据（配置、种子、有没有被中断）。

    【思路】它是一个只读的 Mapping，所以 hist["pass1_exact"]、list(hist)、dict(hist) 都可以直接用，
        画图函数、保存函数（维护者的 tools/checkpoint.py）也都把它当字典用。
        RL 的列（train 返回的）：
            iteration 第几次迭代（从 1 开始）；reward 这一次采样的平均奖励；
            pass1_exact 本次更新**之后**的模型在留出题上的路径 pass@1；pass1_sampled 这一次采样的解答里做对的比例；
            entropy 采样策略在经过的情境上的平均熵；kl_est / kl_exact 采样策略到参考策略的 KL（估计 / 精确）；
            clip_low / clip_high 被裁剪的步的比例（μ 次更新的平均）；zero_std 奖励全相同的组的比例；
            groups 实际用来训练的组数；grad_norm 梯度的范数（μ 次平均）；loss 损失（μ 次平均）；
            samples 到目前为止一共采样了多少份解答。
    【属性】meta：dict（config、seed、algorithm……，可以写进 JSON）；interrupted：是否被 Ctrl+C 中断；
        message：一句中文说明；n_rows：行数
    【例子】hist["pass1_exact"][-1]；print(hist.to_table(every=10))；hist.meta["config"]["lr"]
    【边界】不存在的列：hist["xx"] 报 UnknownColumnError（KeyError 的子类，中文消息列出可用的列）。
    【Python 小知识】继承 collections.abc.Mapping 只需实现 __getitem__、__iter__、__len__，
        就自动得到 keys()、items()、get()、in ……
    """

    def __init__(self, columns, meta=None, headers=None):
        columns = as_list("columns", columns, "列名")
        if not all(isinstance(c, str) for c in columns):
            raise ValueError(f"columns 必须是非空的列名（字符串）列表，收到 {columns!r}")
        if meta is not None and not isinstance(meta, Mapping):
            raise TypeError(f"meta 必须是字典或 None，收到 {type(meta).__name__}")
        self._data = {c: [] for c in columns}
        self.meta = dict(meta or {})
        self.headers = {**COLUMN_NAMES, **(headers or {})}
        self.interrupted = False
        self.message = ""

    def __getitem__(self, key):
        try:
            return self._data[key]
        except (KeyError, TypeError):
            raise UnknownColumnError(f"History 没有这一列 {key!r}；可用的列：{'、'.join(self._data)}") from None

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __repr__(self):
        state = "，已中断" if self.interrupted else ""
        return f"History({self.n_rows} 行 × {len(self._data)} 列{state}：{', '.join(self._data)})"

    @property
    def n_rows(self):
        """行数（完成的迭代次数）。"""
        return len(next(iter(self._data.values()))) if self._data else 0

    @property
    def config(self):
        """训练用的配置（dict），没有时是 None。"""
        return self.meta.get("config")

    @property
    def seed(self):
        """随机种子，没有时是 None。"""
        return self.meta.get("seed")

    def append(self, row):
        """追加一行：row 必须恰好包含每一列。（训练循环用；一般不需要自己调用）"""
        if not isinstance(row, Mapping):
            raise TypeError(f"row 必须是字典 {{列名: 值}}，收到 {type(row).__name__}")
        if set(row) != set(self._data):
            missing = [c for c in self._data if c not in row]
            extra = [c for c in row if c not in self._data]
            raise ValueError(f"row 的列和 history 不一致：缺少 {missing}，多出 {extra}")
        for c in self._data:
            self._data[c].append(row[c])

    def last(self):
        """最后一行 {列名: 值}；还没有任何一行时返回空字典。"""
        return {c: v[-1] for c, v in self._data.items()} if self.n_rows else {}

    def to_dict(self):
        """普通的字典 {列名: list}（复制一份，可以写进 JSON）；元数据不在里面，见 meta、interrupted、message。"""
        return {c: list(v) for c, v in self._data.items()}

    def to_table(self, every=1, columns=None, last=True, rows=None, header=True, min_width=0):
        """
        把记录排成中文表格（字符串）。

        【参数】every：每隔几行显示一行（≥ 1）；columns：要显示的列（默认全部）；last：是否总是显示最后一行；
            rows：直接指定显示哪几行（下标的列表，给了就不看 every / last）；header：是否显示表头；
            min_width：每列至少多宽（一行一行分开打印时用固定宽度，上下才对得齐）
        【返回】str；被中断时最后附一行说明
        【例子】print(hist.to_table(every=20, columns=["iteration", "pass1_exact", "entropy"]))
        """
        min_width = as_int("min_width", min_width, low=0)
        cols, idx = self._select(every, columns, last, rows)
        cells = [[format_cell(self._data[c][i]) for c in cols] for i in idx]
        heads = [self.headers.get(c, c) for c in cols]
        widths = [max([display_width(h), min_width] + [len(r[j]) for r in cells]) for j, h in enumerate(heads)]
        lines = ["  ".join(pad(h, w, "right") for h, w in zip(heads, widths))] if header else []
        lines += ["  ".join(pad(x, w, "right") for x, w in zip(r, widths)) for r in cells]
        if self.message and rows is None:
            lines.append(self.message)
        return "\n".join(lines)

    def _select(self, every, columns, last, rows):
        """to_table 和 table 共用：检查参数，返回 (列名的列表, 行下标的列表)。"""
        every = as_int("every", every, low=1)
        if isinstance(columns, str):
            columns = [columns]
        cols = list(self._data) if columns is None else list(columns)
        for c in cols:
            if c not in self._data:
                raise ValueError(f"没有这一列 {c!r}；可用的列：{'、'.join(self._data)}")
        n = self.n_rows
        if rows is None:
            idx = [i for i in range(n) if i % every == 0]
            if last and n and (not idx or idx[-1] != n - 1):
                idx.append(n - 1)
        else:
            idx = [as_int("rows 里的下标", i, -n, n - 1) % max(n, 1) for i in rows]
        return cols, idx

    def table(self, every=1, columns=None, last=True, rows=None):
        """
        和 to_table 选同样的行和列，但返回一个 toyllm.tables.Table：notebook 里显示成 HTML 表格，print 时是文字。

        【参数】同 to_table 的 every、columns、last、rows
        【返回】Table（被中断时，说明写在表格下方）
        【例子】hist.table(every=50, columns=["iteration", "pass1_exact"])   # 放在单元格最后一行
        """
        cols, idx = self._select(every, columns, last, rows)
        return Table([self.headers.get(c, c) for c in cols], [[self._data[c][i] for c in cols] for i in idx],
                     note=self.message if rows is None else None)


@contextlib.contextmanager
def stop_on_interrupt(hist, total, unit, kept, note=None):
    """
    把训练循环放进 with stop_on_interrupt(...)：按 Ctrl+C 时循环停下，已经记下的行留在 hist 里，不把异常抛出去。

    【思路】KeyboardInterrupt（Ctrl+C，或 notebook 的"中断"按钮）在 with 块里被接住：
        hist.interrupted = True，hist.message 说明完成了几 / total 个 unit、模型保留了什么。RL 和模仿学习共用它。
    【参数】hist：History；total：计划的迭代（轮）数；unit：单位（"次迭代"、"轮"）；kept：模型保留了什么（"全部更新"）；
        note：中断时调用的无参数函数，返回一句补充（例如"这次迭代已经做了 2 次更新，没有记录"），默认没有
    【返回】with 块里得到 hist
    【例子】with stop_on_interrupt(hist, rounds, "轮", "参数"):
            for r in range(rounds): ...            # 按 Ctrl+C → hist.message = "训练被中断……完成了 2 / 5 轮；……"
    【Python 小知识】@contextlib.contextmanager 把只 yield 一次的生成器变成 with 用的对象：with 块里抛出的异常
        在 yield 那一行重新出现，所以 try / except KeyboardInterrupt 能接住它。
    """
    try:
        yield hist
    except KeyboardInterrupt:
        hist.interrupted = True
        hist.message = (f"训练被中断（KeyboardInterrupt）：完成了 {hist.n_rows} / {total} {unit}{note() if note else ''}；"
                        f"模型保留了到中断为止的{kept}。")


__all__ = ["COLUMN_NAMES", "History", "UnknownColumnError", "stop_on_interrupt"]
