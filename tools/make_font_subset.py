"""
从 Debian 的 fonts-noto-cjk 里的 Noto Sans CJK SC Regular 做出 toyllm 自带的中文子集字体。

【思路】matplotlib 默认字体（DejaVu Sans）没有汉字，学生的电脑上也不一定装了中文字体，
    所以包里自带一个小字体：toyllm/fonts/ToyLLMSansSC-Regular.otf。完整的 Noto Sans CJK 有 6.5 万个字形，
    我们只留下画图会用到的字符：
        · ASCII、Latin-1、常用标点（含全角：，。、；：？！“”‘’（）《》【】…—·）
        · 希腊字母、箭头、数学符号（≥ ≤ ≈ × − → ∑ Δ π θ ε β μ ……）、上下标数字
        · GB2312 一级汉字（3755 个常用字）
        · 仓库里 *.py / *.ipynb / *.md 用到的所有非 ASCII 字符（源字体里有的）
    然后用 fontTools 的 subsetter 裁剪，并改名为 "ToyLLM Sans SC"（免得和系统里完整的 Noto 字体混淆）。

【用法】（需要 fonts-noto-cjk 和 fonttools）
    apt-get update && apt-get install -y fonts-noto-cjk
    .venv/bin/python tools/make_font_subset.py            # 重新生成 toyllm/fonts/ 下的字体
    .venv/bin/python tools/make_font_subset.py --check    # 只检查：现有字体是否和重新生成的逐字节相同

【边界】输出是确定的：同样的源字体 + 同样的 fontTools 版本 + 同样的仓库文字 → 同样的字节
    （head 表的时间戳固定为源字体的时间戳，不用当前时间）。本文件生成时用的是 fontTools 4.68.0、
    fonts-noto-cjk 1:20220127+repack1-1（Noto Sans CJK 2.004）。
"""

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
SOURCE_FAMILY = "Noto Sans CJK SC"          # .ttc 里按名字找 SC 这一款（Debian 12 上是第 2 号）
OUTPUT = ROOT / "toyllm" / "fonts" / "ToyLLMSansSC-Regular.otf"
FAMILY = "ToyLLM Sans SC"
PS_NAME = "ToyLLMSansSC-Regular"
FONTTOOLS_VERSION = "4.68.0"

TEXT_SUFFIXES = (".py", ".ipynb", ".md")
SKIP_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".ipynb_checkpoints", ".pytest_cache",
             ".hypothesis", "artifacts", "node_modules"}

PUNCTUATION = "，。、；：？！“”‘’（）《》【】…—·「」『』〈〉〔〕～￥・"
MATH = "≥≤≈≠≡∼×÷−±→←↑↓↔⇒⇐⇔∑∏∫∂∇∞∈∉∝√∀∃∧∨¬⌈⌉⌊⌋⋅∘°′″‰✓✗★☆●○■□▲△▼▽◆◇"


def is_cjk(ch):
    """这个字符是不是"中文用字"：汉字、中日韩标点、全角字符。test_plotstyle 用同一个定义检查字体。"""
    cp = ord(ch)
    return (0x3400 <= cp <= 0x4DBF or 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF   # 汉字
            or 0x3000 <= cp <= 0x303F or 0xFF00 <= cp <= 0xFFEF                          # 中文标点、全角
            or 0x2E80 <= cp <= 0x2FDF or 0x31C0 <= cp <= 0x31EF                          # 部首、笔画
            or 0x20000 <= cp <= 0x3134F)                                                 # 扩展 B 以后


def repo_text_files(root=ROOT):
    """
    仓库里的文本文件（*.py / *.ipynb / *.md）。

    【思路】优先问 git：已跟踪的文件 + 未被 .gitignore 忽略的新文件（还没提交的 notebook 也要算）。
        不在 git 仓库里（例如解压的源码包）时，就遍历目录，跳过 .venv 等。
    """
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=root, check=True, capture_output=True).stdout.decode("utf-8")
        paths = [root / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
            paths += [Path(folder) / f for f in files]
    return sorted(p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file())


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def repo_chars(root=ROOT):
    """仓库文本文件里出现的所有非 ASCII 字符（.ipynb 按 JSON 解析，所以 \\uXXXX 转义也算）。"""
    chars = set()
    for path in repo_text_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            try:
                text = "\n".join(_strings(json.loads(text)))
            except ValueError:
                pass
        chars.update(ch for ch in text if ord(ch) > 0x7E and ch.isprintable())
    chars.discard("\ufffd")
    return chars


def gb2312_level1():
    """GB2312 一级汉字：编码 0xB0A1–0xD7F9，共 3755 个。"""
    chars = []
    for hi in range(0xB0, 0xD8):
        for lo in range(0xA1, 0xFF):
            if (hi, lo) > (0xD7, 0xF9):
                break
            chars.append(bytes([hi, lo]).decode("gb2312"))
    assert len(chars) == 3755, len(chars)
    return chars


def wanted_codepoints(root=ROOT):
    """要放进子集的全部码位（排好序）。"""
    cps = set(range(0x20, 0x7F)) | set(range(0xA0, 0x100))                  # ASCII、Latin-1
    cps |= set(range(0x2010, 0x2028)) | set(range(0x2030, 0x2040))          # 破折号、引号、省略号、‰
    cps |= set(range(0x3000, 0x3040)) | set(range(0xFF01, 0xFF5F))          # 中文标点、全角 ASCII
    cps |= set(range(0x0391, 0x03CA)) | {0x03D1, 0x03D5, 0x03D6, 0x03F5}   # 希腊字母
    cps |= set(range(0x2070, 0x20A0))                                       # 上标、下标
    cps |= set(range(0x2190, 0x2200)) | set(range(0x2200, 0x2300))          # 箭头、数学运算符
    cps |= {ord(c) for c in PUNCTUATION + MATH}
    cps |= {ord(c) for c in gb2312_level1()}
    cps |= {ord(c) for c in repo_chars(root)}
    return sorted(cps)


def load_source(path=SOURCE):
    from fontTools.ttLib import TTCollection, TTFont
    if not path.exists():
        sys.exit(f"找不到源字体 {path}：请先 apt-get update && apt-get install -y fonts-noto-cjk")
    for number, face in enumerate(TTCollection(str(path), lazy=True).fonts):
        if face["name"].getDebugName(1) == SOURCE_FAMILY:
            return TTFont(str(path), fontNumber=number, recalcTimestamp=False), number
    sys.exit(f"{path} 里没有 {SOURCE_FAMILY}")


def rename(font, version):
    """改名为 ToyLLM Sans SC，保留版权、商标、许可证字段，并写明来源。"""
    name = font["name"]
    description = (f"Subset of {SOURCE_FAMILY} Regular {version} (Debian fonts-noto-cjk) made for toyllm "
                   f"with fontTools {FONTTOOLS_VERSION} by tools/make_font_subset.py.")
    for rec in list(name.names):
        if rec.nameID in (1, 4, 16):
            rec.string = FAMILY
        elif rec.nameID in (2, 17):
            rec.string = "Regular"
        elif rec.nameID == 3:
            rec.string = f"{version};TOYLLM;{PS_NAME}"
        elif rec.nameID == 6:
            rec.string = PS_NAME
    name.names = [r for r in name.names if r.nameID not in (16, 17, 18, 10)]
    name.setName(description, 10, 3, 1, 0x409)
    name.setName(description, 10, 1, 0, 0)
    if "CFF " in font:
        cff = font["CFF "].cff
        top = cff.topDictIndex[0]
        cff.fontNames = [PS_NAME]
        top.FullName = FAMILY
        top.FamilyName = FAMILY
        if hasattr(top, "CIDFontName"):
            top.CIDFontName = PS_NAME


def build(root=ROOT):
    """生成子集字体，返回 (字节, 码位数, 字形数, 缺少的码位)。"""
    import fontTools
    from fontTools import subset
    if fontTools.version != FONTTOOLS_VERSION:
        print(f"注意：生成时用的是 fontTools {FONTTOOLS_VERSION}，现在是 {fontTools.version}，字节可能不同",
              file=sys.stderr)
    font, number = load_source()
    version = font["name"].getDebugName(5).split(";")[0].replace("Version ", "")
    have = set(font.getBestCmap())
    wanted = wanted_codepoints(root)
    present = [cp for cp in wanted if cp in have]
    missing = [cp for cp in wanted if cp not in have]

    options = subset.Options()
    # 只留横排时 HarfBuzz 默认会用的特性（matplotlib >= 3.11 用 libraqm 排版）。不要 locl：它会带进日、韩、繁体的
    # 字形（字体大一倍），而 SC 字体的默认字形本来就是简体；竖排、全角/半角替换等也不要
    options.layout_features = ["ccmp", "mark", "mkmk", "rlig", "calt", "clig", "liga", "kern", "rclt"]
    options.hinting = False              # matplotlib 默认用 FreeType 自动微调（text.hinting），不用字体自带的 hint
    options.drop_tables += ["VORG", "vhea", "vmtx", "BASE", "DSIG"]
    options.name_IDs = ["*"]
    options.name_languages = [0x409, 0]   # 只留英文（Windows / Mac）名字
    options.notdef_outline = True
    options.recalc_timestamp = False
    options.recalc_bounds = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=present)
    subsetter.subset(font)
    rename(font, version)
    font.recalcTimestamp = False          # 保持源字体的 head.created / head.modified，输出才确定
    buf = io.BytesIO()
    font.save(buf)
    return buf.getvalue(), len(present), font["maxp"].numGlyphs, missing, number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="只检查现有字体是否是最新的，不写文件")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)

    data, n_chars, n_glyphs, missing, number = build()
    digest = hashlib.sha256(data).hexdigest()
    print(f"源字体：{SOURCE}（第 {number} 号 = {SOURCE_FAMILY}）")
    print(f"字符 {n_chars} 个，字形 {n_glyphs} 个，{len(data)} 字节，sha256 {digest}")
    if missing:
        from_repo = "".join(sorted(ch for ch in repo_chars() if ord(ch) in set(missing)))
        print(f"源字体里没有、因此没放进去的字符 {len(missing)} 个（多是成段加入的箭头、运算符；画图时由 DejaVu Sans 补上）"
              + (f"，其中仓库里用到的：{from_repo}" if from_repo else ""))
    if args.check:
        old = args.output.read_bytes() if args.output.exists() else b""
        if old != data:
            sys.exit(f"{args.output} 不是最新的：请运行 python tools/make_font_subset.py")
        print("字体是最新的。")
        return
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(data)
    print(f"已写入 {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")


if __name__ == "__main__":
    main()
