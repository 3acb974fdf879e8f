"""Pi (the ``pi`` coding agent, npm ``@mariozechner/pi-coding-agent``): sessions under
``$PI_CODING_AGENT_DIR/sessions`` (default ``~/.pi/agent``; ``$PI_CODING_AGENT_SESSION_DIR``
names the sessions folder itself), one JSONL file per session
(:mod:`sleep.harvest.sources.pi`; the package's ``docs/session-format.md`` and the files
pi 0.73.1 writes, docs/genuine-files.md). Skills: ``.pi/skills`` and ``.agents/skills`` in the
project, ``~/.pi/agent/skills`` and ``~/.agents/skills`` (the package's ``docs/skills.md``,
"Locations"). Pi has no MCP support by design (its README: "No MCP"), so there is nothing
to integrate. Replayed with ``pi -p --mode json`` (the ``pi`` backend,
:mod:`skillopt_core.backends.pi`)."""

from sleep.hosts.host import Home, Host, Mcp, Skills, Source, Watch

HOME = Home("PI_CODING_AGENT_DIR", {"*": ".pi/agent"}, flag="--pi-home", label="Pi agent folder")
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="pi",
    label="Pi",
    sources=(Source("pi", "sleep.harvest.sources.pi:PiSource", HOME,
                    watch=(Watch("sessions", names=("*.jsonl",)),)),),
    replay="pi",
    ready="sleep.hosts.ready:pi",
    skills=Skills(project=(".pi/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills"))),
    mcp=Mcp(),
)
