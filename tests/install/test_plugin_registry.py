"""Plugins by entry point, in process: distributions written as an installer
leaves them (modules + *.dist-info) on sys.path. What is found, when it is
imported, and what each way of getting the contract wrong says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillopt_core.backends import BackendConfigError, BackendSpec, _BACKENDS, available_backends, create_backend
from skillopt_core.envs import _ENVS, available_envs, create_env
from skillopt_core.tasks.judges import JudgeError, judge_types, validate_judge_spec
from skillopt_core.tasks.judges.spec import _JUDGES
from wheel_tools import write_distribution

REGISTRIES = (_BACKENDS, _ENVS, _JUDGES)


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """Install distributions into a folder on sys.path; afterwards forget them
    (entries, imported modules, the cached entry-point index)."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    before = {id(r): set(r._entries) for r in REGISTRIES}
    modules: list[str] = []
    for registry in REGISTRIES:
        registry.forget_plugins()

    def install(name, entry_points, sources):
        modules.extend(Path(f).stem for f in sources)
        write_distribution(site, name, entry_points, sources)
        for registry in REGISTRIES:
            registry.forget_plugins()

    yield install
    for registry in REGISTRIES:
        # Built-in modules imported meanwhile stay imported, so their entries stay too.
        for key in set(registry._entries) - before[id(registry)] - set(registry.builtin_modules):
            del registry._entries[key]
        registry.forget_plugins()
    for module in modules:
        sys.modules.pop(module, None)


ECHO = '''
from skillopt_core import Completion, register_backend

class Echo:
    name = "echo"
    model = "echo-1"
    def describe(self):
        return "echo"
    async def complete(self, request):
        return Completion(text=request.messages[-1].content)

def create(spec):
    return Echo()

@register_backend("echo-registered")
def create_registered(spec):
    return Echo()
'''


def test_plugin_names_are_listed_without_importing_the_plugin(plugins):
    plugins("demo-echo", {"skillopt.backends": {"echo": "demo_echo:create"}}, {"demo_echo.py": ECHO})
    assert "echo" in available_backends()
    assert "demo_echo" not in sys.modules


async def test_object_form_entry_point_is_adopted_as_the_factory(plugins):
    plugins("demo-echo", {"skillopt.backends": {"echo": "demo_echo:create"}}, {"demo_echo.py": ECHO})
    backend = create_backend(BackendSpec("echo", None))
    from skillopt_core import CompletionRequest

    assert (await backend.complete(CompletionRequest.single("hello"))).text == "hello"


def test_module_form_entry_point_registers_on_import(plugins):
    plugins("demo-echo", {"skillopt.backends": {"echo-registered": "demo_echo"}}, {"demo_echo.py": ECHO})
    assert create_backend(BackendSpec("echo_registered", None)).describe() == "echo"


def test_module_that_registers_nothing_is_an_error_naming_the_distribution(plugins):
    plugins("demo-echo", {"skillopt.backends": {"echo-other": "demo_echo"}}, {"demo_echo.py": ECHO})
    with pytest.raises(BackendConfigError) as info:
        create_backend(BackendSpec("echo-other", None))
    message = str(info.value)
    assert "of the package 'demo-echo' was imported but registered no backend named 'echo-other'" in message
    assert "register_backend('echo-other')" in message


def test_entry_point_naming_a_non_callable_is_an_error(plugins):
    plugins("demo-bad", {"skillopt.backends": {"bad": "demo_bad:VALUE"}}, {"demo_bad.py": "VALUE = 3\n"})
    with pytest.raises(BackendConfigError, match="cannot serve as a backend: it names a int, not a backend factory or class"):
        create_backend(BackendSpec("bad", None))


def test_broken_plugin_fails_once_and_the_same_way_again(plugins):
    plugins("demo-broken", {"skillopt.backends": {"broken": "demo_broken"}},
            {"demo_broken.py": "import no_such_dependency_xyz\n"})
    for _ in range(2):
        with pytest.raises(BackendConfigError) as info:
            create_backend(BackendSpec("broken", None))
        assert "package 'demo-broken'" in str(info.value)
        assert "ModuleNotFoundError: No module named 'no_such_dependency_xyz'" in str(info.value)


def test_broken_plugin_does_not_affect_other_names(plugins):
    plugins("demo-broken", {"skillopt.backends": {"broken": "demo_broken"}, "skillopt.envs": {"broken": "demo_broken"}},
            {"demo_broken.py": "raise RuntimeError('boom')\n"})
    assert create_backend(BackendSpec("scripted", None, options={"scripted": {"queue": ["x"]}})).name == "scripted"
    assert create_env("_template", {}).name == "_template"
    assert "demo_broken" not in sys.modules


def test_two_distributions_offering_one_name_is_an_error_naming_both(plugins):
    plugins("demo-a", {"skillopt.backends": {"twin": "demo_a:create"}}, {"demo_a.py": ECHO})
    plugins("demo-b", {"skillopt.backends": {"twin": "demo_b:create"}}, {"demo_b.py": ECHO})
    with pytest.raises(BackendConfigError, match=r"offered by 2 installed packages \(demo-a, demo-b\).*pip uninstall"):
        create_backend(BackendSpec("twin", None))


def test_builtin_name_wins_over_a_plugin(plugins):
    plugins("demo-shadow", {"skillopt.backends": {"scripted": "demo_shadow"}},
            {"demo_shadow.py": "raise RuntimeError('must never be imported')\n"})
    assert create_backend(BackendSpec("scripted", None, options={"scripted": {"queue": ["x"]}})).name == "scripted"
    assert "demo_shadow" not in sys.modules


def test_unknown_name_suggests_a_plugin_name(plugins):
    plugins("demo-echo", {"skillopt.backends": {"echo": "demo_echo:create"}}, {"demo_echo.py": ECHO})
    with pytest.raises(BackendConfigError, match=r"Unknown backend 'ecko'\. Did you mean 'echo'\? Known backends: .*echo"):
        create_backend(BackendSpec("ecko", None))


ENV = '''
from skillopt_core import PromptEnv, Task

class OneTask(PromptEnv):
    OPTIONS = {"word": "the word to ask for"}

    def read_tasks(self):
        word = self.options.get("word", "hi")
        return [Task(id="t1", prompt=f"Say {word}", judge={"type": "contains", "value": word})]
'''


def test_env_class_named_by_an_entry_point_gets_its_options_checked(plugins):
    plugins("demo-env", {"skillopt.envs": {"one-task": "demo_env:OneTask"}}, {"demo_env.py": ENV})
    assert "one_task" in available_envs()
    env = create_env("one-task", {"options": {"word": "pnpm"}})
    assert env.name == "one_task" and env.load_tasks()[0].prompt == "Say pnpm"
    with pytest.raises(ValueError, match="Env 'one_task' has no option 'wrd'. Did you mean 'word'?"):
        create_env("one_task", {"options": {"wrd": "x"}})


JUDGE = '''
from skillopt_core import Score, register_judge

class Always:
    async def score(self, task, response):
        return Score(1.0, 1.0, "Fine.")

@register_judge("always", {"reason": "why it always passes"})
def build(options, backend):
    return Always()

def undecorated(options, backend):
    return Always()
'''


def test_judge_plugin_is_validated_with_its_options_schema(plugins):
    plugins("demo-judge", {"skillopt.judges": {"always": "demo_judge:build"}}, {"demo_judge.py": JUDGE})
    assert "always" in judge_types()
    validate_judge_spec({"type": "always", "reason": "tests"})
    with pytest.raises(JudgeError, match="Judge 'always' has no option 'reasn'. Did you mean 'reason'?"):
        validate_judge_spec({"type": "always", "reasn": "tests"})


def test_judge_entry_point_without_register_judge_is_an_error(plugins):
    plugins("demo-judge", {"skillopt.judges": {"loose": "demo_judge:undecorated"}}, {"demo_judge.py": JUDGE})
    with pytest.raises(JudgeError, match=r"cannot serve as a judge type: a judge entry point must name .*@register_judge\('loose'"):
        validate_judge_spec({"type": "loose"})


def test_unknown_judge_type_lists_plugin_types(plugins):
    plugins("demo-judge", {"skillopt.judges": {"always": "demo_judge:build"}}, {"demo_judge.py": JUDGE})
    with pytest.raises(JudgeError, match=r"Unknown judge type 'alway'\. Did you mean 'always'\? Known types: .*always"):
        validate_judge_spec("alway")
