"""A catalog is read from a JSON copy in the user's cache folder when the copy is of the same
bytes (reading the Chinese catalog's lines was a third of `--help` in Chinese); an edited
catalog, a damaged copy or a cache folder that cannot be written never shows a wrong text."""

import json
import os
import pathlib

import pytest

from agentdbg import i18n

PO = ('msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=1; plural=0;\\n"\n\n'
      'msgid "model: "\nmsgstr "模型："\n\n'
      'msgctxt "help"\nmsgid "Usage:"\nmsgstr "用法："\n')


@pytest.fixture
def locale(tmp_path, monkeypatch):
    folder = tmp_path / "locale"
    folder.mkdir()
    (folder / "zh.po").write_text(PO, encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALE_DIR", folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    i18n.catalog.cache_clear()
    yield folder
    i18n.catalog.cache_clear()
    i18n.use(None)


def copies(tmp_path):
    folder = tmp_path / "cache" / "agentdbg"
    return sorted(folder.glob("catalog-zh-*.json")) if folder.is_dir() else []


def read_again(lang="zh"):
    i18n.catalog.cache_clear()
    i18n.use(lang)


def test_the_second_read_comes_from_the_copy(locale, tmp_path):
    read_again()
    assert i18n._("model: ") == "模型：" and i18n.pgettext("help", "Usage:") == "用法："
    [copy] = copies(tmp_path)
    rows = json.loads(copy.read_bytes())
    rows = [[c, m, ["从副本读出"] if m == "model: " else s] for c, m, s in rows]
    copy.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    read_again()
    assert i18n._("model: ") == "从副本读出"          # what the copy says: it was read
    assert i18n.pgettext("help", "Usage:") == "用法："


def test_an_edited_catalog_is_read_again_and_its_old_copy_dropped(locale, tmp_path):
    read_again()
    [old] = copies(tmp_path)
    (locale / "zh.po").write_text(PO.replace("模型：", "模型名："), encoding="utf-8")
    read_again()
    assert i18n._("model: ") == "模型名："
    [new] = copies(tmp_path)
    assert new != old and not old.exists()


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"a": 1}', b"[[null, 5, []]]",
                                    b'[[null, "model: ", ["x", 3]]]', b'[["a", "b"]]', b"\xff\xfe"])
def test_a_damaged_copy_is_replaced_not_believed(locale, tmp_path, damage):
    read_again()
    [copy] = copies(tmp_path)
    copy.write_bytes(damage)
    read_again()
    assert i18n._("model: ") == "模型：" and i18n.pgettext("help", "Usage:") == "用法："
    assert json.loads(copy.read_bytes())     # written again, whole


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_cache_folder_that_cannot_be_written_only_costs_the_reading(locale, tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache").chmod(0o500)
    try:
        read_again()
        assert i18n._("model: ") == "模型："
        assert copies(tmp_path) == []
    finally:
        (tmp_path / "cache").chmod(0o700)


def test_a_cache_path_that_is_a_file_only_costs_the_reading(locale, tmp_path):
    (tmp_path / "cache").write_text("not a folder")
    read_again()
    assert i18n._("model: ") == "模型："


def test_no_home_folder_only_costs_the_reading(locale, monkeypatch):
    def no_home(cls):
        raise RuntimeError("Could not determine home directory.")   # what pathlib says

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(pathlib.Path, "home", classmethod(no_home))
    read_again()
    assert i18n._("model: ") == "模型："
