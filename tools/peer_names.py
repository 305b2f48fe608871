"""
从 TRL 和 verl 的固定提交里取出名字表：tests/peers/peer_names.json（tests/peers/test_peers.py 拿它核对 toyllm.peers 的对照表）。

【思路】对照表 toyllm.peers.ROWS 的每一格写着对方的名字和出处（"文件:行"）。这里从源码里取出：
    1. TRL 的 GRPOConfig 能接受的全部字段：trl/trainer/grpo_config.py、base_config.py（提交 TRL_COMMIT），
       加上它继承的 transformers TrainingArguments 的字段（transformers TRANSFORMERS_VERSION 的 training_args.py）；
    2. verl 的 PPO 训练器的全部配置路径：verl/trainer/config/_generated_ppo_trainer.yaml（提交 VERL_COMMIT，
       verl 自己由 ppo_trainer.yaml 展开生成的完整配置）展平成 "a.b.c"；
    3. 对照表引用的每一行的原文。
    测试检查：对照表用到的名字都在 1、2 里，引用的行存在、而且写着那个名字。

【用法】（在仓库根目录；两个仓库是 git 目录，要有固定的提交；training_args.py 取自装好的 transformers 5.25.0）
    .venv/bin/python tools/peer_names.py --trl 路径/trl/.git --verl 路径/verl/.git \
        --transformers .venv-peers/lib/python3.11/site-packages/transformers/training_args.py
    加 --check 只比较，不写文件。
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from toyllm.peers import ROWS, TRANSFORMERS_VERSION, TRL_COMMIT, VERL_COMMIT  # noqa: E402

OUT = ROOT / "tests" / "peers" / "peer_names.json"
FIELD_RE = re.compile(r"^    ([a-z_][a-z0-9_]*): [^=\n]+= field\(", re.M)


def git_show(gitdir, commit, path):
    return subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def flatten(node, prefix=""):
    """{"a": {"b": 1}} → ["a", "a.b"]：每个节点的完整路径。"""
    out = []
    for key, value in (node or {}).items():
        path = f"{prefix}{key}"
        out.append(path)
        if isinstance(value, dict):
            out += flatten(value, path + ".")
    return out


def build(trl, verl, training_args):
    reader = {"trl/": lambda p: git_show(trl, TRL_COMMIT, p),
              "transformers/": lambda p: Path(training_args).read_text(encoding="utf-8")}
    ta = Path(training_args).read_text(encoding="utf-8")
    fields = set(FIELD_RE.findall(ta))
    for path in ("trl/trainer/grpo_config.py", "trl/trainer/base_config.py"):
        fields |= set(FIELD_RE.findall(git_show(trl, TRL_COMMIT, path)))
    config = yaml.safe_load(git_show(verl, VERL_COMMIT, "verl/trainer/config/_generated_ppo_trainer.yaml"))
    lines, cache = {}, {}
    for row in ROWS:
        for rule in (row.trl, row.verl):
            if not rule.source:
                continue
            path, line = rule.source.rsplit(":", 1)
            read = next((f for p, f in reader.items() if path.startswith(p)), lambda p: git_show(verl, VERL_COMMIT, p))
            text = cache.setdefault(path, read(path)).splitlines()
            lines[rule.source] = text[int(line) - 1].strip()
    return {"trl": {"commit": TRL_COMMIT, "transformers": TRANSFORMERS_VERSION, "fields": sorted(fields)},
            "verl": {"commit": VERL_COMMIT, "keys": sorted(flatten(config))},
            "lines": dict(sorted(lines.items()))}


def main(argv=None):
    parser = argparse.ArgumentParser(description="从 TRL、verl 的固定提交生成 tests/peers/peer_names.json")
    parser.add_argument("--trl", required=True, help="huggingface/trl 的 git 目录")
    parser.add_argument("--verl", required=True, help="volcengine/verl 的 git 目录")
    parser.add_argument("--transformers", required=True, help=f"transformers {TRANSFORMERS_VERSION} 的 training_args.py")
    parser.add_argument("--check", action="store_true", help="只比较，不一致时退出码为 1")
    args = parser.parse_args(argv)
    text = json.dumps(build(args.trl, args.verl, args.transformers), ensure_ascii=False, indent=1) + "\n"
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print("✓ tests/peers/peer_names.json 是最新的" if same else "✗ 请重新运行 tools/peer_names.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"已写入 {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
