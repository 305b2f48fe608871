"""作业里"检查"单元格调用的检查函数（旧的导入位置）：框架在 framework.py，三份作业的检查在 hw1.py、hw2.py、hw3.py。"""

from .framework import STATUSES, CheckResult
from .hw1 import check_estimate_vs_exact, check_grad_log_softmax, check_solution_grad, reference_solution_grad
from .hw2 import check_pass_at_k, check_rejection_sampling_round
from .hw3 import check_clipped_surrogate, check_group_advantages

__all__ = ["STATUSES", "CheckResult", "check_clipped_surrogate", "check_estimate_vs_exact", "check_grad_log_softmax",
           "check_group_advantages", "check_pass_at_k", "check_rejection_sampling_round", "check_solution_grad",
           "reference_solution_grad"]
