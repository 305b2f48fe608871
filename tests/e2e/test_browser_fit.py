"""
学生在 JupyterLab 里看到的都放得下：1280 像素宽的窗口（默认布局：左边的文件浏览器开着）里，讲课 notebook、
作业的学生版、两份讲义（JupyterLab 的 Markdown 预览）的每个输出、表格、markdown 都不超出它所在的区域，
代码单元格没有一行被截断（要横向滚动才看得全）；每张图缩放以后，图里的字不小于 MIN_TEXT_PX 像素；
HTML 表格（toyllm.tables.Table）的格子不折行。Voilà 面板和课程网站在 tests/e2e/test_voila.py、test_site.py 里用同一个量法
（browser_offline.OVERFLOW）。

【为什么在 JupyterLab 里量，不在 nbconvert 的 HTML 里量】学生用 make lab 打开 notebook。1280 像素宽时，JupyterLab
    的代码编辑区只有 846 像素（左边文件浏览器占 250 像素），nbconvert 的 HTML 有 1156 像素：在 HTML 里量，08 里
    133 个字符的代码行也"放得下"，发现不了学生看到的问题。量法和规则见 /work/wt/brief/rules.md（摘要在下面）。

【代码行】每个代码单元格的 CodeMirror 滚动区（.cm-scroller）：scrollWidth > clientWidth 就是有一行被截断了；
    失败信息列出超出的那几行（用 DOM Range 量每一行文字的右边界）。不数字符数（汉字占两个字符宽）。
【放不下】每个输出区、markdown 单元格、Markdown 预览里的每个单元（表格、文字、公式、图……）向右伸到哪里
    （能横向滚动的元素算上滚动的宽度）：超出区域的右边界就是放不下；打印的文字（<pre>）先改成不折行再量，
    所以折行的输出（一个 dict 在单词中间折断）也算放不下。失败信息写出是哪个 notebook、第几个单元格、哪一节、要多宽。
【图里的字】matplotlib 的内联图按 dpi（从 PNG 的 pHYs 块读出）画，宽于输出区的图被 CSS 缩小（max-width: 100%）。
    图里最小的字是 toyllm.plotstyle.MIN_FONT_PT 磅（tests/unit/ui/test_plotstyle.py 检查仓库里没有更小的字号设置），
    它在屏幕上是 MIN_FONT_PT × dpi / 72 × 显示宽度 / 原始宽度 像素，要 ≥ MIN_TEXT_PX。

【不用浏览器的那一半】每个 jupytext 源文件（讲课和作业）的代码行不超过 100 列（一个汉字算 2 列）：
    chromium 不在时也能发现；超长的行用 tools/wrap_code_lines.py 折开（不改变程序）。

【运行】`python -m pytest -m browser tests/e2e/test_browser_fit.py`。需要 Debian 的 chromium 和 playwright、jupyterlab
    （同 tests/e2e/test_browser.py；没有时跳过，TOYLLM_REQUIRE_BROWSER=1 时失败）。notebook 不运行，只看提交的输出；
    整个文件只启动一次 JupyterLab 和一次 chromium，每个文件用 ?reset 打开（工作区里不堆积标签页），每页只做一次
    page.evaluate；量在后台线程里先做（_measure），测试在最后逐个文件检查量到的数。每个 notebook 的第一张表存一张截图
    artifacts/tables_<名字>.png。
"""

import base64
import contextlib
import json
import shutil
import struct

import pytest
from background import Background
from browser_offline import OVERFLOW, UNITS, too_wide
from test_browser import ARTIFACTS, CHROMIUM_ARGS, _requirements, running_jupyterlab

from tools.wrap_code_lines import LIMIT, long_lines
from toyllm.plotstyle import MIN_FONT_PT, MIN_TEXT_PX

from paths import ROOT

with contextlib.suppress(ImportError):   # 在主线程里先导入 IPython：后台线程（_requirements 导入 ipywidgets）
    import IPython  # noqa: F401        和主线程（matplotlib）同时第一次导入它时会出错（见过一次）

NOTEBOOKS = tuple(sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")))
"""每一个讲课 notebook（新加的 notebook 自动包括在内）。"""
HOMEWORK = tuple(sorted((ROOT / "notebooks" / "homework" / "release").glob("*/*.ipynb")))
"""作业的学生版（学生打开的就是它们）。"""
LECTURES = (ROOT / "lectures" / "lecture01_toy_llm.md", ROOT / "lectures" / "lecture06_scaling_rl.md")
"""两份讲义：学生在 JupyterLab 里用 Markdown 预览读（用户设置里把 .md 的默认查看器设成 Markdown Preview）。"""
FILES = tuple(ROOT / "notebooks" / f"{n}.ipynb" for n in NOTEBOOKS) + HOMEWORK + LECTURES
WIDTH, HEIGHT = 1280, 900
TIMEOUT_MS = 120_000

AREAS = ".jp-OutputArea-output, .jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownViewer .jp-RenderedMarkdown"
"""量放不下的区域：输出区、markdown 单元格、Markdown 预览。"""

TABLES = """() => [...document.querySelectorAll('.jp-OutputArea-output table')].map(e => {
    const cells = [...e.querySelectorAll('td, th')];
    return {tallest: Math.max(...cells.map(c => c.getBoundingClientRect().height)),
            font: parseFloat(getComputedStyle(cells[0]).fontSize)};
})"""

LINES_CUT_OFF = """() => [...document.querySelectorAll('.jp-CodeCell .cm-scroller')]
    .filter(s => s.scrollWidth > s.clientWidth + 1)
    .map(s => {
        const right = s.getBoundingClientRect().left + s.clientWidth;
        return [...s.querySelectorAll('.cm-line')].filter(line => {
            const r = document.createRange();
            r.selectNodeContents(line);
            return r.getBoundingClientRect().right > right;
        }).map(line => line.textContent);
    })"""

IMAGES = """() => [...document.querySelectorAll('.jp-OutputArea-output img')].map(e => ({
    src: e.getAttribute('src'), natural: e.naturalWidth, shown: e.getBoundingClientRect().width}))"""


def png_dpi(data):
    """PNG（bytes）的 pHYs 块里的横向分辨率（每英寸像素）；没有 pHYs 块时返回 None。"""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("不是 PNG 文件")
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"pHYs":
            per_x, _, unit = struct.unpack(">IIB", data[pos + 8:pos + 17])
            return per_x * 0.0254 if unit == 1 else None
        if kind == b"IDAT":
            return None
        pos += 12 + length
    return None


SOURCES = tuple(sorted((ROOT / "notebooks" / "src").glob("*.py"))
                + sorted((ROOT / "notebooks" / "homework" / "src").glob("*.py")))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_source_code_lines_are_at_most_100_columns(path):
    bad = long_lines(path.read_text(encoding="utf-8"))
    assert not bad, (f"{path.relative_to(ROOT)}：{len(bad)} 行代码超过 {LIMIT} 列，在 1280 像素宽的 JupyterLab 里会被截断"
                     f"（python tools/wrap_code_lines.py {path.relative_to(ROOT)} 折开）：\n"
                     + "\n".join(f"  第 {i} 行（{n} 列）：{line.strip()[:60]}" for i, n, line in bad))


def test_long_lines_counts_chinese_as_two_columns():
    """对照：50 个汉字是 100 列（放得下），51 个就超了；markdown 单元格里的长行不算。"""
    code = "# %%\nx = 1\n"
    assert long_lines(code + "#" + "汉" * 49 + "\n") == []
    assert [n for _, n, _ in long_lines(code + "s = '" + "汉" * 48 + "'\n")] == [102]
    assert long_lines("# %% [markdown]\n# " + "汉" * 80 + "\n") == []
    hidden = "### BEGIN HIDDEN TESTS\nassert f(" + "x" * 120 + ")\n### END HIDDEN TESTS\n"
    assert long_lines(code + hidden) == []                  # 隐藏测试：学生版里没有
    assert len(long_lines(code + hidden + "y = '" + "x" * 100 + "'\n")) == 1


def test_png_dpi_reads_what_matplotlib_wrote():
    """量图里字的大小要用 dpi：matplotlib 存 PNG 时写进 pHYs 块，这里读得出来（不同的 dpi 读出不同的值）。"""
    import io

    from matplotlib.figure import Figure
    for dpi in (72, 100, 150):
        buf = io.BytesIO()
        Figure(figsize=(2, 1)).savefig(buf, format="png", dpi=dpi)
        assert png_dpi(buf.getvalue()) == pytest.approx(dpi, abs=0.1)
    with pytest.raises(ValueError):
        png_dpi(b"GIF89a")


def _expected_images(path):
    if path.suffix != ".ipynb":
        return 0
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum("image/png" in out.get("data", {}) for c in cells if c["cell_type"] == "code" for out in c["outputs"])


def _measure(tmp):
    """
    启动一次 JupyterLab（FILES 复制到临时目录，讲义的图也在）和一次 chromium，逐个打开，量出测试要看的东西：
    {文件名: {"editor": 代码编辑区宽度, "cut": 被截断的代码行（每个单元格一串）, "images": 每张图 {src, natural, shown},
    "wide": 放不下的单元（browser_offline.OVERFLOW）, "tables": 每张 HTML 表 {tallest, font}}}。
    大部分时间在等 JupyterLab 和 chromium（子进程）：在后台线程里先开始（tests/background.py），别的测试同时运行。
    """
    chromium = _requirements()
    from playwright.sync_api import sync_playwright
    found = {}
    ARTIFACTS.mkdir(exist_ok=True)
    with running_jupyterlab(tmp, FILES) as (base, token, root):
        shutil.copytree(ROOT / "lectures" / "figures", root / "figures")        # 讲义里的图：figures/…
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                for path in FILES:
                    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, locale="zh-CN")
                    try:
                        page.set_default_timeout(TIMEOUT_MS)
                        page.goto(f"{base}/lab/tree/{path.name}?reset&token={token}")
                        if path.suffix == ".md":
                            page.wait_for_selector(".jp-MarkdownViewer .jp-RenderedMarkdown h1")    # 公式和文字一起排好
                        else:
                            page.wait_for_selector(".jp-CodeCell .cm-line")
                            page.wait_for_function(
                                "n => [...document.querySelectorAll('.jp-OutputArea-output img')]"
                                ".filter(e => e.complete && e.naturalWidth > 0).length >= n",
                                arg=_expected_images(path))
                        found[path.name] = page.evaluate(
                            f"""() => ({{
                                editor: (document.querySelector('.jp-CodeCell .cm-scroller') || {{}}).clientWidth,
                                cut: ({LINES_CUT_OFF})(), images: ({IMAGES})(), tables: ({TABLES})(),
                                wide: ({OVERFLOW})({json.dumps([AREAS, UNITS, None])})}})""")
                        if path.stem in NOTEBOOKS and found[path.name]["tables"]:
                            page.locator(".jp-OutputArea-output table").first.screenshot(
                                path=str(ARTIFACTS / f"tables_{path.stem}.png"))
                    finally:
                        page.close()
            finally:
                browser.close()
    return found


BACKGROUND = Background(_measure, "fit", priority=1)
"""在浏览器里量 notebook 要一分多钟，大部分时间在等子进程：在后台先开始（tests/background.py）。"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    return BACKGROUND.get(tmp_path_factory)


@pytest.mark.browser
@pytest.mark.parametrize("name", NOTEBOOKS + tuple(p.stem for p in HOMEWORK))
def test_code_lines_and_figure_text_fit_a_1280_px_jupyterlab(name, measured):
    found = measured[f"{name}.ipynb"]
    # 布局确实是学生看到的那样：文件浏览器开着，代码区比整个窗口窄得多
    editor = found["editor"]
    assert 700 < editor < 900, f"代码编辑区 {editor} 像素：JupyterLab 的默认布局变了，请重新测量（rules.md）"

    problems = [f"代码行被截断（每行不超过 100 列，一个汉字算 2 列）：{line.strip()[:50]}…"
                for cell in found["cut"] for line in cell]

    for i, img in enumerate(found["images"]):
        if not (img["src"] or "").startswith("data:image/png;base64,"):
            continue
        dpi = png_dpi(base64.b64decode(img["src"].split(",", 1)[1]))
        assert dpi is not None, f"{name} 的第 {i} 张图没有 pHYs 块，量不出字的大小"
        text_px = MIN_FONT_PT * dpi / 72 * img["shown"] / img["natural"]
        if text_px < MIN_TEXT_PX:
            problems.append(f"第 {i} 张图太宽：{img['natural']} 像素宽，显示成 {img['shown']:.0f} 像素，"
                            f"{MIN_FONT_PT} 磅的字只有 {text_px:.1f} 像素")
    assert not problems, (f"{name} 在 {WIDTH} 像素宽的 JupyterLab 里放不下（图里的字要 ≥ {MIN_TEXT_PX} 像素，"
                          f"见 toyllm.plotstyle.MAX_FIGURE_WIDTH_IN）：\n" + "\n".join(problems))


@pytest.mark.browser
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_outputs_tables_and_markdown_fit_a_1280_px_jupyterlab(path, measured):
    """每个输出、表格、markdown（讲义在 Markdown 预览里）都不超出它的区域；打印的文字不折行（issue 40）。"""
    wide = measured[path.name]["wide"]
    assert not wide, (f"{path.relative_to(ROOT)} 在 {WIDTH} 像素宽的 JupyterLab（文件浏览器开着）里放不下"
                      f"（{len(wide)} 处；表格拆窄一些，dict 一行一个键或者用 toyllm.tables.Table）：\n" + too_wide(wide))


@pytest.mark.browser
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_tables_render_on_one_line_each(name, measured):
    """HTML 表格（toyllm.tables.Table）的格子不折行：中文、"≥"、"±" 不把格子撑成两行。"""
    tables = measured[f"{name}.ipynb"]["tables"]
    assert tables, f"{name} 里没有 HTML 表格"
    for i, info in enumerate(tables):
        assert info["tallest"] < 2.2 * info["font"], f"{name} 的第 {i} 张表有格子折成了两行"
