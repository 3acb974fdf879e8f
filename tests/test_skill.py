"""Specification of skillopt_core.skill.document: parsing, rendering, protected regions, files."""

from __future__ import annotations

import dataclasses
import os
import stat

import pytest

from skillopt_core.skill.document import (
    Skill,
    SkillParseError,
    load_skill,
    save_skill,
    split_front_matter,
    validate_skill_metadata,
)

SKILL_TEXT = """---
name: pnpm-helper  # the folder name
description: "Use pnpm in this repository: install, test, build."
license: MIT
---
# pnpm helper

Always use pnpm.

<!-- skillopt:protected name="slow-update" -->
Prefer small commits.
<!-- /skillopt:protected -->
"""


def test_parse_roundtrip_with_front_matter():
    skill = Skill.parse(SKILL_TEXT)
    assert skill.front_matter["name"] == "pnpm-helper"
    assert skill.body.startswith("# pnpm helper\n")
    assert skill.render() == SKILL_TEXT
    assert Skill.parse(skill.render()) == skill


def test_parse_preserves_front_matter_key_order():
    skill = Skill.parse("---\nzeta: 1\nalpha: 2\nmid: 3\n---\nbody\n")
    assert list(skill.front_matter) == ["zeta", "alpha", "mid"]


def test_render_without_front_matter_returns_body_unchanged():
    text = "# Title\n\n- one\n- two"
    skill = Skill.parse(text)
    assert skill.front_matter == {}
    assert skill.render() == text


def test_render_of_new_front_matter_roundtrips():
    skill = Skill(front_matter={"name": "x", "description": "a: b # c", "metadata": {"k": "v"}}, body="Body\n")
    assert Skill.parse(skill.render()) == skill


def test_render_of_body_starting_with_fence_roundtrips():
    skill = Skill(front_matter={}, body="---\nnot: front matter\n---\ntext\n")
    assert Skill.parse(skill.render()) == skill


def test_changed_front_matter_is_rendered_from_the_dict():
    skill = Skill.parse(SKILL_TEXT)
    changed = dataclasses.replace(skill, front_matter={**skill.front_matter, "name": "other"})
    assert "name: other" in changed.render()
    assert Skill.parse(changed.render()).front_matter["name"] == "other"


def test_crlf_text_roundtrips_exactly():
    text = SKILL_TEXT.replace("\n", "\r\n")
    skill = Skill.parse(text)
    assert skill.front_matter["license"] == "MIT"
    assert skill.render() == text


def test_parse_reports_bad_yaml_line():
    text = "---\nname: ok\ndescription: broken: value\n---\nbody\n"
    with pytest.raises(SkillParseError) as info:
        Skill.parse(text, source="skills/x/SKILL.md")
    assert info.value.line == 3
    assert "skills/x/SKILL.md:3" in str(info.value)
    assert "quote" in str(info.value)


def test_parse_rejects_front_matter_that_is_not_a_mapping():
    with pytest.raises(SkillParseError, match="mapping"):
        Skill.parse("---\n- a\n- b\n---\nbody\n")


def test_split_front_matter_returns_mapping_and_body_exactly_as_parse_does():
    meta, body = split_front_matter(SKILL_TEXT)
    skill = Skill.parse(SKILL_TEXT)
    assert meta == skill.front_matter and body == skill.body


def test_split_front_matter_without_front_matter_returns_the_text():
    assert split_front_matter("# Title\n---\nname: x\n---\n") == (None, "# Title\n---\nname: x\n---\n")


def test_split_front_matter_does_not_check_protected_markers():
    meta, body = split_front_matter("---\nname: x\n---\n<!-- skillopt:protected -->\nunclosed\n")
    assert meta == {"name": "x"} and body.endswith("unclosed\n")


def test_split_front_matter_rejects_bad_yaml_naming_the_source():
    with pytest.raises(SkillParseError, match=r"the skill to install:\d+: front matter is not valid YAML"):
        split_front_matter("---\nname: [x\n---\nbody\n", source="the skill to install")


def test_parse_rejects_unclosed_front_matter():
    with pytest.raises(SkillParseError, match="never closed") as info:
        Skill.parse("---\nname: x\n# body without closing fence\n")
    assert info.value.line == 1


def test_unclosed_protected_marker_is_error():
    text = "---\nname: x\n---\nintro\n<!-- skillopt:protected -->\nkeep\n"
    with pytest.raises(SkillParseError, match="never closed") as info:
        Skill.parse(text, source="S.md")
    assert info.value.line == 5
    assert "S.md:5" in str(info.value)


def test_stray_closing_marker_is_error():
    with pytest.raises(SkillParseError, match="no opening marker") as info:
        Skill.parse("a\nb\n<!-- /skillopt:protected -->\n")
    assert info.value.line == 3


def test_nested_protected_marker_is_error():
    text = "<!-- skillopt:protected -->\n<!-- skillopt:protected -->\nx\n<!-- /skillopt:protected -->\n"
    with pytest.raises(SkillParseError, match="cannot nest"):
        Skill.parse(text)


def test_duplicate_block_name_is_error():
    block = '<!-- skillopt:protected name="a" -->\nx\n<!-- /skillopt:protected -->\n'
    with pytest.raises(SkillParseError, match="already used"):
        Skill.parse(block + block)


def test_unknown_marker_attribute_is_error():
    with pytest.raises(SkillParseError, match="unrecognised"):
        Skill.parse("<!-- skillopt:protected owner=me -->\nx\n<!-- /skillopt:protected -->\n")


def test_with_body_validates_markers():
    with pytest.raises(SkillParseError):
        Skill.parse("text\n").with_body("<!-- skillopt:protected -->\n")


def test_hash_changes_with_content():
    skill = Skill.parse(SKILL_TEXT)
    assert skill.hash == Skill.parse(SKILL_TEXT).hash
    assert len(skill.hash) == 64
    assert skill.with_body(skill.body + "more\n").hash != skill.hash


def test_name_reads_front_matter():
    assert Skill.parse(SKILL_TEXT).name == "pnpm-helper"
    assert Skill.parse("no front matter").name is None


def test_protected_spans_include_markers():
    skill = Skill.parse(SKILL_TEXT)
    (start, end), = skill.protected_spans()
    span = skill.body[start:end]
    assert span.startswith('<!-- skillopt:protected name="slow-update" -->')
    assert span.endswith("<!-- /skillopt:protected -->")


def test_protected_block_returns_inner_text():
    skill = Skill.parse(SKILL_TEXT)
    assert skill.protected_block("slow-update") == "Prefer small commits."
    assert skill.protected_block("missing") is None


def test_set_protected_block_replaces_and_appends():
    skill = Skill.parse(SKILL_TEXT)
    replaced = skill.set_protected_block("slow-update", "Line one.\nLine two.")
    assert replaced.protected_block("slow-update") == "Line one.\nLine two."
    assert "Prefer small commits." not in replaced.body
    assert replaced.body.startswith("# pnpm helper\n\nAlways use pnpm.\n")
    appended = replaced.set_protected_block("meta", "Notes.")
    assert appended.protected_block("meta") == "Notes."
    assert appended.body.endswith('\n\n<!-- skillopt:protected name="meta" -->\nNotes.\n<!-- /skillopt:protected -->\n')
    assert appended.front_matter == skill.front_matter


def test_set_protected_block_rejects_marker_in_content():
    with pytest.raises(ValueError, match="marker"):
        Skill.parse(SKILL_TEXT).set_protected_block("x", "<!-- /skillopt:protected -->")


def test_validate_skill_metadata_accepts_valid_skill():
    assert validate_skill_metadata(Skill.parse(SKILL_TEXT), folder_name="pnpm-helper") == []


@pytest.mark.parametrize("name", ["-lead", "trail-", "dou--ble", "Upper", "a" * 65, ""])
def test_validate_skill_metadata_rejects_bad_names(name):
    skill = Skill(front_matter={"name": name, "description": "Does things."}, body="")
    problems = validate_skill_metadata(skill)
    assert len(problems) == 1 and "'name'" in problems[0]


def test_validate_skill_metadata_reports_missing_and_long_description():
    missing = validate_skill_metadata(Skill(front_matter={"name": "ok"}, body=""))
    long = validate_skill_metadata(Skill(front_matter={"name": "ok", "description": "x" * 1025}, body=""))
    assert any("no 'description'" in p for p in missing)
    assert any("1024" in p for p in long)


def test_validate_skill_metadata_checks_folder_name():
    problems = validate_skill_metadata(Skill.parse(SKILL_TEXT), folder_name="other")
    assert problems == ["'name' 'pnpm-helper' must equal the skill's folder name 'other'"]


def test_save_then_load_roundtrips(tmp_path):
    path = tmp_path / "skills" / "pnpm-helper" / "SKILL.md"
    skill = Skill.parse(SKILL_TEXT)
    save_skill(skill, path)
    assert path.read_text(encoding="utf-8") == SKILL_TEXT
    assert load_skill(path) == skill
    assert [p.name for p in path.parent.iterdir()] == ["SKILL.md"]


def test_save_keeps_existing_permissions(tmp_path):
    path = tmp_path / "SKILL.md"
    path.write_text("old\n")
    os.chmod(path, 0o640)
    save_skill(Skill.parse("new\n"), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_text() == "new\n"


def test_load_missing_file_names_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="skill file not found: .*nope.md"):
        load_skill(tmp_path / "nope.md")


def test_load_directory_says_to_pass_the_file(tmp_path):
    with pytest.raises(IsADirectoryError, match="SKILL.md"):
        load_skill(tmp_path)


def test_load_non_utf8_file_is_parse_error(tmp_path):
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(SkillParseError, match="UTF-8"):
        load_skill(path)


def test_load_reports_bad_yaml_with_path(tmp_path):
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: [unclosed\n---\nbody\n")
    with pytest.raises(SkillParseError) as info:
        load_skill(path)
    assert str(path) in str(info.value)


def test_public_names_import_from_the_package_root() -> None:
    import skillopt_core

    for name in skillopt_core.__all__:
        assert getattr(skillopt_core, name) is not None, name
