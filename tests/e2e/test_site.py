"""
课程网站（make site）：构建，再用真实浏览器在**断网**的情况下打开每一页。

【检查什么】
    · 构建：jupyter-book v1 不执行 notebook、没有警告（--warningiserror）；
    · 公式：MathJax 排好了版（页面里有 mjx-container，没有 MathJax 的报错，正文里看不到原样的 $$）；
      MathJax 来自网站自己的 _static/mathjax/，不从 CDN 加载；
    · 图：每一张 <img> 都加载成功（naturalWidth > 0）；讲义的 7 张图和 notebook 的输出图都在；
    · 没有任何请求离开本机：除了 127.0.0.1 上的本地服务器，每个请求都被拦下并记录，最后必须一个都没有；
    · 目录按上课顺序（讲义 → notebook 00–07 → 作业），页面语言是中文；站内链接都指向存在的页面；
    · 1280 像素宽的窗口里，正文里的代码、输出、表格、公式都不超出正文（browser_offline.OVERFLOW，和 JupyterLab 里同一个量法）。
【运行】python -m pytest -m browser tests/e2e/test_site.py。需要 .[site]（pip install -e '.[site]'，make site 会装）
    和 Debian 的 chromium；缺了时跳过并说明原因，TOYLLM_REQUIRE_BROWSER=1（CI）时改为失败。
    截图存到 artifacts/site_lecture06.png。网站构建到临时目录（测试的是当前的源文件，不是上次 make site 的结果）。
"""

import contextlib
import functools
import http.server
import re
import subprocess
import threading
import urllib.parse

import pytest
from background import Background
from browser_offline import OVERFLOW, UNITS, offline_context, require, too_wide
from test_browser import ARTIFACTS
from paths import ROOT

pytestmark = pytest.mark.browser

TIMEOUT_MS = 60_000
# 目录（左边栏）里应当出现的页面，按上课顺序；每一项是标题的开头
TOC_ORDER = ["课程主页", "第 1 讲回顾", "第 6 讲", "来源表", "勘误与更正", "00 ·", "01 ·", "02 ·", "03 ·", "04 ·", "05 ·", "06 ·", "06b ·", "07 ·", "08 ·", "09 ·",
             "作业一", "作业二", "作业三"]
PAGES = ["site/index.html", "lectures/lecture01_toy_llm.html", "lectures/lecture06_scaling_rl.html", "lectures/sources.html",
         "lectures/errata.html",
         *[f"notebooks/{p.stem}.html" for p in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))],
         *[f"notebooks/homework/release/{p.parent.name}/{p.stem}.html"
           for p in sorted((ROOT / "notebooks" / "homework" / "release").glob("*/*.ipynb"))]]


def _build(out):
    """把网站构建到 out，返回 html 目录。构建命令和 make site 相同。"""
    exe = require("jupyter-book", "site")
    proc = subprocess.run([str(exe), "build", ".", "--config", "site/_config.yml", "--toc", "site/_toc.yml",
                           "--path-output", str(out), "--warningiserror", "--keep-going"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "jupyter-book 构建失败：\n" + (proc.stdout + proc.stderr)[-4000:]
    html = out / "_build" / "html"
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file(), "网站里没有自带 MathJax"
    return html


def _build_and_visit(out):
    """
    构建网站，再在本机提供它、在断网的 chromium 里打开每一页、逐项检查（_check_pages）。返回 (html 目录, None 或 打开页面时的异常,
    {页面: 放不下的单元}）：页面的检查失败只让 test_every_page_offline_formulas_images_toc 失败，不连累只读 html 文件的测试。
    """
    html = _build(out)
    wide = {}
    try:
        with serving(html) as server:
            _check_pages(server, wide)
        return html, None, wide
    except (Exception, pytest.fail.Exception) as e:            # noqa: BLE001 —— 交给打开页面的测试重新抛出
        return html, e, wide


BACKGROUND = Background(_build_and_visit, "site", priority=2)
"""构建网站（jupyter-book 的子进程）和在浏览器里打开每一页要半分钟：在后台先开始（tests/background.py）。"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(html 目录, 打开页面时的异常 或 None)：后台已经开始时等它做完。"""
    return BACKGROUND.get(tmp_path_factory)


@pytest.fixture(scope="module")
def site(built):
    """网站构建到临时目录，返回 html 目录。"""
    return built[0]


@contextlib.contextmanager
def serving(site):
    """在 127.0.0.1 的随机端口上提供网站（只在本机）；给出基础网址。"""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_html_does_not_point_at_a_cdn_for_mathjax(site):
    page = (site / "lectures" / "lecture06_scaling_rl.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
    assert any(s.endswith("_static/mathjax/tex-chtml.js") for s in scripts), scripts
    assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))], f"从网上加载的脚本：{scripts}"


def test_internal_links_point_at_pages_that_exist(site):
    broken = []
    for page in PAGES:
        text = (site / page).read_text(encoding="utf-8")
        for href in re.findall(r'<a [^>]*href="([^"#][^"]*)"', text):
            if href.startswith(("http:", "https:", "mailto:")):
                continue
            target = (site / page).parent / urllib.parse.unquote(href.split("#", 1)[0])
            if not target.exists():
                broken.append(f"{page} → {href}")
    assert not broken, "站内链接指向不存在的文件：\n" + "\n".join(broken)
    lecture = (site / "lectures" / "lecture06_scaling_rl.html").read_text(encoding="utf-8")
    assert 'href="../notebooks/04_evaluation.html"' in lecture, "讲义里到 notebook 的链接应当变成网站里的页面"
    assert ".ipynb\"" not in lecture


def test_source_numbers_link_to_their_row(site):
    """讲义和 notebook 里的来源编号 [S101] 链接到来源表那一行的锚点（site/_ext/source_anchors.py）。"""
    anchors = set(re.findall(r'<a id="(S\d{3})">', (site / "lectures" / "sources.html").read_text(encoding="utf-8")))
    assert anchors, "来源表的网页上没有 S 编号的锚点"
    linked, broken = 0, []
    for page in PAGES:
        for target in re.findall(r'href="[^"#]*sources\.html#(S\d{3})"', (site / page).read_text(encoding="utf-8")):
            linked += 1
            if target not in anchors:
                broken.append(f"{page} → {target}")
    assert linked > 0 and not broken, f"链接了 {linked} 次；没有锚点的：{broken}"


def test_every_page_offline_formulas_images_toc(built):
    if built[1] is not None:
        raise built[1]


def test_every_page_fits_a_1280_px_window(built):
    """1280 像素宽的窗口里（site/_static/toyllm.css 把本页目录收起来），每一页的正文都不超出（issue 40）。"""
    if built[1] is not None:
        raise built[1]
    assert set(built[2]) == set(PAGES), "有的页面没有量到"
    bad = {page: found for page, found in built[2].items() if found}
    assert not bad, "这些页面在 1280 像素宽的窗口里放不下：\n" + "\n".join(
        f"{page}：\n{too_wide(found)}" for page, found in bad.items())


def _check_pages(server, wide):
    """打开每一页逐项检查（失败就抛出）；wide（dict）里记下每一页放不下的单元。"""
    blocked = []
    ARTIFACTS.mkdir(exist_ok=True)
    typeset = {}
    images = {}
    with offline_context(blocked, viewport=(1280, 900)) as context:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        for path in PAGES:
            page.goto(f"{server}/{path}", wait_until="load")
            assert page.evaluate("document.documentElement.lang").startswith("zh"), f"{path} 的语言不是中文"
            # Sphinx 只在有公式的页面上加载 MathJax（来源表没有公式）；有公式的页面各自的个数在下面检查
            if page.evaluate("() => !!document.querySelector('script[src*=\"mathjax\"]')"):
                page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                page.evaluate("() => MathJax.startup.promise")
            typeset[path] = page.locator("mjx-container").count()
            errors = page.locator("mjx-merror").count()
            assert errors == 0, f"{path}：{errors} 个公式 MathJax 排版出错"
            visible = page.evaluate("""() => { const b = document.querySelector('article') || document.body;
                const c = b.cloneNode(true); c.querySelectorAll('pre, code, script, .highlight').forEach(e => e.remove());
                return c.innerText; }""")
            assert "$$" not in visible and "\\frac" not in visible and "\\mathbb" not in visible, (
                f"{path}：正文里有没排版的 TeX")
            page.evaluate("() => Promise.all([...document.images].map(i => i.complete ? 0 :"
                          " new Promise(r => { i.onload = i.onerror = r; })))")
            sizes = page.evaluate("() => [...document.querySelectorAll('article img')]"
                                  ".map(i => [i.getAttribute('src'), i.naturalWidth])")
            bad = [src for src, width in sizes if not width]
            assert not bad, f"{path}：这些图没有加载出来：{bad}"
            images[path] = len(sizes)
            wide[path] = page.evaluate(OVERFLOW, ["article.bd-article", UNITS, None])
            if path == "lectures/lecture06_scaling_rl.html":
                toc = page.locator("nav.bd-docs-nav a.reference").all_inner_texts()
                page.screenshot(path=str(ARTIFACTS / "site_lecture06.png"))

    assert not blocked, f"网站向外发了请求（都被拦下了）：{sorted(set(blocked))[:10]}"
    # 讲义和首页的公式都排好了版；讲义 06 的 7 张图、讲课 notebook 的输出图都在
    assert typeset["site/index.html"] >= 1
    assert typeset["lectures/lecture01_toy_llm.html"] >= 10 and typeset["lectures/lecture06_scaling_rl.html"] >= 100
    assert images["lectures/lecture06_scaling_rl.html"] >= 7
    assert images["notebooks/04_evaluation.html"] >= 3
    order = [next((i for i, head in enumerate(TOC_ORDER) if text.strip().startswith(head)), None) for text in toc]
    assert None not in order and order == sorted(order) and len(set(order)) == len(TOC_ORDER), (
        f"目录不是按上课顺序：{toc}")
