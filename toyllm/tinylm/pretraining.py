"""
预训练好的小 transformer：仓库里带着三种大小的权重，notebook 09 从它们开始做 RL。

【思路】真正的课程都这样做：先花一次时间把网络训练好，把权重发给学生，notebook 从权重开始。
    三种大小（PRETRAINED，从小到大）用同一个配方：玩具的 1~2 步题写成思维链（problem_example），
    SFT（teacher forcing），学习率先预热、再余弦衰减。配方就是下面的 RECIPE 和 SIZES，make pretrain（tools/pretrain.py）
    照着它训练、量留出题、写文件。
    每个大小两个文件，在 toyllm/tinylm/weights/ 里：
        <名字>.safetensors   权重（safetensors：领域通用的格式，纯数据、不能执行代码；用它的 numpy 接口，不要 torch）
        <名字>.json          清单：网络的配置、数据和训练的种子、步数、留出题上的准确率、第 50 步的参数指纹、文件的 sha256
【边界】文件不存在、不是 safetensors、被截断、形状或类型不对、和清单的 sha256 不符，都报带文件名的中文 ValueError
    （文件不存在时是 FileNotFoundError）。保存是原子的：先写临时文件，再换名，中途出错旧文件原封不动。
"""

import hashlib
import json
import random
from pathlib import Path

import numpy as np

from .._checks import as_choice
from ..arithmetic import CONTEXT_NAMES, make_problem_set
from ..blas import one_blas_thread
from ..saving import bad_file, check_shapes, load_arrays, save_arrays
from ..toy_llm import ToyLLM
from .analysis import accuracy, step_errors
from .model import TinyLM, check_model
from .text import WIDTH, problem_example
from .train import sft

WEIGHTS = Path(__file__).with_name("weights")
"""仓库里带的权重和清单所在的文件夹。"""
PRETRAINED = ("small", "base", "large")
"""预训练好的网络的名字，从小到大。"""
DEFAULT = "base"
"""pretrained() 不给名字时用的那一个（约 10 万个参数）。"""
SIZES = {"small": {"model": {"d": 32, "heads": 4, "layers": 2}, "lr": 3e-3},
         "base": {"model": {"d": 64, "heads": 4, "layers": 2}, "lr": 3e-3},
         "large": {"model": {"d": 128, "heads": 4, "layers": 2}, "lr": 1e-3}}
"""每个名字的网络形状和 SFT 的学习率（最大的那个用 3e-3 时训练损失反而比 base 高：步子太大，所以用 1e-3）。"""
RECIPE = {"model": {"context": 25, "seed": 0},
          "data": {"seed": 1, "count": 600_000, "min_steps": 1, "max_steps": 2, "teacher": 1e10},
          "heldout": {"seed": 12345, "count": 1000, "min_steps": 1, "max_steps": 2},
          "sft": {"steps": 10_000, "batch_size": 64, "warmup": 200, "schedule": "cosine", "seed": 0}}
"""
三种大小共用的配方：网络的上下文和初始化种子；训练题（count 道、种子 seed，解答是玩具 ToyLLM(teacher) 采样写出的，
有对有错）；留出题（种子不同，且不在训练题里；准确率按正确答案算）；SFT 的步数、批大小、预热、余弦衰减、选题种子。
"""
FORMAT = "toyllm-tinylm"
FINGERPRINT_STEP = 50
"""清单里记下第几步之后的参数指纹（测试重跑这么多步，逐位对照）。"""


def heldout_problems():
    """留出题：RECIPE["heldout"] 的 1,000 道 1~2 步题（toyllm.arithmetic.Problem）。清单里的准确率就是在它们上面量的。"""
    spec = RECIPE["heldout"]
    return make_problem_set(random.Random(spec["seed"]), spec["count"], spec["min_steps"], spec["max_steps"])


def training_examples():
    """
    训练题：RECIPE["data"] 的题，解答是玩具 ToyLLM(teacher) 一步一步采样写下的值（Example），去掉和留出题一样的算式。

    【思路】真实的预训练数据也不全对：网络学的是老师（第 1 讲的玩具）的分布，连同它的 bug 和粗心。所以网络采样时
        会犯玩具那样的错，贪心解码（取最可能的写法）却常常是对的，RL 有东西可以"磨尖"（notebook 09）。
        老师写下的数超出 0 … 9999（写不进 4 位）时，同一道题重新采样一次。
    """
    spec = RECIPE["data"]
    rng, teacher = random.Random(spec["seed"]), ToyLLM(spec["teacher"])
    held = {problem_example(p).prompt for p in heldout_problems()}
    examples = []
    for problem in make_problem_set(rng, spec["count"], spec["min_steps"], spec["max_steps"]):
        values = teacher.generate(problem, rng).values
        while not all(0 <= v < 10 ** WIDTH for v in values):
            values = teacher.generate(problem, rng).values
        example = problem_example(problem, values=values)
        if example.prompt not in held:
            examples.append(example)
    return examples


def fingerprint(model):
    """参数的指纹：按名字的顺序把每个数组的字节连起来的 sha256（逐位相同才相同）。"""
    h = hashlib.sha256()
    for name, value in model.params.items():
        h.update(name.encode())
        h.update(np.ascontiguousarray(value).tobytes())
    return h.hexdigest()


def new_model(name):
    """配方里名字为 name 的网络，刚初始化（还没训练）。"""
    name = as_choice("name", name, PRETRAINED)
    return TinyLM(**SIZES[name]["model"], **RECIPE["model"])


def pretrain(name, examples=None, progress=False, callback=None):
    """
    照配方从头训练名字为 name 的网络（make pretrain 用它；测试用它重跑前 50 步）。

    【参数】name：PRETRAINED 之一；examples：训练题（默认 training_examples()；几种大小一起训练时传同一份省时间）；
        progress：是否打印进度（见 sft）；callback：交给 sft（返回 True 就提前停下）
    【返回】(model, history)
    """
    model = new_model(name)
    history = sft(model, training_examples() if examples is None else examples, progress=progress, callback=callback,
                  lr=SIZES[name]["lr"], **RECIPE["sft"])
    return model, history


@one_blas_thread
def evaluate(model):
    """留出题上的贪心准确率，和每个情境里（前面的步都对时）这一步做对的比例：{"greedy": …, "contexts": {情境名: …}}。"""
    problems = heldout_problems()
    counts = step_errors(model, problems)
    return {"greedy": accuracy(model, [problem_example(p) for p in problems]),
            "contexts": {CONTEXT_NAMES[key]: {"steps": c["steps"], "correct": c["correct"]} for key, c in counts.items()}}


# =============================================================================
# 文件：safetensors 权重（toyllm.saving 的格式）+ JSON 清单
# =============================================================================
def save_weights(model, path, history=None, metadata=None):
    """
    把 model 的参数原子地存成 safetensors 文件（saving.save_arrays）；网络的构造参数存在文件头里。
    给了 history（rl_train / sft 返回的 History）时，训练记录存在旁边的 .history.json 里。返回文件的 sha256。

    【例子】save_weights(model, "my_model.safetensors")；load_weights("my_model.safetensors")
    """
    check_model(model)
    return save_arrays(path, model.params, {"format": FORMAT, "config": json.dumps(model.config, sort_keys=True)},
                       history, metadata)


def load_weights(path, sha256=None):
    """
    读 save_weights 写的文件，返回 TinyLM。sha256 给了时先核对文件的 sha256。

    【边界】不存在：FileNotFoundError；不是 safetensors、被截断、缺参数、形状或类型不对、有 NaN、sha256 不符：ValueError，
        都写出文件名。
    """
    tensors, header = load_arrays(path, FORMAT, sha256)
    try:
        config = json.loads(header["config"])
        model = TinyLM(**config)
    except (KeyError, TypeError, ValueError) as e:
        raise bad_file(path, f"的文件头里网络的配置 config 不对：{e}") from None
    check_shapes(path, tensors, model.params)
    model.params.update({name: array.copy() for name, array in tensors.items()})
    return model


def manifest(name=None):
    """名字为 name（默认 DEFAULT）的预训练网络的清单（dict）：配置、种子、步数、留出题准确率、sha256。"""
    name = DEFAULT if name is None else as_choice("name", name, PRETRAINED)
    path = WEIGHTS / f"{name}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"清单 {path} 不存在；维护者运行 make pretrain 生成它") from None
    except ValueError as e:
        raise ValueError(f"清单 {path} 不是合法的 JSON：{e}") from None


def pretrained(name=None):
    """
    仓库里带的预训练网络：name 是 PRETRAINED 之一（"small"、"base"、"large"，从小到大），None 是 DEFAULT。

    【返回】TinyLM（每次一个新的副本，随便训练）
    【例子】base = pretrained(); pretrained("large").n_params → 约 40 万
    """
    name = DEFAULT if name is None else as_choice("name", name, PRETRAINED)
    info = manifest(name)
    return load_weights(WEIGHTS / info["file"], sha256=info["sha256"])
