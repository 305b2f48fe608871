"""旧的位置（保留一个版本）：作业面板的两张图搬到了 toyllm.plots，请改成 from toyllm.plots import ……"""

from .plots import ESTIMATOR_NAMES, plot_gradient_estimates, plot_pass_at_k_estimates  # noqa: F401
