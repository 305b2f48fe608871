"""
make pretrain：照 toyllm/tinylm/pretrained.py 的配方训练三种大小的小 transformer，量留出题，写权重和清单。

【用法】（在仓库根目录；Makefile 已经设好 OPENBLAS_CORETYPE）
    .venv/bin/python tools/pretrain.py                  # 三种大小，两个进程同时训练（约 12 分钟）
    .venv/bin/python tools/pretrain.py --only small     # 只训练一种
    .venv/bin/python tools/pretrain.py --jobs 1         # 一个进程，一个接一个
【思路】每个大小一个进程，BLAS 一个线程、内核固定（toyllm.blas），所以不管几个进程同时跑，数字逐位相同。
    训练中第 50 步记下参数的指纹（pretrained.fingerprint）；测试重跑 50 步核对它，证明文件就是这个命令做出来的。
    写出 toyllm/tinylm/weights/<名字>.safetensors 和 <名字>.json（清单），都是原子地写。
"""

import argparse
import json
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toyllm import __version__, blas  # noqa: E402

blas.pin_blas_kernel()

import numpy as np  # noqa: E402

from toyllm.files import atomic_write  # noqa: E402
from toyllm.tinylm import pretraining as P  # noqa: E402


def train_one(name, position=0):
    """训练一种大小（进度条在第 position 行），写文件，返回清单。"""
    from tqdm import tqdm
    examples = P.training_examples()
    marks = {}
    bar = tqdm(total=P.RECIPE["sft"]["steps"], desc=f"{name:<5}", position=position, mininterval=1.0)

    def mark(it, model):
        bar.update()
        if it == P.FINGERPRINT_STEP:
            marks["fingerprint"] = P.fingerprint(model)

    t0 = time.process_time()
    model, history = P.pretrain(name, examples, callback=mark)
    seconds = time.process_time() - t0
    bar.close()
    result = P.evaluate(model)
    P.WEIGHTS.mkdir(exist_ok=True)
    sha = P.save_weights(model, P.WEIGHTS / f"{name}.safetensors")
    info = {"name": name, "file": f"{name}.safetensors", "sha256": sha, "format": P.FORMAT, "config": model.config,
            "n_params": int(model.n_params), "lr": P.SIZES[name]["lr"], "recipe": P.RECIPE, "training_examples": len(examples),
            "fingerprint_step": P.FINGERPRINT_STEP, "fingerprint": marks["fingerprint"],
            "final_loss": round(float(np.mean(history["loss"][-100:])), 6), "heldout": result,
            "cpu_seconds": round(seconds, 1), "made_by": "make pretrain (tools/pretrain.py)",
            "toyllm_version": __version__, "numpy_version": np.__version__, "blas_coretype": blas.blas_kernel().get("内核"),
            "machine": platform.machine()}
    atomic_write(P.WEIGHTS / f"{name}.json", (json.dumps(info, ensure_ascii=False, indent=1) + "\n").encode())
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=P.PRETRAINED, action="append", help="只训练这一种（可以写几次）")
    ap.add_argument("--jobs", type=int, default=2, help="几个进程同时训练（默认 2）")
    args = ap.parse_args(argv)
    names = sorted(args.only or P.PRETRAINED, key=lambda n: -P.SIZES[n]["model"]["d"])   # 最大的最先开始
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        infos = list(pool.map(train_one, names, range(len(names))))
    print(f"\n{'名字':<8}{'参数':>10}{'CPU 秒':>10}{'留出题贪心准确率':>18}")
    for info in sorted(infos, key=lambda i: i["n_params"]):
        print(f"{info['name']:<8}{info['n_params']:>10,}{info['cpu_seconds']:>10.0f}{info['heldout']['greedy']:>18.3f}")
    print(f"一共 {time.perf_counter() - t0:.0f} 秒（墙上时间）；文件在 {P.WEIGHTS.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
