"""
断网的浏览器测试（tests/e2e/test_site.py、tests/e2e/test_voila.py）共用的小工具。

【思路】用 Debian 的 chromium（由 Python 版 Playwright 驱动，不运行 playwright install），启动参数和
    tests/e2e/test_browser.py 相同；每个页面的每个请求都经过 route：127.0.0.1 上的（本机的服务器）放行，
    其余的一律拦下并记进 blocked，测试最后断言 blocked 为空 —— "没有请求离开本机"。
"""

import shutil
import sys
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

from test_browser import CHROMIUM_ARGS, _unavailable


def require(command, extra):
    """
    检查断网浏览器测试要的东西：本环境里的命令行工具 command（例如 jupyter-book、voila）、chromium、playwright。

    【返回】command 的路径。缺了时跳过（TOYLLM_REQUIRE_BROWSER=1 时失败），说明怎么装。
    """
    exe = Path(sys.executable).parent / command
    if not exe.exists():
        _unavailable(f"没有安装 {command}（pip install -e '.[{extra}]'；make {extra} 会自动装）")
    if shutil.which("chromium") is None:
        _unavailable("找不到 chromium（Debian / Ubuntu：apt-get install -y chromium fonts-noto-cjk）")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("没有安装 playwright（pip install playwright；不需要 playwright install）")
    return exe


@contextmanager
def offline_context(blocked, viewport=(1300, 1000)):
    """
    启动 chromium，给出一个"断网"的浏览器上下文：发往 127.0.0.1 以外的请求都被拦下，网址记进 blocked（list）。
    """
    from playwright.sync_api import sync_playwright

    def route(r):
        if urllib.parse.urlsplit(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="zh-CN")
            context.route("**/*", route)
            yield context
            context.close()
        finally:
            browser.close()


OVERFLOW = """([areaSelector, unitSelector, clipSelector]) => {
    // 每个区域（areaSelector：输出区、markdown、网页正文……）里的每个单元（unitSelector：表格、文字、公式……）放不放得下：
    //   · 单元和它里面的元素向右伸出区域的右边界（overflow: hidden 的元素里面看不见的部分、只给读屏软件的元素不算）；
    //   · 或者单元里有要横向滚动才看得全的元素（scrollWidth > clientWidth：藏起来的部分学生看不见）；
    //   · 或者 clipSelector 的元素（例如小部件的标签）自己的文字被截断。
    // <pre> 和它里面的元素先改成不折行再量：折行的输出、代码也算放不下。
    // 从最里面的单元报告起（表格，而不是包着它的 div），包着已报告单元的单元不再报告。
    const pres = [...document.querySelectorAll('pre, pre *')];
    const saved = pres.map(p => p.style.whiteSpace);
    pres.forEach(p => { p.style.whiteSpace = 'pre'; });
    const extent = e => {                                    // [向右伸到哪里, 要横向滚动才看得见的宽度（没有时 0）]
        const style = getComputedStyle(e);
        if (style.display === 'none' || style.visibility === 'hidden') return [0, 0];
        if (style.position === 'absolute' && style.clip !== 'auto') return [0, 0];   // MathJax 给读屏软件的 MathML
        const r = e.getBoundingClientRect();
        const scrolls = (style.overflowX === 'auto' || style.overflowX === 'scroll') && e.scrollWidth > e.clientWidth + 1;
        let right = r.width ? r.right : 0, hidden = scrolls ? e.scrollWidth - e.clientWidth : 0;
        if (style.overflowX !== 'visible') return [right, hidden];
        for (const c of e.children) {
            const [cr, ch] = extent(c);
            right = Math.max(right, cr);
            hidden = Math.max(hidden, ch);
        }
        return [right, hidden];
    };
    const headings = [...document.querySelectorAll('h1, h2, h3, h4')];
    const cells = [...document.querySelectorAll('.jp-Cell')];
    const where = e => {
        const before = headings.filter(h => h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING || h.contains(e));
        const head = before.length ? before[before.length - 1].textContent.replace('¶', '').replace('#', '').trim() : '';
        const cell = e.closest('.jp-Cell');
        return (cell ? `第 ${cells.indexOf(cell)} 个单元格，` : '') + `「${head.slice(0, 24)}」`;
    };
    const found = [];
    for (const area of document.querySelectorAll(areaSelector)) {
        const box = area.getBoundingClientRect();
        if (!box.width) continue;
        const reported = [], here = [];
        for (const unit of [...area.querySelectorAll(unitSelector)].reverse()) {     // 里面的单元排在外面的前面
            if (reported.some(r => unit.contains(r))) continue;
            const clipped = !!clipSelector && unit.matches(clipSelector) && unit.scrollWidth > unit.clientWidth + 1;
            const [right, hidden] = extent(unit);
            if (right > box.right + 1 || hidden || clipped) {
                reported.push(unit);
                here.unshift({where: where(unit), what: unit.tagName.toLowerCase(), clipped,
                              text: (unit.textContent || '').replace(/\\s+/g, ' ').trim().slice(0, 40),
                              room: Math.round(clipped ? unit.clientWidth : box.width),
                              need: Math.round(clipped ? unit.scrollWidth : Math.max(right - box.left, box.width + hidden))});
            }
        }
        found.push(...here);
    }
    pres.forEach((p, k) => { p.style.whiteSpace = saved[k]; });
    return found;
}"""
"""在页面里运行一次（page.evaluate(OVERFLOW, [区域, 单元, 会截断文字的元素])）：放不下的单元的列表
{where: 哪个单元格 / 哪一节, what: 标签, text: 开头的字, room: 区域宽度, need: 它要的宽度, clipped: 文字被截断}。"""

UNITS = ("table, pre, p:not(td *, th *), li:not(td *, th *), img, svg, mjx-container:not(td *, th *), h1, h2, h3, h4, "
         ".highlight, .jp-RenderedHTMLCommon > *, .widget-label, .widget-readout, .widget-html-content, .widget-output, "
         ".jp-OutputArea-output > *")
"""要量的单元：表格（整张表算一个：格子里的文字不单独报告）、文字、公式、图、标题、代码块、小部件。"""


def too_wide(found):
    """OVERFLOW 的结果写成几行中文（测试失败时打印）。"""
    return "\n".join(f"  {f['where']}：{f['what']}「{f['text']}」"
                     + (f"的文字被截断（{f['need']} 像素的字放在 {f['room']} 像素里）" if f["clipped"]
                        else f"要 {f['need']} 像素，只有 {f['room']} 像素") for f in found)
