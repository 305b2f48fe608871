"""
讲课 notebook 里太慢、不在 notebook 里从头跑的训练：维护者用这个脚本训练一次，把权重和训练记录存进 notebooks/data/。

【思路】讲课 notebook 在严格的 nbval 下要 30 秒以内跑完。notebook 08 第 8 节的思维链 SFT 要 700 步（一台笔记本上
    二十多秒），notebook 只现算前 100 步，和这里存下的记录逐位对照，后面的直接读记录。
    配方和 notebook 里的那一格相同；配方改了，notebook 的对照就不相等（它会报错），这时重新运行本脚本。
【用法】（在仓库根目录，OPENBLAS_CORETYPE=Haswell，和生成 notebook 时一样）
    python tools/notebook_records.py          # 写 notebooks/data/08_cot_sft.safetensors 和 .history.json
"""

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # python tools/notebook_records.py 时也能 import toyllm

from toyllm import tinylm as tl  # noqa: E402
from toyllm.arithmetic import make_problem_set  # noqa: E402

DATA = ROOT / "notebooks" / "data"
COT_SFT = DATA / "08_cot_sft.safetensors"
"""notebook 08 第 8 节：玩具的 1~2 步题写成思维链，新网络从头 SFT 700 步以后的权重（旁边是训练记录）。"""


def cot_sft():
    """notebook 08 第 8 节的配方：(model, history)。和 notebook 里那一格逐字相同的数据、种子和步数。"""
    toy_problems = make_problem_set(random.Random(0), 10000, 1, 2)
    toy_examples = [tl.problem_example(p) for p in toy_problems]
    cot_train, cot_heldout = toy_examples[:-400], toy_examples[-400:]
    model = tl.TinyLM(seed=0, context=25)
    hist = tl.sft(model, cot_train, steps=700, seed=0, heldout=cot_heldout[:200], eval_every=100)
    return model, hist


def main():
    t0 = time.process_time()
    model, hist = cot_sft()
    DATA.mkdir(exist_ok=True)
    meta = {**hist.meta, "steps": 700, "batch_size": 64, "made_by": "tools/notebook_records.py（notebook 08 第 8 节的配方）"}
    sha = tl.save_weights(model, COT_SFT, history=hist, metadata=meta)
    print(f"写了 {COT_SFT.relative_to(ROOT)}（sha256 {sha[:12]}…）和训练记录；用了 {time.process_time() - t0:.0f} 秒 CPU")


if __name__ == "__main__":
    main()
