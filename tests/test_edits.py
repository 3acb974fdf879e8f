"""Specification of skillopt_core.skill.edits: the Edit value and apply_edits."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillopt_core.skill.edits import Edit, EditResult, apply_edits
from skillopt_core.skill.document import Skill

SKILL_TEXT = """---
name: pnpm-helper
description: Use pnpm.
---
# pnpm helper

## Rules
- Use npm.
- Run the tests before committing.

<!-- skillopt:protected name="core" -->
Never push to main.
<!-- /skillopt:protected -->

## Notes

Old advice.

## End
"""


@pytest.fixture
def skill() -> Skill:
    return Skill.parse(SKILL_TEXT)


def apply_one(skill: Skill, edit: Edit) -> tuple[str, str, str]:
    result = apply_edits(skill, [edit])
    (outcome,) = result.outcomes
    return outcome.status, outcome.detail, result.skill.body


# --- Edit value -----------------------------------------------------------------


def test_edit_rejects_unknown_op():
    with pytest.raises(ValueError, match="add, delete, replace"):
        Edit(op="rewrite")  # type: ignore[arg-type]


def test_edit_key_merges_whitespace_variants():
    a = Edit("replace", target="Use  npm.\n", content="Use pnpm.", rationale="one")
    b = Edit("replace", target="Use npm.", content=" Use\tpnpm. ", rationale="two")
    assert a.key() == b.key()
    assert a.key() != Edit("replace", target="Use npm.", content="Use yarn.").key()


def test_edit_key_ignores_fields_the_op_does_not_use():
    assert Edit("delete", target="x", content="ignored").key() == Edit("delete", target="x").key()


def test_edit_dict_roundtrip():
    edit = Edit("add", content="- Use pnpm.", rationale="users asked", anchor="## Rules")
    assert Edit.from_dict(edit.to_dict()) == edit


def test_from_dict_accepts_op_case_insensitively():
    assert Edit.from_dict({"op": " Delete ", "target": "x"}).op == "delete"


def test_from_dict_rejects_bad_op():
    with pytest.raises(ValueError, match="unknown edit op 'rewrite'"):
        Edit.from_dict({"op": "rewrite", "target": "x"})


def test_from_dict_rejects_missing_op():
    with pytest.raises(ValueError, match="missing 'op'"):
        Edit.from_dict({"target": "x"})


def test_from_dict_rejects_missing_required_field():
    with pytest.raises(ValueError, match="replace edit is missing 'content'.*got keys: op, target"):
        Edit.from_dict({"op": "replace", "target": "x"})


def test_from_dict_rejects_non_string_field():
    with pytest.raises(ValueError, match="'content' must be a string"):
        Edit.from_dict({"op": "add", "content": 3})


# --- apply_edits ------------------------------------------------------------------


def test_add_appends(skill):
    status, detail, body = apply_one(skill, Edit("add", content="Check the lockfile."))
    assert status == "applied"
    assert body == skill.body + "Check the lockfile.\n"
    assert "appended 1 line" in detail


def test_add_appends_on_a_new_line_when_body_lacks_final_newline():
    status, _, body = apply_one(Skill.parse("last line"), Edit("add", content="new"))
    assert status == "applied"
    assert body == "last line\nnew\n"


def test_add_after_anchor(skill):
    status, _, body = apply_one(skill, Edit("add", content="- Use pnpm.", anchor="## Rules"))
    assert status == "applied"
    assert "## Rules\n- Use pnpm.\n- Use npm.\n" in body


def test_add_after_mid_line_anchor_goes_after_that_line(skill):
    _, _, body = apply_one(skill, Edit("add", content="- Lint first.", anchor="Run the tests"))
    assert "- Run the tests before committing.\n- Lint first.\n" in body


def test_add_after_protected_closing_marker_is_allowed(skill):
    edit = Edit("add", content="After the block.", anchor="Never push to main.\n<!-- /skillopt:protected -->")
    status, _, body = apply_one(skill, edit)
    assert status == "applied"
    assert "<!-- /skillopt:protected -->\nAfter the block.\n" in body


def test_add_with_anchor_inside_protected_block_is_refused(skill):
    status, detail, body = apply_one(skill, Edit("add", content="x", anchor="Never push"))
    assert status == "protected_region"
    assert '"core"' in detail and "line 11" in detail
    assert body == skill.body


def test_delete(skill):
    status, detail, body = apply_one(skill, Edit("delete", target="- Use npm."))
    assert status == "applied"
    assert "## Rules\n- Run the tests before committing.\n" in body
    assert "line 8" in detail


def test_delete_leaves_at_most_one_blank_line(skill):
    status, _, body = apply_one(skill, Edit("delete", target="## Notes\n\nOld advice."))
    assert status == "applied"
    assert "<!-- /skillopt:protected -->\n\n## End\n" in body
    assert "\n\n\n" not in body


def test_delete_at_end_leaves_no_trailing_blank_lines():
    _, _, body = apply_one(Skill.parse("keep\n\ndrop me\n"), Edit("delete", target="drop me"))
    assert body == "keep\n"


def test_replace(skill):
    status, detail, body = apply_one(skill, Edit("replace", target="- Use npm.", content="- Use pnpm."))
    assert status == "applied"
    assert "- Use pnpm.\n- Run the tests" in body
    assert "- Use npm." not in body
    assert "replaced" in detail


def test_replace_keeps_the_targets_line_break(skill):
    _, _, body = apply_one(skill, Edit("replace", target="- Use npm.\n", content="- Use pnpm."))
    assert "- Use pnpm.\n- Run the tests" in body


def test_replace_with_empty_content_deletes(skill):
    status, _, body = apply_one(skill, Edit("replace", target="- Use npm.", content=""))
    assert status == "applied"
    assert "## Rules\n- Run the tests" in body


def test_edits_never_touch_front_matter(skill):
    result = apply_edits(skill, [Edit("replace", target="pnpm-helper", content="x")])
    assert result.outcomes[0].status == "target_not_found"
    assert result.skill.render().startswith("---\nname: pnpm-helper\n")


def test_target_not_found(skill):
    status, detail, body = apply_one(skill, Edit("delete", target="- Use yarn."))
    assert status == "target_not_found"
    assert "- Use npm." in detail  # the closest line, to help the next attempt
    assert body == skill.body


def test_ambiguous_target(skill):
    status, detail, body = apply_one(skill, Edit("replace", target="## ", content="### "))
    assert status == "ambiguous_target"
    assert "occurs 3 times (lines 7, 15, 19)" in detail and "quote more" in detail
    assert body == skill.body


def test_ambiguous_anchor(skill):
    status, _, _ = apply_one(skill, Edit("add", content="x", anchor="##"))
    assert status == "ambiguous_target"


def test_protected_region_refused(skill):
    status, detail, body = apply_one(skill, Edit("delete", target="Never push to main."))
    assert status == "protected_region"
    assert "protected" in detail
    assert body == skill.body


def test_target_straddling_protected_marker_refused(skill):
    edit = Edit("delete", target="committing.\n\n<!-- skillopt:protected")
    assert apply_one(skill, edit)[0] == "protected_region"


def test_content_with_protected_marker_refused(skill):
    edit = Edit("add", content="<!-- skillopt:protected -->\nmine\n<!-- /skillopt:protected -->")
    assert apply_one(skill, edit)[0] == "protected_region"


@pytest.mark.parametrize(
    "edit, needle",
    [
        (Edit("add", content="  \n"), "no content"),
        (Edit("add", content="- Use npm.\n"), "already present"),
        (Edit("delete", target=""), "no target"),
        (Edit("replace", target=" ", content="x"), "no target"),
        (Edit("replace", target="- Use npm.", content="- Use npm."), "identical"),
    ],
)
def test_no_op_outcomes(skill, edit, needle):
    status, detail, body = apply_one(skill, edit)
    assert status == "no_op"
    assert needle in detail
    assert body == skill.body


def test_whitespace_insensitive_match(skill):
    status, detail, body = apply_one(skill, Edit("replace", target="Run  the\ntests before", content="Run the tests after"))
    assert status == "applied"
    assert "whitespace-insensitive" in detail
    assert "- Run the tests after committing.\n" in body


def test_outcomes_one_per_edit_in_order(skill):
    edits = [
        Edit("replace", target="- Use npm.", content="- Use pnpm."),
        Edit("delete", target="- Use npm."),  # gone after the first edit: sequential
        Edit("delete", target="Never push to main."),
        Edit("add", content="- Use pnpm."),
    ]
    result = apply_edits(skill, edits)
    assert [o.edit for o in result.outcomes] == edits
    assert [o.status for o in result.outcomes] == ["applied", "target_not_found", "protected_region", "no_op"]
    assert result.applied_count == 1
    assert all(o.detail for o in result.outcomes)


def test_result_changed_is_false_when_edits_cancel(skill):
    result = apply_edits(skill, [Edit("add", content="temp line"), Edit("delete", target="temp line")])
    assert result.applied_count == 2
    assert not result.changed
    assert isinstance(result, EditResult)


def test_result_changed_is_true_after_an_applied_edit(skill):
    assert apply_edits(skill, [Edit("delete", target="Old advice.")]).changed


def test_apply_edits_is_pure(skill):
    before = skill.render()
    apply_edits(skill, [Edit("delete", target="Old advice.")])
    assert skill.render() == before


def test_crlf_body_keeps_its_line_endings():
    skill = Skill.parse("a\r\nb\r\n")
    _, _, body = apply_one(skill, Edit("add", content="c\nd", anchor="a"))
    assert body == "a\r\nc\r\nd\r\nb\r\n"


# --- property --------------------------------------------------------------------


def _fragments() -> st.SearchStrategy[str]:
    """Text that often hits the body (slices of it) and sometimes does not."""
    body = Skill.parse(SKILL_TEXT).body
    slices = st.tuples(st.integers(0, len(body)), st.integers(0, 40)).map(lambda t: body[t[0] : t[0] + t[1]])
    return st.one_of(slices, st.text(max_size=30), st.sampled_from(["", "\n", "<!-- /skillopt:protected -->"]))


_edits = st.builds(
    Edit,
    op=st.sampled_from(["add", "delete", "replace"]),
    target=_fragments(),
    content=_fragments(),
    anchor=st.one_of(st.none(), _fragments()),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(st.lists(_edits, max_size=6))
def test_apply_edits_never_raises_and_returns_one_outcome_per_edit(edits):
    skill = Skill.parse(SKILL_TEXT)
    result = apply_edits(skill, edits)
    assert len(result.outcomes) == len(edits)
    assert result.skill.protected_block("core") == "Never push to main."
    assert result.skill.front_matter == skill.front_matter
    assert Skill.parse(result.skill.render()) == result.skill
