"""
检查：第 6 讲最初的工具模块 trainable_llm.py（不在本仓库里）能不能原样跑在 toyllm 上。

它 `from toy_llm import ...` 第 1 讲的模块；这里用一个很小的垫片（shim）让 `toy_llm` 指向 `toyllm`：
    sys.modules["toy_llm"] = toyllm
然后 (1) 把它当作脚本原样运行（它的 __main__ 演示）；(2) 在同一批数据上比较它的 sft 和 toyllm.sft 得到的 Δ。

用法：python tools/check_reference.py [trainable_llm.py 的路径]
    默认路径是仓库旁边的 ../shared/reference/trainable_llm.py，也可以用环境变量 TOYLLM_REFERENCE 指定。
找不到文件时退出码为 2（不是"通过"）。
"""

import importlib.util
import os
import random
import runpy
import sys
from pathlib import Path

import toyllm

ROOT = Path(__file__).resolve().parent.parent


def find_reference(argv):
    if len(argv) > 1:
        return Path(argv[1])
    if os.environ.get("TOYLLM_REFERENCE"):
        return Path(os.environ["TOYLLM_REFERENCE"])
    return ROOT.parent / "shared" / "reference" / "trainable_llm.py"


def main(argv):
    path = find_reference(argv)
    if not path.is_file():
        print(f"✗ 找不到参考模块 {path}", file=sys.stderr)
        return 2
    sys.modules["toy_llm"] = toyllm
    print(f"== 原样运行 {path.name} ==")
    runpy.run_path(str(path), run_name="__main__")

    spec = importlib.util.spec_from_file_location("trainable_llm_reference", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    problems = toyllm.make_problem_set(random.Random(3), 40, 3, 8)
    teacher = toyllm.ToyLLM(1e11)
    rng = random.Random(4)
    data = [(p, teacher.generate(p, rng)) for p in problems]
    theirs = ref.sft(ref.TrainableLLM(1e9), data, epochs=10, lr=2.0)
    ours = toyllm.sft(toyllm.TrainableLLM(1e9), data, epochs=10, lr=2.0)
    worst = 0.0
    for key in toyllm.CONTEXTS:
        a = theirs.delta.get(key, [0.0, 0.0, 0.0])
        b = ours.delta[key].tolist()
        worst = max(worst, max(abs(x - y) for x, y in zip(a, b)))
    same_report = all(abs(theirs.p_correct(k) - ours.p_correct(k)) < 1e-12 for _, k in toyllm.HARD_CONTEXTS)
    rng_a, rng_b = random.Random(5), random.Random(5)
    ev_a = ref.evaluate(theirs, problems, rng_a, n=3, ks=(1, 2))
    ev_b = toyllm.evaluate(ours, problems, rng_b, n=3, ks=(1, 2))
    print(f"== sft：两边 Δ 的最大差 {worst:.3g}；p_correct 一致：{same_report}；evaluate：{ev_a} vs {ev_b} ==")
    if worst > 1e-12 or not same_report or ev_a != ev_b:
        print("✗ 参考模块和 toyllm 的结果不一致", file=sys.stderr)
        return 1
    print("✓ 参考模块原样运行，sft / p_correct / evaluate 与 toyllm 完全一致")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
