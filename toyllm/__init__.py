"""
toyllm：第 6 讲「规模与强化学习」的课程配套包。

一个会做多步算术题的玩具语言模型（第 1 讲的 ToyLLM），加上每个情境 3 个可学习的偏移量 Δ（第 6 讲），
在上面可以精确地算、跑、看 SFT、STaR、pass@k、REINFORCE、GRPO、PPO、KL、DAPO 和规模定律。

【思路】`import toyllm` 只导入 notebook 第一个单元格就要用的几样东西（下面分组列出），启动快，
    也不加载 matplotlib、ipywidgets。其余的按主题放在子模块里，用到时再导入：
        toyllm.exact（路径 pass@1 和梯度）、toyllm.sampler（向量化采样）、toyllm.rl（强化学习）、
        toyllm.imitation（SFT、STaR）、toyllm.evaluation（评估）、toyllm.scaling（规模定律）、
        toyllm.plots / toyllm.plotstyle（画图）、toyllm.dashboards（作业的控制面板）……
    写 `import toyllm` 之后直接用 `toyllm.rl.train` 也可以：第一次用到 toyllm.rl 时才导入它（见 __getattr__）。
    速度：python tools/bench_import.py 打印导入用时。
"""

try:
    import numpy  # noqa: F401
except ImportError as _e:                      # 给学生一句能照做的话，而不是一长串 traceback
    raise ImportError(f"toyllm 需要 {_e.name}，但当前的 Python 环境里没有。请在仓库目录运行 make test（会自动创建 .venv 并安装依赖），"
                      f"或者 pip install -e '.[dev]'；在 JupyterLab 里请选择装了 toyllm 的内核。") from _e

# 算术题：出题、三种做法（正确 / 错误观念 / 粗心）、一步有多难、12 种情境（第 1 讲）
from .arithmetic import (BUG_NAMES, CONTEXT_NAMES, CONTEXTS, MAX_STEPS, MAX_VALUE, OP_NAMES, OP_SYMBOLS, OPS,
                         PROCEDURE_NAMES, PROCEDURES, Problem, Step, apply_op, bug_bites, count_borrows,
                         count_carries, make_problem, make_problem_set, step_hardness)
# 第 1 讲的玩具模型和它的常量（logits 怎样随规模、难度变化）
from .toy_llm import ALPHA, BETA, LOGIT_BUG, LOGIT_CARELESS, NO_COT_PENALTY, REF_SIZE, Sample, ToyLLM, softmax
# 第 6 讲的可训练模型：每个情境 3 个偏移量 Δ，SFT 和一步的梯度
from .trainable import (HARD_CONTEXTS, TEMPERATURE, TrainableLLM, add_grad, apply_grads, context_key, context_report,
                        entropy_of, evaluate, log_likelihood, probs_for, sft, step_records)
# pass@k 的无偏估计（Chen et al. 2021）
from .estimators import pass_at_k
# 打印对齐的中文表格、条形图、模型大小
from .tables import bar, display_width, fmt_size, mean, pad

__version__ = "0.1.0"


def __getattr__(name):
    """
    PEP 562：模块里没有的名字会来问这个函数。子模块（toyllm.rl、toyllm.plots……）第一次被用到时才导入。

    【Python 小知识】`import toyllm` 并不会导入 toyllm.rl；`from toyllm import rl` 和 `toyllm.rl` 都会走到这里。
    """
    import importlib
    import pkgutil

    if not name.startswith("_") and name in {m.name for m in pkgutil.iter_modules(__path__)}:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
