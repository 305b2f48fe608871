"""tools/train_cli.py（维护者的命令行训练）：选项、预设覆盖、输出、保存、画图、Ctrl+C。"""

import argparse
import dataclasses
import io
import subprocess
import sys

import tools.train_cli as cli
from toyllm.peers import PeerOptions
from toyllm.rl import PRESETS, RLConfig
from toyllm.trainable import TrainableLLM

from paths import ROOT


def _args(*argv):
    return cli.build_parser().parse_args(list(argv))


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_options_override_the_preset():
    cfg = cli.build_config(_args("--preset", "dapo", "--iters", "7", "--seed", "3", "--eps-high", "0.3", "--no-clip",
                                 "--kl-estimator", "k1"))
    assert cfg == PRESETS["dapo"].replace(iterations=7, seed=3, eps_high=0.3, clip=False, kl_estimator="k1")
    assert cli.build_config(_args()) == RLConfig()
    assert cli.build_config(_args("--preset", "grpo", "--dynamic-sampling")).dynamic_sampling


def test_help_lists_every_option_with_its_default():
    parser = cli.add_arguments(argparse.ArgumentParser(prog="train"))
    text = parser.format_help()
    fields = {f.name for f in dataclasses.fields(RLConfig)[:-1] + dataclasses.fields(PeerOptions)} - {"seed"}
    assert fields == {field for _, field, _, _ in cli._OPTIONS}     # RLConfig 自己的选项（peer 除外）和 toyllm.peers 的
    for flag, _, _, _ in cli._OPTIONS:
        assert flag in text
    for flag in ("--preset", "--size", "--seed", "--save", "--plot", "--n-train", "--table-every"):
        assert flag in text
    assert text.count("默认") >= len(cli._OPTIONS) + 8
    assert "gspo、cispo、sapo、gmpo、clip_cov、kl_cov 为 4" in text                         # μ 的默认值随预设变化


def test_train_prints_tables_and_saves_and_plots(tmp_path):
    out = _Tty()
    save, plot = tmp_path / "m.safetensors", tmp_path / "curves.png"
    code = cli.main(_args("--iters", "6", "--table-every", "3", "--n-train", "64", "--n-heldout", "30",
                          "--save", str(save), "--plot", str(plot)), out=out)
    text = out.getvalue()
    assert code == 0
    assert "路径pass@1" in text and "\r训练" in text and "/6 [" in text  # 表格 + tqdm 进度条
    assert "训练前后每个情境选 correct 的概率" in text and "乘两位数、被乘数 ≥ 100" in text
    from tools.checkpoint import load_history, load_model
    model = load_model(str(save))
    assert isinstance(model, TrainableLLM) and model.params.any()
    doc = load_history(str(save))
    assert doc["metadata"]["algorithm"] == "grpo" and doc["metadata"]["options"]["iterations"] == 6
    assert len(doc["history"]["iteration"]) == 6
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_not_a_tty_prints_plain_lines():
    out = io.StringIO()
    assert cli.main(_args("--iters", "4", "--table-every", "2", "--n-train", "40", "--n-heldout", "20",
                          "--batch-problems", "8"), out=out) == 0
    text = out.getvalue()
    assert "\r" not in text and "\033" not in text
    rows = [line for line in text.splitlines() if line.strip().split(" ")[0] in ("2", "4")]
    assert len(rows) == 2


def test_bad_option_is_reported_in_chinese(capsys):
    assert cli.main(_args("--group-size", "1", "--iters", "2"), out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "group_size" in err and "选项不合法" in err


def test_ctrl_c_keeps_the_model_and_still_saves(tmp_path, monkeypatch):
    real = cli.train

    def interrupted_train(model, cfg, train_set, heldout, callback=None):
        def cb(hist, m):
            callback(hist, m)
            if hist.n_rows == 2:
                raise KeyboardInterrupt
        return real(model, cfg, train_set, heldout, callback=cb)

    monkeypatch.setattr(cli, "train", interrupted_train)
    out, save = io.StringIO(), tmp_path / "partial.json"
    code = cli.main(_args("--iters", "10", "--n-train", "40", "--n-heldout", "20", "--batch-problems", "8",
                          "--save", str(save)), out=out)
    assert code == 130 and "中断" in out.getvalue() and "2 / 10" in out.getvalue() and save.exists()


def test_script_runs():
    proc = subprocess.run([sys.executable, "tools/train_cli.py", "--iters", "2", "--n-train", "40",
                           "--n-heldout", "20", "--batch-problems", "8"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "用 GRPO 训练 1B 模型" in proc.stdout and proc.stderr == ""


def test_options_and_the_config_docstring_share_one_source():
    """每个选项的说明和 RLConfig 文档里的那一行出自同一个字段的 metadata；类型和可选值也来自字段。"""
    parser = cli.add_arguments(argparse.ArgumentParser(prog="train"))
    actions = {a.dest: a for a in parser._actions}
    own = dataclasses.fields(RLConfig)[:-1]                     # 最后一个字段 peer 装 toyllm.peers 的选项，不是命令行选项
    for f in own + dataclasses.fields(PeerOptions):
        assert f not in own or f"{f.name}：{f.metadata['help']}" in RLConfig.__doc__
        if f.name == "seed":
            continue
        action = actions[f.name]
        assert action.help.startswith(f.metadata["help"] + "。默认")
        assert f.type is bool or action.type is f.type
        assert action.choices == f.metadata["choices"]
