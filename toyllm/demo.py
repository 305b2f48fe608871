"""
python -m toyllm 的演示：第 6 讲工具模块原来的 __main__，加上一次短训练（STaR 式的拒绝采样微调）的前后对比。

【思路】第 6 讲的开场：训练前每个情境选 correct 的概率和 pass@1（采样估计 vs 精确值），
    再做一次拒绝采样微调，看哪些情境学到了东西。
"""

import random

from .arithmetic import CONTEXT_NAMES, CONTEXTS, make_problem_set
from .exact import exact_pass_at_1
from .tables import bar, pad
from .toy_llm import ToyLLM
from .trainable import TrainableLLM, context_report, evaluate, sft


def context_table(before, after):
    """训练前后每个情境下选 correct 的概率，排成中文表格（字符串）。【参数】before / after：TrainableLLM"""
    lines = [pad("情境", 26) + pad("π(correct)", 12, "right") + pad("训练后", 10, "right") + "  变化"]
    for key in CONTEXTS:
        p, q = before.p_correct(key), after.p_correct(key)
        lines.append(pad(CONTEXT_NAMES[key], 26) + f"{p:12.3f}{q:10.3f}  {q - p:+.3f} {bar(q, 12)}")
    return "\n".join(lines)


def run_demo(seed=0, out=print):
    """演示本体（也被测试调用）：返回训练前后的 exact pass@1。"""
    model = TrainableLLM(1e9)
    out("训练前（Δ = 0，和第 1 讲的 1B ToyLLM 相同），几个情境下选 correct 的概率：")
    for name, p in context_report(model).items():
        out(f"  {pad(name, 26)} {p:.3f}")
    problems = make_problem_set(random.Random(seed), 100, 3, 8)
    sampled = evaluate(model, problems, random.Random(seed + 1))[1]
    exact = exact_pass_at_1(model, problems)
    out(f"100 道 3~8 步题上的 pass@1（temperature = 1）：采样估计 {sampled:.3f}，精确值 {exact:.3f}")
    out("")
    out("一次短训练：拒绝采样微调（每道题采样 4 次，只留做对的解答，做 SFT），训练题和测试题不同。")
    train = make_problem_set(random.Random(seed + 100), 200, 3, 8)
    rng = random.Random(seed + 2)
    trained = model.copy(name="1B + RFT")
    data = [(p, s) for p in train for s in (trained.generate(p, rng) for _ in range(4)) if s.correct]
    sft(trained, data, epochs=30, lr=2.0)
    after = exact_pass_at_1(trained, problems)
    out(f"保留了 {len(data)} 份做对的解答。")
    out(context_table(model, trained))
    out(f"测试题上的路径 pass@1：{exact:.3f} → {after:.3f}")
    big = exact_pass_at_1(ToyLLM(1e12), problems)
    out(f"（对照：1T 的基础模型是 {big:.3f}）")
    return exact, after


def main(args=None):
    run_demo()
    return 0
