"""
notebook 里的 HTML 表格（toyllm.tables.Table）在真实浏览器里：中文、"≥"、"±" 不错位，1280 像素宽的窗口里不折行、不超出。

【运行】`python -m pytest -m browser tests/e2e/test_browser_tables.py`。和 tests/e2e/test_browser.py 一样用 Debian 的无头 chromium
（由 Python 版 Playwright 驱动，不运行 playwright install）；没有时跳过，TOYLLM_REQUIRE_BROWSER=1 时改为失败。
notebook 先用 nbconvert 转成 HTML（临时目录，一次转完），用 file:// 打开，不启动服务器；整个文件只启动一次 chromium，
量在后台线程里先做，测试在最后逐个 notebook 检查量到的数。截图存到 artifacts/tables_*.png。
"""

import shutil
import subprocess
import sys

import pytest
from background import Background
from test_browser import _unavailable
from paths import ROOT

pytestmark = pytest.mark.browser

NOTEBOOKS = tuple(sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")))
"""每一个讲课 notebook（新加的 notebook 自动包括在内）。"""
WIDTH = 1280


def _convert_and_measure(out):
    """
    所有讲课 notebook 用一次 nbconvert 转成 HTML（放进 out），启动一次 chromium，逐个打开，量出每张表：
    {名字: [{right: 右边界, tallest: 最高的格子, font: 字号}, ……]}，每个 notebook 的第一张表存一张截图。
    大部分时间在等 nbconvert 和 chromium（子进程）：在后台线程里先开始（tests/background.py），测试在最后检查量到的数。
    """
    chromium = shutil.which("chromium")
    if chromium is None:
        _unavailable("找不到 chromium（apt-get install -y chromium fonts-noto-cjk）")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("没有安装 playwright（pip install playwright）")
    pages = [str(ROOT / "notebooks" / f"{name}.ipynb") for name in NOTEBOOKS]
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(out), *pages],
                   check=True, capture_output=True)
    (ROOT / "artifacts").mkdir(exist_ok=True)
    found = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            for name in NOTEBOOKS:
                page = browser.new_page(viewport={"width": WIDTH, "height": 900})
                try:
                    page.goto((out / f"{name}.html").as_uri())
                    tables = page.locator("div.jp-OutputArea-output table")
                    found[name] = [tables.nth(i).evaluate(TABLE_BOX) for i in range(tables.count())]
                    if found[name]:
                        tables.first.screenshot(path=str(ROOT / "artifacts" / f"tables_{name}.png"))
                finally:
                    page.close()
        finally:
            browser.close()
    return found


TABLE_BOX = """e => {
    const cells = Array.from(e.querySelectorAll('td, th'));
    const lh = parseFloat(getComputedStyle(cells[0]).fontSize);
    return {right: e.getBoundingClientRect().right,
            tallest: Math.max(...cells.map(c => c.getBoundingClientRect().height)), font: lh};
}"""


BACKGROUND = Background(_convert_and_measure, "tables", priority=1)
"""nbconvert 和 chromium 要十几秒（子进程）：在后台先开始（tests/background.py）。"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    return BACKGROUND.get(tmp_path_factory)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_tables_render_on_one_line_each_within_the_window(name, measured):
    tables = measured[name]
    assert tables, f"{name} 里没有 HTML 表格"
    for i, info in enumerate(tables):
        assert info["right"] <= WIDTH, f"{name} 的第 {i} 张表超出了 {WIDTH} 像素的窗口"
        assert info["tallest"] < 2.2 * info["font"], f"{name} 的第 {i} 张表有格子折成了两行"
