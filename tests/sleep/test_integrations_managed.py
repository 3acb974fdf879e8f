"""Edits to a person's files that an uninstall undoes byte for byte (sleep.integrations.managed)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sleep.integrations.managed import ManagedFile, records, records_dir

ORIGINAL = b"# mine\r\nkeep = 'this'  \n\n\n"  # odd bytes on purpose: CRLF, trailing blanks


def install(path: Path, data: bytes, owner: str = "test") -> ManagedFile:
    managed = ManagedFile(path, owner)
    managed.begin()
    managed.write(data)
    managed.finish()
    return managed


def drop_entry(current: bytes) -> bytes:
    return current.replace(b"ENTRY\n", b"")


def test_undo_gives_back_the_original_bytes_and_mode(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(ORIGINAL)
    target.chmod(0o640)
    install(target, ORIGINAL + b"ENTRY\n")
    assert target.read_bytes() == ORIGINAL + b"ENTRY\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # an edit keeps the file's mode

    outcome = ManagedFile(target, "test").undo(drop_entry)

    assert (outcome.action, target.read_bytes(), stat.S_IMODE(target.stat().st_mode)) == ("restored", ORIGINAL, 0o640)
    assert not list(records_dir().glob("*.json"))


def test_undo_deletes_a_file_that_did_not_exist_and_only_the_folders_it_created(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir(exist_ok=True)
    target = tmp_path / "home" / ".agents" / "skills" / "x" / "SKILL.md"
    install(target, b"skill\n")
    assert target.read_bytes() == b"skill\n"

    outcome = ManagedFile(target, "test").undo(lambda current: None)

    assert outcome.action == "deleted"
    assert not (tmp_path / "home" / ".agents").exists()
    assert (tmp_path / "home").is_dir()


def test_a_created_folder_that_holds_something_else_now_stays(tmp_path: Path) -> None:
    target = tmp_path / "skills" / "x" / "SKILL.md"
    install(target, b"skill\n")
    (tmp_path / "skills" / "other").mkdir()

    ManagedFile(target, "test").undo(lambda current: None)

    assert not (tmp_path / "skills" / "x").exists()
    assert (tmp_path / "skills" / "other").is_dir()


def test_a_second_install_keeps_the_bytes_from_before_the_first(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(ORIGINAL)
    install(target, ORIGINAL + b"ENTRY v1\n")
    install(target, ORIGINAL + b"ENTRY v2\n")

    assert ManagedFile(target, "test").undo(drop_entry).action == "restored"
    assert target.read_bytes() == ORIGINAL


def test_a_file_changed_after_the_install_loses_only_the_entry(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(ORIGINAL)
    install(target, ORIGINAL + b"ENTRY\n")
    target.write_bytes(ORIGINAL + b"ENTRY\nlater = 1\n")  # the person's own edit after the install

    outcome = ManagedFile(target, "test").undo(drop_entry)

    assert outcome.action == "removed-entry" and "your changes stay" in outcome.detail
    assert target.read_bytes() == ORIGINAL + b"later = 1\n"


def test_without_a_record_undo_removes_only_the_entry(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(b"a\nENTRY\nb\n")

    outcome = ManagedFile(target, "test").undo(drop_entry)

    assert (outcome.action, target.read_bytes()) == ("removed-entry", b"a\nb\n")
    assert "no install record" in outcome.detail


def test_a_file_without_the_entry_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(b"a\n")
    before = target.stat().st_mtime_ns

    assert ManagedFile(target, "test").undo(drop_entry).action == "unchanged"
    assert target.stat().st_mtime_ns == before


def test_a_file_deleted_after_the_install_is_not_brought_back(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(ORIGINAL)
    install(target, ORIGINAL + b"ENTRY\n")
    target.unlink()

    assert ManagedFile(target, "test").undo(drop_entry).action == "absent"
    assert not target.exists()


def test_a_symlinked_file_is_edited_where_it_points_and_the_link_stays(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "config.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_bytes(ORIGINAL)
    link = tmp_path / "codex" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(dotfiles)

    install(link, ORIGINAL + b"ENTRY\n")
    assert link.is_symlink() and dotfiles.read_bytes() == ORIGINAL + b"ENTRY\n"

    ManagedFile(link, "test").undo(drop_entry)
    assert link.is_symlink() and dotfiles.read_bytes() == ORIGINAL


def test_records_are_private_to_the_user(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(b'token = "secret"\n')
    install(target, b'token = "secret"\nENTRY\n')

    [record] = records_dir().glob("*.json")
    assert stat.S_IMODE(records_dir().stat().st_mode) == 0o700
    assert stat.S_IMODE(record.stat().st_mode) == 0o600


def test_an_undo_that_fails_keeps_the_file_and_the_record(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(ORIGINAL)
    install(target, ORIGINAL + b"ENTRY\n")
    target.write_bytes(b"changed, and now it does not parse\n")

    def cannot_parse(current: bytes) -> bytes:
        raise ValueError("does not parse")

    with pytest.raises(ValueError):
        ManagedFile(target, "test").undo(cannot_parse)
    assert target.read_bytes() == b"changed, and now it does not parse\n"
    assert ManagedFile(target, "test").original() == ORIGINAL


def test_records_lists_the_files_an_owner_changed(tmp_path: Path) -> None:
    install(tmp_path / "a.json", b"{}\n", owner="copilot-vscode")
    install(tmp_path / "b.json", b"{}\n", owner="copilot-cli")

    assert [m.path for m in records("copilot-vscode")] == [tmp_path / "a.json"]
    assert [m.path for m in records("copilot-cli")] == [tmp_path / "b.json"]


def test_an_install_records_the_original_before_it_writes(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(ORIGINAL)
    managed = ManagedFile(target, "test")
    managed.begin()  # a crash after this point still knows the original
    assert ManagedFile(target, "test").original() == ORIGINAL
    assert os.path.exists(managed.record_path)
