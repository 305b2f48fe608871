"""
toyllm：第 6 讲「规模与强化学习」的课程配套包。

一个会做多步算术题的玩具语言模型（第 1 讲的 ToyLLM），加上每个情境 3 个可学习的偏移量 Δ（第 6 讲），
在上面可以精确地算、跑、看 SFT、STaR、pass@k、REINFORCE、GRPO、PPO、KL、DAPO 和规模定律。
"""

try:
    import numpy  # noqa: F401
    import matplotlib  # noqa: F401
except ImportError as _e:                      # 给学生一句能照做的话，而不是一长串 traceback
    raise ImportError(f"toyllm 需要 {_e.name}，但当前的 Python 环境里没有。请在仓库目录运行 make test（会自动创建 .venv 并安装依赖），"
                      f"或者 pip install -e '.[dev]'；在 JupyterLab 里请选择装了 toyllm 的内核。") from _e

from .arithmetic import (BUG_NAMES, CONTEXT_NAMES, CONTEXTS, MAX_STEPS, MAX_VALUE, OP_NAMES, OP_SYMBOLS, OPS,
                         PROCEDURE_NAMES, PROCEDURES, Problem, Step, apply_op, bug_bites, count_borrows,
                         count_carries, digit_sum, make_problem, make_problem_set, step_hardness)
from .estimators import pass_at_k
from .text import bar, display_width, fmt_size, mean, pad
from .toy_llm import ALPHA, BETA, LOGIT_BUG, LOGIT_CARELESS, NO_COT_PENALTY, REF_SIZE, Sample, ToyLLM, softmax
from .trainable import (HARD_CONTEXTS, TEMPERATURE, DeltaView, TrainableLLM, add_grad, apply_grads, context_key,
                        context_report, entropy_of, evaluate, log_likelihood, probs_for, sft, step_records)
from .exact import (CorrectPaths, correct_paths, exact_entropy, exact_pass_at_1, exact_pass_at_k, expected_reward,
                    grad_expected_reward, grad_log_expected_reward, grad_mean_log_reward, log_expected_reward,
                    mean_log_reward)
from .gradcheck import GradCheckResult, compare_grads, finite_difference_grad
from .sampler import ProblemBatch, Rollouts, prepare_problems, sample_rollouts
from .evaluation import (Estimate, SampleSet, best_of_k, best_of_n, compare_exact_sampled, draw_samples, estimate_mean,
                         evaluate_sampled, inference_curves, maj_at_k, maj_vote, mean_best_worst, pass_at_k_sampled,
                         scaling_curve, verify)
from .history import History
from .problems import default_problems
from .rl import (PRESETS, KLEstimates, LossResult, RLConfig, Surrogate, aggregate_loss, aggregation_weights,
                 clipped_surrogate, diff_presets, group_advantages, kl_estimates, policy_loss, preset,
                 presets_table, score_vectors, step_rewards, train)
from .imitation import (distinct_mask, expert_iteration, hinted_rollouts, rejection_sampling_ft, rollouts_to_data, sft_counts,
                        sft_rollouts, star, step_counts)
from .scaling import SigmoidFit, fit_sigmoid, reach_target, sigmoid_curve
from .checkpoint import (Checkpoint, CheckpointError, load_history, load_model, read_checkpoint, save_history,
                         save_model)

__version__ = "0.1.0"
