"""
toyllm.plotstyle：中文能画出来，而且仓库里用到的每个中文字符都在自带字体里。

【思路】
    · 画一张带中文标题、坐标轴、图例和负数刻度的图，保存成 PNG / PDF / SVG，确认 matplotlib
      没有报 "Glyph ... missing from font"（缺字）这类警告或日志。作为对照，不调用
      use_chinese_font() 时同样的图**会**报缺字 —— 说明这个测试确实能发现问题。
    · 用 fontTools 读出字体的 cmap（字符 -> 字形的表），检查仓库里 *.py / *.ipynb / *.md 中出现的
      每个中文字符都在表里。加了新的生僻字、测试失败时：运行 tools/make_font_subset.py 重新生成字体。
"""

import importlib.util
import io
import logging
import warnings
from pathlib import Path

import matplotlib
import pytest
from fontTools.ttLib import TTFont
from matplotlib.figure import Figure

from toyllm import plotstyle

from paths import ROOT


def _load_font_script():
    spec = importlib.util.spec_from_file_location("make_font_subset", ROOT / "tools" / "make_font_subset.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


subset_script = _load_font_script()


@pytest.fixture(scope="module")
def cmap():
    return TTFont(plotstyle.font_path(), lazy=True).getBestCmap()


@pytest.fixture
def rc():
    """每个测试结束后恢复 matplotlib 的全局设置，互不影响。"""
    with matplotlib.rc_context():
        yield


def draw(formats=("png", "pdf", "svg")):
    """画一张有中文和负数刻度的图，保存到内存；返回期间的 warnings。"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = Figure(figsize=(6, 4))
        ax = fig.subplots()
        ax.plot([-3, -1, 0, 2], [0.2, -0.5, 0.9, 0.4], label="正确率（pass@1）")
        ax.plot([-3, 2], [0, 0], label="基线：β = 0.1，ε ≈ 0.2")
        ax.set_title("规模与强化学习：参数量 × 准确率，Δ ≥ 0 → π 更好")
        ax.set_xlabel("对数参数量（相对 10 亿）")
        ax.set_ylabel("优势 −1 ≤ A ≤ 1")
        ax.legend(title="图例")
        fig.text(0.01, 0.01, "《第 6 讲》【注】θ、μ、∑ 都能显示！")
        for fmt in formats:
            fig.savefig(io.BytesIO(), format=fmt)
    return caught


def glyph_problems(caught, records):
    messages = [str(w.message) for w in caught] + [r.getMessage() for r in records]
    return [m for m in messages if "Glyph" in m or "missing from font" in m or "findfont" in m]


def test_font_file_is_shipped_and_small():
    path = plotstyle.font_path()
    assert path.is_file(), f"找不到字体文件 {path}"
    assert path.parent.name == "fonts" and path.parent.parent.name == "toyllm"
    assert path.stat().st_size < 2.5e6
    assert (path.parent / "OFL.txt").is_file(), "OFL 许可证文件必须和字体放在一起"


def test_use_chinese_font_sets_rcparams(rc):
    family = plotstyle.use_chinese_font()
    assert family == plotstyle.FAMILY == "ToyLLM Sans SC"
    assert matplotlib.rcParams["font.sans-serif"][0] == family
    assert matplotlib.rcParams["font.family"][0] == "sans-serif"
    assert matplotlib.rcParams["axes.unicode_minus"] is False


def test_use_chinese_font_is_idempotent(rc):
    from matplotlib import font_manager
    for _ in range(3):
        plotstyle.use_chinese_font()
    assert matplotlib.rcParams["font.sans-serif"].count(plotstyle.FAMILY) == 1
    registered = [f for f in font_manager.fontManager.ttflist if Path(f.fname) == plotstyle.font_path()]
    assert len(registered) == 1
    assert Path(font_manager.findfont(plotstyle.FAMILY, fallback_to_default=False)) == plotstyle.font_path()


def test_chinese_figure_draws_without_missing_glyphs(rc, caplog):
    plotstyle.use_chinese_font()
    with caplog.at_level(logging.DEBUG, logger="matplotlib"):
        caught = draw()
    problems = glyph_problems(caught, [r for r in caplog.records if r.levelno >= logging.WARNING])
    assert not problems, f"画中文时出现了缺字警告：{problems}"


def test_symbols_missing_from_the_font_fall_back_to_dejavu(rc):
    plotstyle.use_chinese_font()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = Figure(figsize=(3, 2))
        fig.suptitle("log₁₀ N ∼ 规模")     # ₁₀ 和 ∼ 不在中文字体里，由 DejaVu Sans 补上
        fig.savefig(io.BytesIO(), format="png")
    assert not glyph_problems(caught, [])


def test_without_the_font_the_same_figure_reports_missing_glyphs(rc):
    """对照组：matplotlib 默认设置下中文缺字 —— 证明上面的测试能发现问题。"""
    matplotlib.rcdefaults()
    assert glyph_problems(draw(formats=("png",)), [])


def test_required_characters_are_in_the_font(cmap):
    required = "，。、；：？！“”‘’（）《》【】…—·" + "≥≤≈×−→∑Δπθεβμ" + "αγδλσφω"
    required += "".join(chr(c) for c in range(0x20, 0x7F))
    missing = [ch for ch in required if ord(ch) not in cmap]
    assert not missing, f"字体缺少这些字符：{''.join(missing)!r}"


def test_gb2312_level1_hanzi_are_in_the_font(cmap):
    hanzi = subset_script.gb2312_level1()
    assert len(hanzi) == 3755
    missing = [ch for ch in hanzi if ord(ch) not in cmap]
    assert not missing, f"字体缺少 {len(missing)} 个 GB2312 一级汉字：{''.join(missing[:50])}"


def test_every_chinese_character_in_the_repo_is_in_the_font(cmap):
    used = {ch for ch in subset_script.repo_chars() if subset_script.is_cjk(ch)}
    assert len(used) > 50, "没有在仓库里找到中文字符：repo_chars() 可能找错了目录"
    missing = sorted(ch for ch in used if ord(ch) not in cmap)
    assert not missing, (
        f"仓库里用到的这些字符不在自带字体里：{''.join(missing)}\n"
        f"请重新生成字体：apt-get install -y fonts-noto-cjk && python tools/make_font_subset.py")


def test_is_cjk_examples():
    assert all(subset_script.is_cjk(ch) for ch in "中文，。（）《》")
    assert not any(subset_script.is_cjk(ch) for ch in "aZ0-≥Δπ")


# =============================================================================
# 图在学生屏幕上的字号（规则见 tests/e2e/test_browser_fit.py 和 /work/wt/brief/rules.md）
# =============================================================================
SMALL_NAMES = {"xx-small", "x-small", "small", "smaller"}
SIZE_KEYWORDS = {"fontsize", "labelsize", "title_fontsize"}


def _python_files():
    yield from sorted((ROOT / "toyllm").rglob("*.py"))
    yield from sorted((ROOT / "notebooks" / "src").glob("*.py"))
    yield from sorted((ROOT / "notebooks" / "homework" / "src").glob("*.py"))
    yield from sorted((ROOT / "tools").glob("*.py"))


def small_sizes(source, name="<源代码>"):
    """源代码里比 MIN_FONT_PT 小的字号设置：fontsize=8、labelsize="small"、{"font.size": 9}；返回 [(行号, 说明)]。"""
    import ast

    def too_small(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value < plotstyle.MIN_FONT_PT
        return isinstance(node, ast.Constant) and node.value in SMALL_NAMES

    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.keyword) and node.arg in SIZE_KEYWORDS and too_small(node.value):
            found.append((node.value.lineno, f"{node.arg}={node.value.value!r}"))
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.endswith("size")
                        and "." in key.value and too_small(value)):
                    found.append((value.lineno, f"{key.value!r}: {value.value!r}"))
    return sorted(found)


def test_small_sizes_finds_what_it_should():
    """对照：这个扫描确实能发现小字号（不然下面的测试永远通过）。"""
    assert [m for _, m in small_sizes("ax.legend(fontsize=8)\nax.tick_params(labelsize='small')\n"
                                      "rc = {'font.size': 9, 'legend.fontsize': 12}")] == \
        ["fontsize=8", "labelsize='small'", "'font.size': 9"]
    assert small_sizes("ax.legend(fontsize=10)\nmodel = ToyLLM(size=8)\nd = {'batch_size': 4}") == []


def test_no_figure_text_smaller_than_min_font_pt():
    """
    toyllm、讲课和作业的源文件里没有比 MIN_FONT_PT 小的字号：tests/e2e/test_browser_fit.py 按 MIN_FONT_PT 算图里最小的字
    缩放以后有多大，这个扫描保证图里确实没有更小的字。
    """
    bad = [f"{path.relative_to(ROOT)}:{line} {what}"
           for path in _python_files() for line, what in small_sizes(path.read_text(encoding="utf-8"), str(path))]
    assert not bad, f"字号小于 {plotstyle.MIN_FONT_PT} 磅（缩小到输出区以后看不清）：\n" + "\n".join(bad)


def test_default_text_sizes_are_at_least_min_font_pt(rc):
    """use_chinese_font 之后，matplotlib 默认的各种字号（刻度、图例、标题……）都不小于 MIN_FONT_PT。"""
    from matplotlib.font_manager import FontProperties

    plotstyle.use_chinese_font()
    keys = [k for k in matplotlib.rcParams if k.endswith("size") and ("font" in k or "labelsize" in k)
            and matplotlib.rcParams[k] is not None and k not in ("font.size",) and "mathtext" not in k]
    assert "xtick.labelsize" in keys and "legend.fontsize" in keys
    for key in keys + ["font.size"]:
        assert FontProperties(size=matplotlib.rcParams[key]).get_size_in_points() >= plotstyle.MIN_FONT_PT, key


def test_max_figure_width_keeps_min_text_px():
    """MAX_FIGURE_WIDTH_IN 宽的图缩小到输出区以后，MIN_FONT_PT 的字还有 MIN_TEXT_PX 像素；再宽 5% 就不够了（上限是紧的）。"""
    def px(width_in):
        return plotstyle.MIN_FONT_PT / 72 * plotstyle.OUTPUT_WIDTH_PX / width_in

    assert px(plotstyle.MAX_FIGURE_WIDTH_IN) >= plotstyle.MIN_TEXT_PX > px(plotstyle.MAX_FIGURE_WIDTH_IN * 1.05)


def test_no_figure_wider_than_max_figure_width():
    """源文件里写死的 figsize=(宽, 高) 和 toyllm.plots 的 WIDE 都不超过 MAX_FIGURE_WIDTH_IN。"""
    import ast

    from toyllm import plots

    assert plots.WIDE[0] <= plotstyle.MAX_FIGURE_WIDTH_IN
    bad = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.keyword) and node.arg == "figsize" and isinstance(node.value, ast.Tuple)
                    and isinstance(node.value.elts[0], ast.Constant)
                    and node.value.elts[0].value > plotstyle.MAX_FIGURE_WIDTH_IN):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} figsize={ast.unparse(node.value)}")
    known = {"toyllm/dashboard_plots.py"}     # Voilà 面板：自己的页面和字号（plotstyle.DASHBOARD_STYLE，≥ 11 磅）
    bad = [b for b in bad if b.split(":")[0] not in known]
    assert not bad, f"图比 {plotstyle.MAX_FIGURE_WIDTH_IN} 英寸宽，缩小以后字太小：\n" + "\n".join(bad)
